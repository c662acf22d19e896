#!/usr/bin/env bash
# Collects what `napisim import-host --from DIR` reads (the layout of sim/hostimport/host_import.hpp,
# docs/import-and-tune.md), on a Linux host that need not have napisim: bash and coreutils, plus
# lstopo (Debian: hwloc), ethtool and the kernel's ynl where installed. Run it as root for every
# /proc/irq file; copy DIR to where napisim runs.
#
# Usage: tools/collect-host.sh DIR [DEV...]   (default: every device with a bus device)
set -u
[ $# -ge 1 ] || { echo "usage: $0 DIR [DEV...]" >&2; exit 2; }
dir=$1
shift
mkdir -p "$dir" || exit 2

# put FILE TEXT: writes TEXT (what a command printed) as DIR/FILE.
put() { mkdir -p "$(dirname "$dir/$1")" && printf '%s\n' "$2" > "$dir/$1"; }
# copy SRC NAME: a file the kernel may refuse to read (speed of a link that is down) is left out.
copy() {
  local v
  if v=$(cat "$1" 2> /dev/null); then put "$2" "$v"; fi
}

if command -v lstopo > /dev/null; then
  lstopo --of xml > "$dir/topology.xml" || echo "collect-host: lstopo failed" >&2
else
  echo "collect-host: lstopo not found (Debian: apt-get install hwloc); no topology.xml" >&2
fi
copy /proc/interrupts proc/interrupts
for irq in /proc/irq/[0-9]*; do
  n=${irq##*/}
  copy "$irq/smp_affinity_list" "proc/irq/$n/smp_affinity_list"
  copy "$irq/effective_affinity_list" "proc/irq/$n/effective_affinity_list"
done
for s in netdev_budget netdev_budget_usecs dev_weight busy_poll busy_read netdev_max_backlog gro_normal_batch \
         rps_sock_flow_entries; do
  copy "/proc/sys/net/core/$s" "proc/sys/net/core/$s"
done
copy /proc/sys/kernel/osrelease proc/sys/kernel/osrelease
copy "/boot/config-$(uname -r)" boot/config

devs=("$@")
if [ ${#devs[@]} -eq 0 ]; then
  for d in /sys/class/net/*; do
    [ -e "$d/device" ] && devs+=("${d##*/}")
  done
fi
for dev in "${devs[@]}"; do
  sys=/sys/class/net/$dev
  [ -d "$sys" ] || { echo "collect-host: no device $dev" >&2; continue; }
  mkdir -p "$dir/net/$dev"
  target=$(readlink "$sys/device") && put "net/$dev/device" "${target##*/}"
  copy "$sys/device/numa_node" "net/$dev/numa_node"
  for a in threaded napi_defer_hard_irqs gro_flush_timeout speed ifindex; do
    copy "$sys/$a" "net/$dev/$a"
  done
  copy "$sys/queues/rx-0/rps_cpus" "net/$dev/rps_cpus"
  if command -v ethtool > /dev/null; then
    for o in l g c; do
      if v=$(ethtool "-$o" "$dev" 2> /dev/null); then put "net/$dev/ethtool-$o" "$v"; fi
    done
  fi
done
command -v ethtool > /dev/null || echo "collect-host: ethtool not found; no queue, ring or coalescing settings" >&2
if command -v ynl > /dev/null; then
  ynl --family netdev --dump napi-get --output-json > "$dir/napi-get.json" 2> /dev/null || rm -f "$dir/napi-get.json"
fi
echo "collect-host: wrote $dir" >&2

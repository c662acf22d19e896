#!/usr/bin/env bash
# Records, or compares with a recording, napisim's output for a fixed set of short runs: every
# scenario in scenarios/ (20 ms after a 5 ms warm-up), each with kernel.idle_polling on and off,
# and a NIC stream whose 64-slot rings drop and retransmit. What is kept is the JSON result minus
# its "context" (build, git sha), trajectory fingerprint and event count included, so a change
# meant to leave behaviour alone (a speed-up, a refactoring) is checked byte for byte.
#
#   tools/snapshot.sh record DIR     before the change (e.g. on main's build)
#   tools/snapshot.sh compare DIR    after it: names every run whose output differs (exit 1)
#   tools/snapshot.sh compare-results DIR
#                                    the same, leaving out the trajectory (event count and
#                                    fingerprint): for a change that removes events whose work can be
#                                    done later without anyone seeing a difference
#
# NAPISIM_BUILD_DIR picks the build (default build/), which is built first if needed;
# NAPISIM_BIN=PATH runs that napisim binary instead, unbuilt (a copy kept from before the change).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NAPISIM_BUILD_DIR:-$root/build}
mode=${1:-}
dir=${2:-}
if [[ "$mode" != record && "$mode" != compare && "$mode" != compare-results ]] || [ -z "$dir" ]; then
  echo "usage: tools/snapshot.sh record|compare|compare-results DIR" >&2
  exit 2
fi
if [ -n "${NAPISIM_BIN:-}" ]; then
  bin=$(realpath "$NAPISIM_BIN")
else
  "$root/tools/build.sh" >/dev/null
  bin=$build/napisim
fi
cd "$root"

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cat >"$out/stream_nic.scenario" <<'EOF'
{"name": "snapshot/stream_nic", "warmup_s": 0.005, "duration_s": 0.02,
 "topology": {"numa_nodes": 1, "llcs_per_node": 1, "cores_per_llc": 4, "threads_per_core": 2},
 "nics": [{"queues": 2, "irq_affinity": "0-1", "speed_gbps": 100, "ring_size": 64}],
 "platform": {"clients": [{"link_gbps": 100}]},
 "models": [{"name": "napi_irq"}],
 "workload": {"type": "stream", "params": {}}}
EOF

# One run: output file name, scenario, extra arguments.
run() {
  local name=$1 scenario=$2
  shift 2
  if ! "$bin" run "$scenario" --set warmup_s=0.005 --set duration_s=0.02 "$@" --format json \
      >"$out/$name.raw" 2>"$out/$name.err"; then
    echo "snapshot: $scenario $* failed:" >&2
    cat "$out/$name.err" >&2
    return 1
  fi
  /usr/bin/python3 -c '
import json, sys
r = json.load(open(sys.argv[1])); r.pop("context", None)
open(sys.argv[2], "w").write(json.dumps(r, sort_keys=True) + "\n")' "$out/$name.raw" "$out/$name.json"
  rm -f "$out/$name.raw" "$out/$name.err"
}

jobs_max=$(nproc)
pids=()
launch() {
  run "$@" &
  pids+=($!)
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do sleep 0.05; done
}
while IFS= read -r f; do
  name=$(echo "${f#scenarios/}" | sed 's|\.json$||; s|/|_|g')
  launch "$name" "$f"
  launch "$name.no_idle_polling" "$f" --set kernel.idle_polling=false
done < <(find scenarios -name '*.json' ! -name '*schema*' | sort)
launch stream_nic "$out/stream_nic.scenario"
failed=0
for p in "${pids[@]}"; do wait "$p" || failed=1; done
[ "$failed" -eq 0 ] || exit 2
n=$(find "$out" -name "*.json" | wc -l)

if [ "$mode" = record ]; then
  mkdir -p "$dir"
  rm -f "$dir"/*.json
  cp "$out"/*.json "$dir"/
  echo "snapshot: recorded $n runs in $dir"
  exit 0
fi
# same FILE REF: byte-identical (compare), or identical but for the trajectory (compare-results).
same() {
  if [ "$mode" = compare ]; then
    cmp -s "$1" "$2"
  else
    /usr/bin/python3 -c '
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
for r in (a, b):
    r.pop("events", None)
    r.pop("fingerprint", None)
sys.exit(0 if a == b else 1)' "$1" "$2"
  fi
}
differ=0
for f in "$out"/*.json; do
  ref="$dir/$(basename "$f")"
  if [ ! -f "$ref" ]; then
    echo "new:     $(basename "$f" .json)"
    differ=1
  elif ! same "$f" "$ref"; then
    echo "differs: $(basename "$f" .json)"
    differ=1
  fi
done
for ref in "$dir"/*.json; do
  [ -f "$out/$(basename "$ref")" ] || { echo "missing: $(basename "$ref" .json)"; differ=1; }
done
if [ "$differ" -eq 0 ]; then
  if [ "$mode" = compare ]; then
    echo "snapshot: all $n runs byte-identical to $dir"
  else
    echo "snapshot: all $n runs identical to $dir but for their trajectory (events, fingerprint)"
  fi
else
  exit 1
fi

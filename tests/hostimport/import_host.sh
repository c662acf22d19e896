#!/usr/bin/env bash
# napisim import-host end to end: this machine, the recorded 2-socket host, and bad input.
# Usage: import_host.sh CASE NAPISIM SOURCE_DIR WORK_DIR
set -u -o pipefail
case_name=$1
napisim=$2
src=$3
work=$4
py=/usr/bin/python3
host=$src/tests/hostimport/two_socket
rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1

fail() {
  echo "FAIL [$case_name]: $*" >&2
  for f in "$work"/*.err; do [ -f "$f" ] && { echo "---- $f" >&2; head -n 20 "$f" >&2; }; done
  exit 1
}
# bad DIR_OR_ARGS... WHAT: exit 2, stderr names WHAT, nothing on stdout, no --out file.
bad() {
  local what=$1
  shift
  "$napisim" import-host "$@" --out out.json > cmd.out 2> cmd.err
  local rc=$?
  [ "$rc" -eq 2 ] || fail "exit $rc, expected 2: import-host $*"
  grep -q '^napisim: error: ' cmd.err || fail "no 'napisim: error:' line: $*"
  grep -qF -- "$what" cmd.err || fail "stderr does not name '$what': $(cat cmd.err)"
  [ ! -s cmd.out ] || fail "printed on stdout: $*"
  [ ! -e out.json ] || fail "wrote out.json: $*"
}
# Everything but the description (which says where the host came from).
strip() { $py -c 'import json,sys; d=json.load(open(sys.argv[1])); d.pop("description"); print(json.dumps(d, sort_keys=True))' "$1"; }

case $case_name in
  this_machine)
    # Whatever this machine has imports, validates and runs.
    "$napisim" import-host --out vm.json 2> vm.err || fail "import-host failed"
    "$napisim" validate vm.json > /dev/null 2> validate.err || fail "the imported scenario does not validate"
    "$napisim" run vm.json --set duration_s=0.005 --set warmup_s=0.002 --format json > run.json 2> run.err ||
      fail "the imported scenario does not run"
    $py - run.json << 'PY' || fail "the run did nothing"
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
assert s["transactions"] > 0 and s["latency_ns"]["p99"] > 0, s
PY
    ;;
  collected_equals_live)
    # tools/collect-host.sh writes the layout --from reads: the same host either way.
    command -v lstopo > /dev/null || fail "lstopo missing (tools/setup.sh installs hwloc)"
    bash "$src/tools/collect-host.sh" collected 2> collect.err || fail "collect-host.sh failed"
    "$napisim" import-host > live.json 2> live.err || fail "live import failed"
    "$napisim" import-host --from collected > from.json 2> from.err || fail "import --from failed"
    [ "$(strip live.json)" = "$(strip from.json)" ] || { diff <(strip live.json) <(strip from.json) >&2; fail "differ"; }
    ;;
  two_socket_runs)
    "$napisim" import-host --from "$host" --rate 200000 --out kv.json 2> kv.err || fail "import failed"
    grep -q 'CPUs renumbered' kv.err || fail "no renumbering note on stderr"
    "$napisim" run kv.json --set duration_s=0.005 --set warmup_s=0.002 --format json > run.json 2> run.err ||
      fail "does not run"
    ;;
  names_without_napi_get)
    # Without the netlink dump the queue IRQs come from /proc/interrupts names: the same CPUs.
    cp -r "$host" h && rm h/napi-get.json
    "$napisim" import-host --from h > a.json 2> a.err || fail "import failed"
    $py - a.json << 'PY' || fail "wrong IRQ CPUs from interrupt names"
import json, sys
d = json.load(open(sys.argv[1]))
assert [n["irq_affinity"] for n in d["nics"]] == ["0-3", "8-15"], d["nics"]
assert [m["name"] for m in d["models"]] == ["napi_irq", "napi_threaded", "rps_rfs"], d["models"]
PY
    ;;
  trace_workload)
    "$napisim" import-host --from "$host" --trace "$src/scenarios/traces/wei2020_app_50k_lognormal.csv" \
      --out sub.json 2> t.err || fail "import with --trace failed"
    grep -q '"type": "trace"' sub.json || fail "no trace workload"
    "$napisim" run sub.json --set duration_s=0.005 --set warmup_s=0.002 > /dev/null 2> run.err || fail "does not run"
    ;;
  bad_inputs)
    bad "--from: not a directory" --from /nonexistent
    mkdir empty && bad "empty/topology.xml: not found" --from empty
    cp -r "$host" h1 && echo "Coalesce parameters for eno1:" > h1/net/eno1/ethtool-c &&
      bad "h1/net/eno1/ethtool-c: expected" --from h1
    cp -r "$host" h2 && printf 'CPU0 CPU1\n 5: 1 2 3 x\n 6: 7\n' > h2/proc/interrupts && bad "h2/proc/interrupts: line 3" --from h2
    cp -r "$host" h3 && echo '{"not": "an array"}' > h3/napi-get.json && bad "h3/napi-get.json: expected the JSON array" --from h3
    cp -r "$host" h4 && echo '[{"id": 1' > h4/napi-get.json && bad "h4/napi-get.json" --from h4
    cp -r "$host" h5 && echo 'seven' > h5/proc/sys/net/core/netdev_budget && bad "netdev_budget: expected an integer" --from h5
    cp -r "$host" h6 && echo '<topology><object type="Machine"' > h6/topology.xml && bad "h6/topology.xml" --from h6
    cp -r "$host" h7 && echo 99999999 > h7/proc/sys/net/core/netdev_budget && bad "/kernel/net/netdev_budget" --from h7
    bad "--dev: no device 'eth9'" --from "$host" --dev eth9
    bad "--request-size" --from "$host" --request-size '{oops'
    bad "--trace: cannot read" --from "$host" --trace missing.csv
    ;;
  *)
    fail "unknown case"
    ;;
esac
echo "ok [$case_name]"

#!/usr/bin/env bash
# napisim tune end to end: the search on a tiny scenario is deterministic, its report holds
# together, and bad options are bad input.
# Usage: tune.sh CASE NAPISIM SOURCE_DIR WORK_DIR
set -u -o pipefail
case_name=$1
napisim=$2
src=$3
work=$4
py=/usr/bin/python3
rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1
fail() {
  echo "FAIL [$case_name]: $*" >&2
  for f in "$work"/*.err; do [ -f "$f" ] && { echo "---- $f" >&2; head -n 20 "$f" >&2; }; done
  exit 1
}
# A tiny search: quickstart for 4 ms, three strategies, two seeds, two rungs.
tiny=(quickstart --set duration_s=0.004 --set warmup_s=0.004 --seeds 1,2 --strategies softirq,defer,busy_poll --rungs 2)

case $case_name in
  deterministic)
    "$napisim" tune "${tiny[@]}" -j 2 --format json > a.json 2> a.err || fail "tune a failed"
    "$napisim" tune "${tiny[@]}" -j 1 --format json --out b.json > /dev/null 2> b.err || fail "tune b failed"
    cmp -s a.json b.json || { diff a.json b.json | head -n 20 >&2; fail "two searches differ"; }
    $py - a.json << 'PY' || fail "the report does not hold together"
import json, sys
r = json.load(open(sys.argv[1]))
front = r["front"]
assert front and r["recommended"]["id"] in [f["id"] for f in front], r["recommended"]
# No member of the front is dominated by any candidate of the last rung.
for f in front:
    for g in r["final"]:
        assert not (g["objective_us"]["mean"] < f["objective_us"]["mean"] and g["busy_cpus"]["mean"] < f["busy_cpus"]["mean"]), (f["id"], g["id"])
assert [w["load_factor"] for w in r["what_if"]] == [0.5, 2.0]
assert r["rungs"][0]["seeds"] == [1] and r["rungs"][1]["seeds"] == [1, 2]
assert any(c.startswith("sysctl -w net.core.netdev_budget=") for c in r["recommended"]["commands"])
PY
    grep -q 'simulations in' a.err || fail "no wall-time line on stderr"
    ;;
  text)
    "$napisim" tune "${tiny[@]}" --cpu-budget 50% --no-what-if > t.out 2> t.err || fail "tune failed"
    grep -q '^Pareto front' t.out || fail "no front"
    grep -q '^recommended (budget 50% = ' t.out || fail "no recommendation"
    grep -q 'echo [0-9]* > /sys/class/net/eth0/napi_defer_hard_irqs' t.out || fail "no sysfs command"
    ! grep -q '^what if' t.out || fail "--no-what-if printed a what-if"
    ;;
  bad_options)
    for args in "--objective p42" "--cpu-budget 150%" "--cpu-budget lots" "--strategies turbo" "--seeds 1,x" \
                "--format yaml" "--eta 1" "--out /nonexistent/dir/r.json"; do
      # shellcheck disable=SC2086
      "$napisim" tune quickstart $args > o.out 2> o.err
      rc=$?
      [ "$rc" -eq 2 ] || fail "exit $rc for $args"
      grep -q "^napisim: error: ${args%% *}" o.err || fail "error does not name ${args%% *}: $(cat o.err)"
      [ ! -s o.out ] || fail "printed results for $args"
    done
    "$napisim" tune no/such/scenario > o.out 2> o.err; [ $? -eq 2 ] || fail "unknown scenario is not bad input"
    ;;
  *) fail "unknown case" ;;
esac
echo "ok [$case_name]"

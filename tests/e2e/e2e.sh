#!/usr/bin/env bash
# End-to-end checks of the napisim command line (issue 4). One CTest test per case; each runs the
# built binary in fresh processes.
#
# Usage: e2e.sh CASE NAPISIM SOURCE_DIR WORK_DIR
# Uses only bash, coreutils, diff and grep; JSON checks use /usr/bin/python3 explicitly.
set -u -o pipefail

case_name=$1
napisim=$2
src=$3
work=$4
py=/usr/bin/python3

rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1

# A short run: the quickstart with a 50 ms measurement.
short=(--set warmup_s=0.01 --set duration_s=0.05)

fail() {
  echo "FAIL [$case_name]: $*" >&2
  for f in "$work"/*.out "$work"/*.err; do
    [ -f "$f" ] || continue
    echo "---- $(basename "$f") (first 40 lines)" >&2
    head -n 40 "$f" >&2
  done
  exit 1
}

# expect_rc WANT CMD... : runs CMD with stdout/stderr to cmd.out/cmd.err and checks the exit status.
expect_rc() {
  local want=$1
  shift
  "$@" > cmd.out 2> cmd.err
  local rc=$?
  [ "$rc" -eq "$want" ] || fail "exit status $rc, expected $want: $*"
}

# expect_bad_input POINTER_OR_TEXT CMD... : exit 2 and stderr names the offending value.
expect_bad_input() {
  local what=$1
  shift
  expect_rc 2 "$@"
  grep -qF -- "$what" cmd.err || fail "stderr does not mention '$what': $*"
  grep -q '^napisim: error: ' cmd.err || fail "stderr lacks 'napisim: error: ': $*"
  [ ! -s cmd.out ] || fail "bad input printed results on stdout: $*"
}

case $case_name in
  run_default)
    # The default output is a summary: what ran, then the results with units, per host.
    expect_rc 0 "$napisim" run
    grep -Eq '^napisim [0-9.]+ \(.*\): scenario quickstart, seed 1$' cmd.out || fail "no header line"
    grep -Eq '^workload +tcp_rr: num_flows=64, num_threads=4, ' cmd.out || fail "no workload line"
    grep -Eq '^window +0\.2 s measured after 0\.02 s of warm-up' cmd.out || fail "no window line"
    grep -Eq '^server +8 CPUs, eth0 \(4 queues\), model napi_irq$' cmd.out || fail "no server line"
    grep -Eq '^client0 +Linux client host: 8 CPUs, eth0 \(4 queues\), model napi_irq$' cmd.out || fail "no client line"
    grep -Eq '^throughput +[0-9]+ transactions/s \([0-9]+ in the window\)$' cmd.out || fail "no throughput line"
    grep -Eq '^latency +avg [0-9.]+  p50 [0-9.]+  p90 [0-9.]+  p99 [0-9.]+  p99\.9 [0-9.]+  p99\.99 [0-9.]+  max [0-9.]+ us$' cmd.out ||
      fail "no latency line"
    for host in server client0; do
      grep -Eq "^$host +CPU [0-9.]+% busy \([0-9.]+ CPUs\), [0-9.]+ us per transaction$" cmd.out || fail "no CPU line for $host"
    done
    [ "$(grep -c '^ *by class: .*softirq [0-9.]*%' cmd.out)" -eq 2 ] || fail "no CPU by class for both hosts"
    [ "$(grep -c 'PSI cpu some [0-9.]*%$' cmd.out)" -eq 2 ] || fail "no PSI for both hosts"
    ! grep -q '=' <(sed -n '/^throughput/,$p' cmd.out) || fail "key=value lines in the summary"
    # The same numbers as the JSON result.
    "$napisim" run --format json > r.json 2> /dev/null || fail "json run failed"
    want=$($py -c 'import json; s = json.load(open("r.json"))["summary"]; print("%.0f %.1f" % (s["throughput"], s["latency_ns"]["p99"] / 1e3))')
    got="$(sed -n 's/^throughput *\([0-9]*\) .*/\1/p' cmd.out) $(sed -n 's/.* p99 \([0-9.]*\) .*/\1/p' cmd.out)"
    [ "$got" = "$want" ] || fail "summary says '$got', JSON says '$want'"
    ;;
  neper_format)
    # --format neper is neper tcp_rr's client stdout, as the default text was before the summary:
    # VERSION, the flag dump in neper's order, then the results in neper's keys and units.
    expect_rc 0 "$napisim" run "${short[@]}" --format neper
    cut -d= -f1 cmd.out | head -n 47 | tr '\n' ' ' > keys.txt
    want="VERSION noburst reuseaddr async_connect delay mark logrtt_entries_per_flow log_rtt buffer_size test_length \
percentiles response_size request_size congestion_control no_delay tcp_tx_delay tcp_fastopen num_ports wait_start \
iostat_ms time_wait all_samples port control_port host local_hosts max_pacing_rate interval freebind nonblocking nolog \
logtostderr pin_cpu dry_run debug client ipv6 ipv4 stime_use_proc source_port suicide_length listen_backlog num_clients \
num_threads num_flows maxevents magic "
    [ "$(cat keys.txt)" = "$want" ] || fail "neper's flag dump: $(cat keys.txt)"
    grep -qx 'VERSION=1.1.0' cmd.out || fail "no VERSION=1.1.0"
    grep -qx 'magic=42' cmd.out || fail "no magic=42"
    grep -qx 'percentiles=50,90,99,99.9,' cmd.out || fail "no percentiles"
    for k in total_run_time num_transactions latency_min latency_max latency_mean latency_stddev latency_p50 \
             latency_p90 latency_p99 latency_p99.9 num_samples time_end correlation_coefficient throughput \
             local_throughput remote_throughput napisim_cpu.busy_pct napisim_clients.client0.cpu.busy_pct; do
      grep -Eq "^$k=[0-9.]+$" cmd.out || fail "no $k= line"
    done
    grep -Eq '^latency_p99=0\.000[0-9]{6}$' cmd.out || fail "latency_p99 is not in seconds"
    # The tools' own formats of the other workloads: mutilate's report, netperf's result block.
    printf '{"include": ["%s"], "duration_s": 0.005, "warmup_s": 0.002}\n' "$src/scenarios/karsten2024/base.json" > kv.json
    expect_rc 0 "$napisim" run kv.json --format mutilate
    head -1 cmd.out | grep -Eq '^#type +avg +std +min +5th +10th +50th +90th +95th +99th$' || fail "no mutilate header"
    grep -Eq '^Total QPS = [0-9.]+ \([0-9]+ / 0\.0s\)$' cmd.out || fail "no Total QPS line"
    printf '{"workload": {"type": "stream", "params": {}}, "duration_s": 0.005, "warmup_s": 0.002}\n' > stream.json
    expect_rc 0 "$napisim" run stream.json --format netperf-legacy
    head -1 cmd.out | grep -q '^MIGRATED TCP STREAM TEST from 0.0.0.0' || fail "no netperf banner"
    expect_rc 0 "$napisim" run stream.json
    grep -Eq '^throughput +[0-9.]+ 10\^6bits/s$' cmd.out || fail "stream summary: no throughput in its units"
    ;;

  determinism)
    "$napisim" run "${short[@]}" --format json > a.json 2> a.err || fail "run a failed"
    "$napisim" run "${short[@]}" --format json > b.json 2> b.err || fail "run b failed"
    [ -s a.json ] || fail "empty output"
    cmp -s a.json b.json || { diff a.json b.json | head -n 40 >&2; fail "two runs differ"; }
    "$napisim" run "${short[@]}" --seed 2 --format json > c.json 2> c.err || fail "run c failed"
    fa=$(grep -o '"fingerprint": *"[0-9a-f]*"' a.json) || fail "no fingerprint in a.json"
    fc=$(grep -o '"fingerprint": *"[0-9a-f]*"' c.json) || fail "no fingerprint in c.json"
    [ "$fa" != "$fc" ] || fail "--seed 2 gave the same fingerprint ($fa)"
    ;;

  conservation)
    "$napisim" run "${short[@]}" --format json > r.json 2> r.err || fail "run failed"
    $py - r.json << 'EOF' || fail "conservation check failed"
import json, sys
r = json.load(open(sys.argv[1]))
c = r["conservation"]
ok = True
if c["sent"] != c["answered"] + c["in_flight"]:
    print(f"sent {c['sent']} != answered {c['answered']} + in_flight {c['in_flight']}", file=sys.stderr)
    ok = False
if c["sent"] <= 0 or c["answered"] <= 0:
    print(f"nothing happened: {c}", file=sys.stderr)
    ok = False
if not r["per_cpu"]:
    print("no per_cpu entries", file=sys.stderr)
    ok = False
for pc in r["per_cpu"]:
    total = sum(pc["by_class_pct"].values())
    if abs(total - 100.0) > 1e-6:
        print(f"cpu {pc['cpu']}: by_class_pct sums to {total!r}: {pc['by_class_pct']}", file=sys.stderr)
        ok = False
sys.exit(0 if ok else 1)
EOF
    ;;

  # ---- Cases from the QA pass of session 14: each used to crash, hang or pass bad input. ----
  qa_many_tasks)
    # 4096 threads and the ksoftirqds: more than 4096 tasks (the task table once had a fixed
    # capacity of 4096: an assertion abort).
    expect_rc 0 "$napisim" run --set warmup_s=0 --set duration_s=0.002 --set workload.params.num_threads=4096
    grep -q '^throughput ' cmd.out || fail "no results"
    ;;
  qa_deep_nesting)
    # A document nested far deeper than any scenario: exit 2 (it used to overflow the stack).
    "$py" -c "import sys; sys.stdout.write('{\"name\":' + '['*100000 + ']'*100000 + '}')" > deep.json
    expect_bad_input 'nesting deeper than 256 levels' "$napisim" validate deep.json
    expect_bad_input 'nesting deeper than 256 levels' "$napisim" validate "$src/scenarios/quickstart.json" \
      --set "name=$("$py" -c "print('['*300 + ']'*300)")"
    ;;
  qa_change_cpulist)
    # A run-time change's cpulist is checked before the run (it used to abort inside SimGrid), even
    # for a change after the end; the error names the change's own pointer.
    expect_bad_input '/changes/0/model/params/cpumask' "$napisim" run "${short[@]}" \
      --set 'changes=[{"at_s":0.02,"model":{"name":"napi_threaded","params":{"cpumask":"99"}}}]'
    expect_bad_input '/changes/0/model/params/rps_cpus' "$napisim" run "${short[@]}" \
      --set 'changes=[{"at_s":5,"model":{"name":"rps_rfs","params":{"rps_cpus":"5-2"}}}]'
    expect_bad_input '/models/0/params/rps_cpus' "$napisim" run "${short[@]}" --set 'models=[{"name":"rps_rfs","params":{"rps_cpus":"5-2"}}]'
    expect_bad_input '/models/1/params/cpus' "$napisim" run "${short[@]}" \
      --set 'models=[{"name":"napi_irq"},{"name":"threaded_busy_poll","params":{"cpus":"0-99"}}]'
    ;;
  qa_zero_cost_busy_poll)
    # Busy polling with every cost 0 (as the M/M/1 check uses) must still let time pass.
    costs=()
    for c in $("$napisim" schema | "$py" -c "import json,sys; print(' '.join(json.load(sys.stdin)['properties']['costs']['properties']))"); do
      costs+=(--set "costs.$c=0")
    done
    for m in $("$napisim" list-models | cut -d' ' -f1); do
      timeout 60 "$napisim" run --set warmup_s=0 --set duration_s=0.002 --set "models=[{\"name\":\"$m\"}]" "${costs[@]}" \
        > cmd.out 2> cmd.err || fail "model $m with zero costs: exit $? (124: hung)"
    done
    ;;
  qa_oversubscribed_load)
    # Open-loop and repeating trace loads above the client links never reach a steady state.
    expect_bad_input '/workload/params/rate_rps: offered load' "$napisim" run "${short[@]}" \
      --set workload.type=app --set workload.params.load=open --set workload.params.rate_rps=1e10
    printf 'timestamp,flow,request_size,response_size\n0,1,1,1\n0,1,1,1\n' > instant.csv
    expect_bad_input '/workload/params/rate_scale: offered load' "$napisim" run "${short[@]}" \
      --set "workload={\"type\":\"trace\",\"params\":{\"file\":\"$work/instant.csv\",\"repeat\":true,\"rate_scale\":1e6}}"
    expect_bad_input '/rate_rps: expected duration_s x rate_rps <= 1e8' "$napisim" trace-gen '{"duration_s":100000,"rate_rps":1e10}'
    # Well below the link: runs.
    expect_rc 0 "$napisim" run "${short[@]}" --set workload.type=app --set workload.params.load=open --set workload.params.rate_rps=1e5
    ;;
  qa_include_explosion)
    # Seven levels of ten includes each, no cycle: 10^7 file reads unless bounded.
    for i in 0 1 2 3 4 5 6; do
      printf '{"include": [%s]}\n' "$(printf '"d%d.json",' $((i + 1)){,,,,,,,,,} | sed 's/,$//')" > d$i.json
    done
    echo '{"seed": 3}' > d7.json
    expect_rc 2 timeout 60 "$napisim" validate d0.json
    grep -qF 'more than 64 included files' cmd.err || fail "no include bound in the message"
    ;;
  qa_output_paths)
    mkdir -p o/result.csv
    expect_bad_input "'o/result.csv' is a directory" "$napisim" run "${short[@]}" --out o
    [ ! -e o/result.json ] || fail "result.json written although the run could not write all its files"
    expect_bad_input '--out' "$napisim" run "${short[@]}" --out /proc
    expect_bad_input "--out: not a directory: '/nonexistent'" "$napisim" trace-gen '{"duration_s":0.001}' --out /nonexistent/x.csv
    expect_bad_input '-j: expected a number of parallel simulations >= 0' "$napisim" calibrate "$src/calibration/targets.json" -j -3 --dry-run
    ;;
  qa_validate_host_checks)
    # validate builds the host (without running it): what run rejects, validate rejects.
    expect_bad_input '/workload/params/server_cpus' "$napisim" validate "$src/scenarios/quickstart.json" --set 'workload.params.server_cpus="99"'
    expect_bad_input '/models/0/params/cpumask' "$napisim" validate "$src/scenarios/quickstart.json" \
      --set 'models=[{"name":"napi_threaded","params":{"cpumask":"99"}}]'
    expect_bad_input 'duplicate client name "c"' "$napisim" validate "$src/scenarios/quickstart.json" \
      --set 'platform.clients=[{"name":"c"},{"name":"c"}]'
    expect_bad_input '/nics/1/name: duplicate NIC name "eth0"' "$napisim" validate "$src/scenarios/quickstart.json" \
      --set 'nics[-]={"name":"eth0","irq_affinity":"4-7"}'
    # mutilate inter-arrival gaps that collapse to 0 (scale 0, rate 0, or no finite mean to scale).
    for ia in pareto:0,0,0.5 exponential:0 pareto:0,1,1; do
      expect_bad_input '/workload/params/iadist' "$napisim" validate "$src/scenarios/karsten2024/defer10.json" \
        --set "workload.params.iadist=\"$ia\""
    done
    # The server and a client on the same host of an XML platform.
    expect_bad_input '/platform/clients/0/name: client "client0" is the server' "$napisim" run \
      "$src/scenarios/examples/xml_platform.json" "${short[@]}" --set 'platform.server="client0"'
    ;;
  qa_input_limits)
    # Issue 34: each used to hang, run out of memory (exit 1) or pass bad input.
    expect_bad_input "scenario file '/dev/zero' is larger than the limit of 8 MiB" timeout 20 "$napisim" validate /dev/zero
    expect_bad_input "scenario file '/dev/zero' is larger than the limit of 8 MiB" timeout 20 "$napisim" run /dev/zero
    echo '{"include": ["/dev/zero"]}' > inc.json
    expect_bad_input "/include/0: in '/dev/zero'" timeout 20 "$napisim" validate inc.json
    "$py" -c "import json; json.dump({'changes': [{'at_s': 0}] * 300000}, open('changes.json', 'w'), separators=(',', ':'))"
    expect_bad_input '/changes: expected an array of at most 4096 elements, got 300000' timeout 20 "$napisim" validate changes.json
    "$py" -c "import json; json.dump({'platform': {'clients': [{'name': f'c{i}'} for i in range(300000)]}}, open('clients.json', 'w'))"
    expect_bad_input '/platform/clients: expected an array of at most 256 elements' timeout 20 "$napisim" validate clients.json
    expect_bad_input "--seed: expected an integer in [0, 9000000000000000], got '-5'" "$napisim" run --seed -5
    expect_bad_input "--seed: expected an integer" "$napisim" run --seed 1.5
    expect_bad_input "--seeds: expected an integer" "$napisim" calibrate "$src/calibration/targets.json" --seeds 1,-2 --dry-run
    echo null > null.json
    expect_bad_input '/: expected a scenario object, got null' "$napisim" validate null.json
    expect_bad_input '/: expected a scenario object, got null' "$napisim" validate null.json --set seed=3
    expect_bad_input '/: expected a scenario object, got null' "$napisim" run null.json --set seed=3
    printf '{\n  "duration_s": 1e999\n}\n' > overflow.json
    expect_bad_input "/duration_s: overflow.json: invalid JSON at line 2, column 17: number overflow parsing '1e999'" \
      "$napisim" validate overflow.json
    mkdir tracedir
    printf '{"workload": {"type": "trace", "params": {"file": "tracedir"}}}\n' > dirtrace.json
    expect_bad_input "/workload/params/file: cannot read trace file '$work/tracedir': is a directory" "$napisim" run dirtrace.json
    printf '{"workload": {"type": "trace", "params": {"file": "/dev/zero"}}}\n' > zerotrace.json
    expect_bad_input "cannot read trace file '/dev/zero': not a regular file" timeout 20 "$napisim" run zerotrace.json
    ;;
  qa_fingerprint_by_content)
    # The same scenario and trace in two directories: the same result, scenario_sha256 included;
    # another trace: another scenario_sha256.
    for d in a b/c; do
      mkdir -p $d
      printf 'timestamp,flow\n0,1\n0.0001,2\n0.0002,1\n' > $d/t.csv
      printf '{"warmup_s": 0, "duration_s": 0.002, "workload": {"type": "trace", "params": {"file": "t.csv"}}}\n' > $d/s.json
      (cd $d && "$napisim" run s.json --format json > r.json 2> r.err) || fail "run in $d failed"
    done
    printf '0.0003,2\n' >> b/c/t.csv
    "$napisim" run b/c/s.json --format json > other.json 2> other.err || fail "run with another trace failed"
    $py - a/r.json b/c/r.json other.json "$work" <<'PYEOF' || fail "the fingerprint depends on the location"
import json, sys
a, b, other = (json.load(open(f)) for f in sys.argv[1:4])
assert a["context"]["scenario_sha256"] == b["context"]["scenario_sha256"], (a["context"], b["context"])
assert a["context"]["input_files"] == b["context"]["input_files"], a["context"]
assert other["context"]["scenario_sha256"] != a["context"]["scenario_sha256"]
assert a == b, [k for k in a if a[k] != b.get(k)]
assert sys.argv[4] not in json.dumps(a), "an absolute path in the result"
PYEOF
    ;;
  qa_set_paths_and_nulls)
    expect_bad_input "no array here to index (use [-] to append its first element)" "$napisim" validate \
      "$src/scenarios/quickstart.json" --set 'platform.clients[0].cores=2'
    expect_rc 0 "$napisim" validate "$src/scenarios/quickstart.json" --set 'workload.params.percentiles[-]=50'
    expect_bad_input '/topology: expected object, got null' "$napisim" validate "$src/scenarios/quickstart.json" --set 'topology=null'
    expect_bad_input '/nics/0: expected object, got null' "$napisim" validate "$src/scenarios/quickstart.json" --set 'nics[0]=null'
    ;;

  qa_signal_during_run)
    # SIGINT / SIGTERM while a long run is simulating: it stops at the next event, exits 130 / 143
    # with one line, and writes nothing (the --out directory keeps what it had).
    for sig in INT TERM; do
      want=$([ $sig = INT ] && echo 130 || echo 143)
      rm -rf out && mkdir out && echo old > out/result.json
      "$napisim" run "$src/scenarios/wei2020/tcp_rr_1B.json" --set duration_s=30 --out out > cmd.out 2> cmd.err &
      pid=$!
      sleep 1.5
      kill -s $sig $pid
      wait $pid
      rc=$?
      [ "$rc" -eq "$want" ] || fail "SIG$sig: exit status $rc, expected $want"
      [ "$(wc -l < cmd.err)" -eq 1 ] || fail "SIG$sig: stderr is not one line"
      grep -q "^napisim: interrupted by SIG$sig, run stopped at [0-9.]* s simulated; no results written$" cmd.err ||
        fail "SIG$sig: message"
      [ ! -s cmd.out ] || fail "SIG$sig: results on stdout"
      [ "$(ls -A out)" = result.json ] && [ "$(cat out/result.json)" = old ] || fail "SIG$sig: --out changed: $(ls -A out)"
    done
    ;;
  qa_signal_during_write)
    # A real SIGTERM (and SIGINT) delivered while the result files are written: the write finishes,
    # the whole set is the new run's, no temporary file is left, and the exit status says so.
    mkdir want && "$napisim" run "${short[@]}" --seed 7 --out want > /dev/null 2>&1 || fail "reference run"
    for sig in 15 2; do
      rm -rf out && mkdir out
      "$napisim" run "${short[@]}" --seed 3 --out out > /dev/null 2>&1 || fail "old run"
      expect_rc $((128 + sig)) env NAPISIM_TEST_SIGNAL_IN_WRITE=$sig "$napisim" run "${short[@]}" --seed 7 --out out
      grep -q "after the run's results were written in full" cmd.err || fail "signal $sig: message"
      [ "$(ls -A out | sort | tr '\n' ' ')" = "result.csv result.json result.txt " ] || fail "signal $sig: files $(ls -A out)"
      for f in result.csv result.txt; do cmp -s out/$f want/$f || fail "signal $sig: $f is not the new run's"; done
      $py - out/result.json want/result.json <<'PY' || fail "signal $sig: result.json is not the new run's"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
for r in (a, b):
    r.pop("context", None)
sys.exit(a != b)
PY
    done
    ;;

  qa_overload_memory_flat)
    # An open-loop app load at 10x capacity (20 us of service: under 50k requests/s; 500k/s offered): the
    # server's socket receive buffers and the client's send buffers bound what queues, so the peak
    # RSS after 2 s simulated is within 10% of that after 0.2 s, and the rest is counted unsent.
    $py - "$napisim" <<'PY' || fail "overload memory"
import json, os, subprocess, sys
doc = {"seed": 1, "warmup_s": 0.0,
       "topology": {"numa_nodes": 1, "llcs_per_node": 1, "cores_per_llc": 1, "threads_per_core": 1},
       "nics": [{"queues": 1, "irq_affinity": "0"}],
       "workload": {"type": "app", "params": {"load": "open", "rate_rps": 500000, "num_flows": 8,
                                              "num_threads": 1, "service_ns": 20000}}}
def run(duration):
    doc["duration_s"] = duration
    with open("overload.json", "w") as f:
        json.dump(doc, f)
    p = subprocess.Popen([sys.argv[1], "run", "overload.json", "--format", "json"], stdout=subprocess.PIPE)
    out = p.stdout.read()
    _, status, usage = os.wait4(p.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    r = json.loads(out)
    return usage.ru_maxrss, r["summary"], r["conservation"]
(rss_a, sa, ca), (rss_b, sb, cb) = run(0.2), run(2.0)
print(f"peak RSS {rss_a} KiB at 0.2 s, {rss_b} KiB at 2 s; in flight {ca['in_flight']} / {cb['in_flight']}; "
      f"unsent {sa['unsent_requests']} / {sb['unsent_requests']}; throughput {sb['throughput']:.0f}/s")
assert abs(rss_b - rss_a) <= 0.10 * rss_a, "peak RSS grows with the duration"
assert abs(cb["in_flight"] - ca["in_flight"]) <= 0.10 * ca["in_flight"], "the backlog grows with the duration"
# What was offered is what was served, what waits, and what could not be sent.
assert abs(sb["offered_rps"] - 500000) < 0.02 * 500000 and 0 < sb["throughput"] < 50000
assert sb["unsent_requests"] > 2.0 * (500000 - 50000) * 0.95, "the load above capacity is not counted unsent"
PY
    ;;

  names_resolve_like_python)
    # One resolver: the CLI takes the names the Python package takes, from any directory.
    expect_rc 0 "$napisim" list-scenarios
    PYTHONPATH="$(dirname "$napisim")/python" $py -c 'import napisim; print("\n".join(napisim.list_scenarios()))' > py.txt ||
      fail "python list_scenarios"
    diff -u py.txt cmd.out > /dev/null || fail "list-scenarios differs from napisim.list_scenarios()"
    grep -qx 'wei2020/tcp_rr_1B' cmd.out || fail "wei2020/tcp_rr_1B not listed"
    expect_rc 0 "$napisim" validate quickstart
    expect_rc 0 "$napisim" validate wei2020/tcp_rr_1B.json
    expect_rc 0 "$napisim" run wei2020/tcp_rr_1B --set duration_s=0.002 --set warmup_s=0.001 --format json
    $py -c 'import json, sys; assert json.load(open("cmd.out"))["scenario"]["name"] == "wei2020/tcp_rr_1B"' || fail "ran another scenario"
    expect_rc 0 "$napisim" --version
    grep -q '^napisim [0-9.]* (' cmd.out || fail "--version: $(cat cmd.out)"
    ;;

  bad_set_unknown_key)
    expect_bad_input '/nics/0/rx_queus' "$napisim" run --set nics.0.rx_queus=3
    grep -q 'unknown key' cmd.err || fail "no 'unknown key'"
    ;;
  bad_set_typo_suggestion)
    expect_bad_input '/nics/0/queus' "$napisim" run --set nics.0.queus=3
    grep -qF 'did you mean "queues"' cmd.err || fail "no suggestion"
    ;;
  bad_out_of_range)
    expect_bad_input '/nics/0/queues: expected integer in [1, 1024], got 0' "$napisim" run --set nics.0.queues=0
    ;;
  bad_truncated_json)
    head -c 120 "$src/scenarios/quickstart.json" > truncated.json
    expect_bad_input 'invalid JSON at line' "$napisim" run truncated.json
    grep -qF 'truncated.json' cmd.err || fail "the file is not named"
    grep -qF ': /: ' cmd.err || fail "no JSON pointer '/'"
    ;;
  bad_number_in_file)
    printf '{"duration_s": 1e400}\n' > overflow.json
    expect_bad_input 'invalid JSON' "$napisim" run overflow.json
    printf '{"duration_s": NaN}\n' > nan.json
    expect_bad_input 'invalid JSON' "$napisim" run nan.json
    expect_bad_input '/nics/0/speed_gbps: expected number' "$napisim" run --set nics.0.speed_gbps=NaN
    expect_bad_input '/nics/0/queues: expected integer' "$napisim" run --set nics.0.queues=1.5
    ;;
  bad_missing_file)
    expect_bad_input "no scenario file or scenario name '$work/nosuch.json'" "$napisim" run "$work/nosuch.json"
    grep -qF 'known names: ' cmd.err || fail "the known names are not listed"
    expect_bad_input "cannot read scenario file '$work': Is a directory" "$napisim" run "$work"
    ;;
  bad_unknown_model)
    expect_bad_input '/models/0/name: unknown model "nosuch"' "$napisim" run --set models.0.name=nosuch
    ;;
  bad_format)
    expect_bad_input 'nosuch' "$napisim" run "${short[@]}" --format nosuch
    grep -qF -- '--format' cmd.err || fail "the option is not named"
    ;;
  describe_unknown)
    expect_rc 2 "$napisim" describe nosuch
    grep -qF 'unknown model or workload "nosuch"' cmd.err || fail "no message"
    grep -qF 'tcp_rr' cmd.err || fail "the workloads are not named"
    ;;
  describe_known)
    expect_rc 0 "$napisim" describe napi_irq
    grep -q '^NAME' cmd.out || fail "no parameter table"
    ;;
  describe_workload)
    # Every workload type has a parameter table, and the schema's workload params are the registry's.
    expect_rc 0 "$napisim" list-workloads
    LC_ALL=C sort -c cmd.out || fail "not sorted"
    cut -d' ' -f1 cmd.out > names.txt
    for w in tcp_rr app trace mutilate stream super_netperf; do grep -qx "$w" names.txt || fail "$w not listed"; done
    while read -r w; do
      expect_rc 0 "$napisim" describe "$w"
      grep -q "^$w (workload): " cmd.out || fail "describe $w: no title"
      grep -q '^NAME' cmd.out || fail "describe $w: no parameter table"
    done < names.txt
    "$napisim" schema | "$py" -c "import json,sys; print('\n'.join(sorted(json.load(sys.stdin)['\$defs']['workload_params'])))" > schema.txt ||
      fail "schema"
    diff -u names.txt schema.txt > /dev/null || fail "schema's workload params differ from list-workloads"
    ;;
  list_models)
    expect_rc 0 "$napisim" list-models
    grep -q '^napi_irq ' cmd.out || fail "napi_irq not listed"
    LC_ALL=C sort -c cmd.out || fail "not sorted"
    ;;
  help)
    expect_rc 0 "$napisim" --help
    grep -q 'run' cmd.out || fail "no subcommands in --help"
    expect_rc 0 "$napisim" run --help
    grep -q -- '--set' cmd.out || fail "no --set in run --help"
    ;;
  bad_usage)
    expect_rc 2 "$napisim"
    expect_rc 2 "$napisim" nosuch-subcommand
    expect_rc 2 "$napisim" run --no-such-option
    ;;

  out_dir)
    mkdir out
    expect_rc 0 "$napisim" run "${short[@]}" --out out
    for f in result.json result.csv result.txt; do
      [ -s "out/$f" ] || fail "out/$f missing or empty"
    done
    listing=$(ls -A out | LC_ALL=C sort | tr '\n' ' ')
    [ "$listing" = "result.csv result.json result.txt " ] || fail "unexpected files in --out: $listing"
    grep -q '^throughput .* transactions/s' out/result.txt || fail "result.txt is not the summary"
    cmp -s cmd.out out/result.txt || fail "stdout (text) differs from result.txt"
    $py -c 'import json,sys; json.load(open(sys.argv[1]))' out/result.json || fail "result.json is not JSON"
    ;;
  trace_perfetto)
    # --trace: a Chrome JSON trace, the same bytes for the same seed, with CPU, NAPI and task
    # slices of both hosts inside the window asked for; bad windows and paths are bad input.
    expect_rc 0 "$napisim" run "${short[@]}" --trace a.json --trace-from 0.02 --trace-for 0.002
    grep -q '^throughput ' cmd.out || fail "--trace changed stdout"
    "$napisim" run "${short[@]}" --trace b.json --trace-from 0.02 --trace-for 0.002 > /dev/null 2>&1 || fail "run b failed"
    cmp -s a.json b.json || fail "two traces of the same seed differ"
    $py - a.json <<'PY' || fail "trace content"
import json, sys
t = json.load(open(sys.argv[1]))
ev = t["traceEvents"]
names = {e["pid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
assert set(names.values()) == {"server CPUs", "server tasks", "client0 CPUs", "client0 tasks",
                               "requests (sampled)"}, names
cats = {e.get("cat") for e in ev if e["ph"] in "Xi"}
assert {"cpu", "napi", "sched", "irq", "request", "stage"} <= cats, cats
assert t["otherData"]["napisim_window_ns"] == [20000000, 22000000]
for e in ev:
    if e["ph"] == "X":
        assert 20000.0 <= e["ts"] and e["ts"] + e["dur"] <= 22000.0 + 1e-9 and e["dur"] > 0, e
PY
    expect_bad_input '--trace-from' "$napisim" run "${short[@]}" --trace c.json --trace-from 5
    expect_bad_input "--trace-from" "$napisim" run "${short[@]}" --trace c.json --trace-from -1
    expect_bad_input '--trace-for' "$napisim" run "${short[@]}" --trace c.json --trace-for 0
    expect_bad_input '--trace-from' "$napisim" run "${short[@]}" --trace-from 0.02
    expect_bad_input '--trace' "$napisim" run "${short[@]}" --seeds 1,2 --trace c.json
    expect_bad_input '--trace' "$napisim" run "${short[@]}" --trace /nonexistent/napisim_e2e/t.json
    [ ! -e c.json ] || fail "a refused run wrote its trace"
    ;;
  interval_reports)
    # --interval: result.json's "intervals" tile the measured window; --format intervals prints one
    # line per interval; bad values and missing --interval are bad input.
    mkdir out
    expect_rc 0 "$napisim" run "${short[@]}" --interval 0.01 --format intervals --out out
    [ "$(grep -vc '^#' cmd.out)" -eq 5 ] || fail "expected 5 interval lines"
    $py - out/result.json <<'PY' || fail "intervals in result.json"
import json, sys
r = json.load(open(sys.argv[1]))
iv = r["intervals"]
assert len(iv) == 5 and abs(iv[0]["t_start_s"] - 0.01) < 1e-12 and abs(iv[-1]["t_end_s"] - 0.06) < 1e-12
assert sum(i["transactions"] for i in iv) == r["summary"]["transactions"]
PY
    # The summary (the default text) is followed by the same table.
    expect_rc 0 "$napisim" run "${short[@]}" --interval 0.01
    grep -q '^throughput ' cmd.out || fail "--interval lost the summary"
    [ "$(sed -n '/^#  t_end_s/,$p' cmd.out | grep -vc '^#')" -eq 5 ] || fail "no interval table after the summary"
    expect_bad_input '--interval' "$napisim" run "${short[@]}" --interval -1
    expect_bad_input '--interval' "$napisim" run "${short[@]}" --interval 1e-9
    expect_bad_input '--format' "$napisim" run "${short[@]}" --format intervals
    expect_bad_input '--interval' "$napisim" run "${short[@]}" --seeds 1,2 --interval 0.01
    ;;
  explain_table)
    # --explain: a table of stages by percentile band after the text output, the same for the
    # same seed; CSV carries it; workloads without attribution, and --seeds, are bad input.
    expect_rc 0 "$napisim" run "${short[@]}" --explain
    grep -q '^throughput ' cmd.out || fail "--explain lost the text output"
    grep -q '^# latency by stage' cmd.out || fail "no stage table"
    grep -Eq '^server\.net_rx_wait +[0-9.]+' cmd.out || fail "no server.net_rx_wait row"
    grep -Eq '^stage .* p99\.9-p99\.99 .* all$' cmd.out || fail "no band header"
    mv cmd.out a.txt
    "$napisim" run "${short[@]}" --explain > b.txt 2> /dev/null || fail "run b failed"
    cmp -s a.txt b.txt || fail "two runs of the same seed explain differently"
    expect_rc 0 "$napisim" run "${short[@]}" --explain --format csv
    head -1 cmd.out | grep -q 'latency_breakdown\.all\.client\.runq' || fail "CSV lacks the breakdown"
    printf '{"workload": {"type": "stream", "params": {}}, "duration_s": 0.01}\n' > stream.json
    expect_bad_input '--explain: latency attribution needs' "$napisim" run stream.json --explain
    expect_bad_input '--explain' "$napisim" run "${short[@]}" --seeds 1,2 --explain
    ;;
  out_nonexistent)
    expect_bad_input '--out' "$napisim" run "${short[@]}" --out /nonexistent/napisim_e2e
    [ ! -e /nonexistent ] || fail "/nonexistent was created"
    listing=$(ls -A)
    [ "$listing" = "$(printf 'cmd.err\ncmd.out')" ] || fail "files written: $listing"
    ;;

  schema)
    expect_rc 0 "$napisim" schema
    mv cmd.out schema.json
    expect_rc 0 "$napisim" validate "$src/scenarios/quickstart.json"
    mv cmd.out resolved.json
    $py - schema.json "$src/scenarios/quickstart.json" resolved.json << 'EOF' || fail "schema check failed"
import json, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
v = jsonschema.Draft202012Validator(schema)
ok = True
for name in sys.argv[2:]:
    doc = json.load(open(name))
    errors = sorted(v.iter_errors(doc), key=lambda e: list(e.path))
    for e in errors[:10]:
        print(f"{name}: /{'/'.join(map(str, e.path))}: {e.message}", file=sys.stderr)
    ok = ok and not errors
# The schema must reject what the loader rejects: an unknown key and an out-of-range value.
bad = json.load(open(sys.argv[2]))
bad["nics"][0]["rx_queus"] = 3
if v.is_valid(bad):
    print("schema accepts an unknown key /nics/0/rx_queus", file=sys.stderr)
    ok = False
bad = json.load(open(sys.argv[2]))
bad["nics"][0]["queues"] = 0
if v.is_valid(bad):
    print("schema accepts /nics/0/queues = 0", file=sys.stderr)
    ok = False
sys.exit(0 if ok else 1)
EOF
    ;;

  schema_targets)
    # schema --targets describes what calibrate accepts: the shipped targets file passes, and the
    # schema rejects what parse_targets_doc() rejects.
    expect_rc 0 "$napisim" schema --targets
    mv cmd.out targets_schema.json
    $py - targets_schema.json "$src/calibration/targets.json" << 'EOF' || fail "targets schema check failed"
import copy, json, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
v = jsonschema.Draft202012Validator(schema)
doc = json.load(open(sys.argv[2]))
ok = True
for e in list(v.iter_errors(doc))[:10]:
    print(f"/{'/'.join(map(str, e.path))}: {e.message}", file=sys.stderr)
    ok = False
def rejects(what, change):
    global ok
    bad = copy.deepcopy(doc)
    change(bad)
    if v.is_valid(bad):
        print("schema accepts " + what, file=sys.stderr)
        ok = False
rejects("an unknown key /targets/0/metirc", lambda d: d["targets"][0].update(metirc="throughput"))
rejects("a target without measured", lambda d: d["targets"][0].pop("measured"))
rejects("an unknown cost parameter", lambda d: d["params"].update(rx_skb_nss={"min": 1, "max": 2}))
rejects("fd_step 1", lambda d: d.update(fd_step=1))
rejects("weight -1", lambda d: d["targets"][0].update(weight=-1))
sys.exit(0 if ok else 1)
EOF
    expect_bad_input '/targets/0/metirc: unknown key' "$napisim" calibrate \
      <(sed '0,/"metric"/s//"metirc"/' "$src/calibration/targets.json") --dry-run
    ;;

  compare_explain)
    # compare --explain: each band's stages paired per seed; in every band the stages' changes add
    # up to the latency's; dearer skbs are called in the server's napi stage.
    $py - "$src/scenarios/quickstart.json" << 'EOF' || fail "cannot write the variant"
import json, sys
d = json.load(open(sys.argv[1]))
d.setdefault("costs", {})["rx_skb_ns"] = 4000
json.dump(d, open("dear.json", "w"))
EOF
    expect_rc 0 "$napisim" compare quickstart dear.json --seeds 1,2,3 --explain --format json \
      --set warmup_s=0.005 --set duration_s=0.02
    $py - cmd.out << 'EOF' || fail "compare --explain: wrong stage rows"
import json, sys
r = json.load(open(sys.argv[1]))
rows = [m for m in r["metrics"] if m.get("stage")]
bands = {}
for m in rows:
    band, stage = m["name"].split(" ", 1)
    bands.setdefault(band, {})[stage] = m["scenarios"][1]["change"]["mean"]
assert "all" in bands and "p0-p50" in bands, sorted(bands)
for band, ch in bands.items():
    total = sum(v for k, v in ch.items() if k != "latency")
    assert abs(total - ch["latency"]) <= 1e-6 * max(1.0, abs(ch["latency"])), (band, total, ch["latency"])
napi = next(m for m in rows if m["name"] == "all server.napi")["scenarios"][1]["change"]
assert napi["mean"] > 0 and napi["called"], napi
EOF
    expect_rc 0 "$napisim" compare quickstart dear.json --seeds 1,2 --explain --set warmup_s=0.005 \
      --set duration_s=0.01
    grep -q '^band stage (--explain)' cmd.out || fail "no stage table"
    grep -Eq '^all server\.napi +us .* us' cmd.out || fail "no 'all server.napi' row in us"
    printf '{"workload": {"type": "stream", "params": {}}, "duration_s": 0.01}\n' > stream.json
    expect_bad_input '--explain: latency attribution needs' "$napisim" compare stream.json stream.json --seeds 1 \
      --explain
    ;;
  compare_paired)
    # The same seeds under each scenario: a copy of the baseline changes nothing, exactly; dearer
    # packets lower throughput and raise CPU per op, called; intervals are Student t over seeds.
    $py - "$src/scenarios/quickstart.json" << 'EOF' || fail "cannot write the variants"
import json, sys
d = json.load(open(sys.argv[1]))
json.dump(d, open("same.json", "w"))
d.setdefault("costs", {})["rx_skb_ns"] = 4000
json.dump(d, open("dear.json", "w"))
EOF
    expect_rc 0 "$napisim" compare "$src/scenarios/quickstart.json" same.json dear.json --seeds 1,2,3 -j 2 \
      --set warmup_s=0.005 --set duration_s=0.02 --format json
    $py - cmd.out << 'EOF' || fail "compare: wrong paired statistics"
import json, math, sys
r = json.load(open(sys.argv[1]))
assert r["seeds"] == [1, 2, 3] and len(r["scenarios"]) == 3
t975 = {2: 12.706, 3: 4.303}
m = {row["metric"]: row for row in r["metrics"]}
for row in r["metrics"]:
    base, same, dear = row["scenarios"]
    assert same["change"]["mean"] == 0 and not same["change"]["called"], row["name"]
    for c in row["scenarios"]:
        xs = c["values"]; n = len(xs); mu = sum(xs) / n
        sd = math.sqrt(sum((x - mu) ** 2 for x in xs) / (n - 1))
        assert abs(c["mean"] - mu) <= 1e-9 * max(1, abs(mu)), row["name"]
        assert abs(c["ci95"] - t975[n] * sd / math.sqrt(n)) <= 1e-9 * max(1, sd), row["name"]
    d = [b - a for a, b in zip(base["values"], dear["values"])]
    assert abs(dear["change"]["mean"] - sum(d) / len(d)) <= 1e-9 * max(1, abs(sum(d))), row["name"]
thr = m["throughput"]["scenarios"][2]["change"]
cpu = m["cpu_us_per_op"]["scenarios"][2]["change"]
assert thr["relative_mean"] < 0 and thr["called"], thr
assert cpu["relative_mean"] > 0 and cpu["called"], cpu
EOF
    expect_rc 0 "$napisim" compare quickstart same.json --seeds 1,2 --set warmup_s=0.005 --set duration_s=0.01
    grep -q '^throughput ' cmd.out || fail "no table: $(head -3 cmd.out)"
    grep -q '^1: same.json' cmd.out || fail "no legend"
    expect_bad_input 'compare: expected at least two scenarios' "$napisim" compare quickstart
    # run --seeds: one scenario's mean +- CI over the seeds, the same numbers as compare's baseline.
    expect_rc 0 "$napisim" run same.json --seeds 1,2,3 --set warmup_s=0.005 --set duration_s=0.02 --format json
    $py - cmd.out << 'EOF' || fail "run --seeds: not one scenario over three seeds"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["seeds"] == [1, 2, 3] and len(r["scenarios"]) == 1
row = next(m for m in r["metrics"] if m["metric"] == "throughput")
assert len(row["scenarios"][0]["values"]) == 3 and "change" not in row["scenarios"][0]
EOF
    expect_bad_input '--seeds: give --seed or --seeds' "$napisim" run --seeds 1,2 --seed 3
    expect_bad_input 'not with --seeds' "$napisim" run --seeds 1,2 --out somewhere
    ;;
  validate_quickstart)
    expect_rc 0 "$napisim" validate "$src/scenarios/quickstart.json"
    $py - cmd.out << 'EOF' || fail "validate output is not the resolved scenario"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["name"] == "quickstart", r.get("name")
for key in ("platform", "topology", "nics", "kernel", "costs", "models", "workload"):
    assert key in r, key
assert r["nics"][0]["queues"] == 4
assert "num_flows" in r["workload"]["params"]
EOF
    ;;
  xml_platform)
    # A SimGrid platform XML gives the same paths as the equivalent built-in platform.
    expect_rc 0 "$napisim" run "$src/scenarios/examples/xml_platform.json" --format json
    mv cmd.out xml.json
    expect_rc 0 "$napisim" run "$src/scenarios/examples/xml_platform.json" --set platform.xml= \
      --set platform.clients.0.link_latency_ns=7000 --format json
    mv cmd.out inline.json
    $py - xml.json inline.json <<'PYEOF' || fail "XML and built-in platforms differ"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
assert a["fingerprint"] == b["fingerprint"], (a["fingerprint"], b["fingerprint"])
assert a["summary"]["throughput"] > 0
PYEOF
    ;;
  scenario:*)
    # Every shipped scenario runs (briefly), conserves requests, and follows the trajectory recorded
    # in tests/golden/fingerprints.json (tools/golden.sh, the same run, rewrites it when a change of
    # the model is meant to move it). Workloads with latency attribution run again with --explain,
    # which must not move the trajectory, and whose stages must account for every measured request
    # and sum to the histogram's latencies with every mark in path order.
    file=${case_name#scenario:}
    expect_rc 0 "$napisim" run "$src/scenarios/$file" --set warmup_s=0.005 --set duration_s=0.01 --format json
    mv cmd.out plain.json
    "$napisim" run "$src/scenarios/$file" --set warmup_s=0.005 --set duration_s=0.01 --format json --explain \
      > cmd.out 2> cmd.err
    rc=$?
    if [ "$rc" -eq 2 ] && grep -q -- '--explain: latency attribution needs' cmd.err; then
      cp plain.json cmd.out
    else
      [ "$rc" -eq 0 ] || fail "scenario $file --explain: exit $rc: $(cat cmd.err)"
    fi
    $py - cmd.out "$src/tests/golden/fingerprints.json" "$file" plain.json <<'PYEOF' || fail "scenario $file: bad result"
import json, sys
r = json.load(open(sys.argv[1]))
plain = json.load(open(sys.argv[4]))
assert "latency_breakdown" in r or plain["scenario"]["workload"]["type"] == "stream", "only stream lacks --explain"
# 1000 flows of 1 MB messages sharing 100 Gb/s under TCP need 80 ms a round: such a scenario
# completes nothing in this run, only moves packets.
if "latency_breakdown" in r and r["histogram"]["count"] > 0:
    b, h = r["latency_breakdown"], r["histogram"]
    assert b["clamped"] == 0, f"{b['clamped']} requests had marks out of path order"
    every = b["bands"][-1]
    assert every["band"] == "all" and every["requests"] == h["count"] > 0, (every["requests"], h["count"])
    assert abs(every["latency_ns"] - h["mean"]) <= 1e-9 * h["mean"], (every["latency_ns"], h["mean"])
    assert sum(x["requests"] for x in b["bands"][:-1]) == h["count"]
    for band in b["bands"]:
        assert all(v >= 0 for v in band["stage_ns"].values()), band
        total = sum(band["stage_ns"].values())
        assert abs(total - band["latency_ns"]) <= 1e-6 * max(1.0, total), band
c = r["conservation"]
assert c["sent"] == c["answered"] + c["in_flight"], c
assert r["summary"]["throughput"] > 0 or r["summary"]["rx_packets"] > 0, r["summary"]
golden = json.load(open(sys.argv[2]))["fingerprints"].get(sys.argv[3])
assert golden is not None, "no golden fingerprint: run tools/golden.sh"
for run in (plain, r):
    assert run["fingerprint"] == golden, (f"trajectory {run['fingerprint']} differs from the golden {golden}: "
                                          "if the model change is meant, run tools/golden.sh and say why")
PYEOF
    ;;
  bad_trace_file)
    # A malformed trace is bad input (exit 2) naming the pointer, the line and the column.
    printf 'timestamp,flow\n0,1\n0.001,oops\n' > bad.csv
    printf '{"workload": {"type": "trace", "params": {"file": "bad.csv"}}}\n' > trace.json
    expect_bad_input '/workload/params/file: ' "$napisim" run trace.json
    grep -qF 'line 3, column 2 (flow)' cmd.err || fail "stderr does not name line 3, column 2"
    ;;
  trace_gen)
    # trace-gen writes a trace the trace workload replays; the same spec gives the same file.
    spec='{"duration_s": 0.01, "rate_rps": 20000, "flows": 4, "seed": 5}'
    expect_rc 0 "$napisim" trace-gen "$spec" --out gen.csv
    "$napisim" trace-gen "$spec" > again.csv || fail "trace-gen to stdout failed"
    cmp -s gen.csv again.csv || fail "trace-gen is not deterministic"
    head -n 1 gen.csv | grep -qx 'timestamp,flow,request_size,response_size' || fail "bad header"
    printf '{"warmup_s": 0, "duration_s": 0.02, "workload": {"type": "trace", "params": {"file": "gen.csv"}}}\n' > t.json
    expect_rc 0 "$napisim" run t.json --format json
    n=$(($(wc -l < gen.csv) - 1))
    $py - cmd.out "$n" <<'PYEOF' || fail "trace replay did not send every request"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["conservation"]["sent"] == int(sys.argv[2]), (r["conservation"], sys.argv[2])
PYEOF
    expect_bad_input '/rate_rps' "$napisim" trace-gen '{"rate_rps": 0}'
    ;;
  calibrate_dry_run)
    # napisim calibrate --dry-run: residuals of the defaults on a tiny targets file, one relative point.
    cat > t.json <<JSON
{"seeds": [1, 2], "sets": {"warmup_s": 0.005, "duration_s": 0.02},
 "params": {"rx_skb_ns": {"min": 100, "max": 3000}},
 "targets": [
  {"name": "qs p50", "scenario": "$src/scenarios/quickstart.json", "metric": "latency_p50", "measured": 50000},
  {"name": "qs flows", "scenario": "$src/scenarios/quickstart.json", "metric": "throughput", "measured": 0.5,
   "baseline": {"scenario": "$src/scenarios/quickstart.json", "overrides": {"workload.params.num_flows": 8}}}]}
JSON
    expect_rc 0 "$napisim" calibrate t.json --dry-run -j 2
    grep -q '^  qs p50 ' cmd.out || fail "no row for the point"
    grep -q 'weighted residual sum w\*e^2: fitted points [0-9.]*' cmd.out || fail "no weighted residual"
    [ ! -e fitted_costs.json ] || fail "a dry run wrote a parameter file"
    expect_bad_input '/params/rx_skb_nss: unknown cost parameter' "$napisim" calibrate <(sed 's/rx_skb_ns"/rx_skb_nss"/' t.json) --dry-run
    # A metric missing from the results is found at the first evaluation (after the header line).
    expect_rc 2 "$napisim" calibrate <(sed 's/latency_p50/latency_p42/' t.json) --dry-run -j 1
    grep -q '^napisim: error: /targets/0/metric: no numeric summary value "latency_p42"' cmd.err || fail "metric error"
    # A simulation the point asked for that rejects its input names the point (here its baseline).
    expect_rc 2 "$napisim" calibrate <(sed 's/num_flows": 8/num_flows": -3/' t.json) --dry-run -j 1
    grep -q '^napisim: error: /targets/1/baseline: simulation failed (exit 2) .*/workload/params/num_flows' cmd.err ||
      fail "a failed point's simulation is not named by its point"
    ;;
  pgo_same_results)
    # A profile-guided build (tools/build.sh) must simulate exactly what the same code compiled
    # without the profile does: its instrumented twin in pgo/gen (its counters go to this work
    # directory, not into the build's profile). Other builds skip (77).
    gen=$(dirname "$napisim")/pgo/gen/napisim
    [ -x "$gen" ] || { echo "skip [$case_name]: not a profile-guided build"; exit 77; }
    # The twin is built when the profile is taken; after later edits it is other code (its git
    # sha, which names uncommitted changes too, differs): nothing to compare until a retrain.
    sha() { "$1" run --set duration_s=0.001 --set warmup_s=0 --format json 2>/dev/null |
              $py -c 'import json, sys; print(json.load(sys.stdin)["context"]["git_sha"])'; }
    sha_pgo=$(sha "$napisim") || fail "no git sha from $napisim"
    sha_gen=$(GCOV_PREFIX=$work/gcov sha "$gen") || fail "no git sha from $gen"
    if [ "$sha_pgo" != "$sha_gen" ]; then
      echo "skip [$case_name]: the instrumented twin is from $sha_gen, this build from $sha_pgo" \
           "(NAPISIM_PGO=retrain tools/build.sh)"
      exit 77
    fi
    for f in quickstart wei2020/tcp_rr_1B.json wei2020/tcp_rr_1B_kthread.json kicinski2020/workq.json \
             karsten2024/suspend20.json gulati2024/epoll_busyloop_15.json tkhai2018/rr400_10g_rfs.json; do
      [ "$f" = quickstart ] || f=$src/scenarios/$f
      "$napisim" run "$f" "${short[@]}" --format json > pgo.json 2> pgo.err || fail "$f: run failed"
      GCOV_PREFIX=$work/gcov "$gen" run "$f" "${short[@]}" --format json > gen.json 2> gen.err ||
        fail "$f: instrumented run failed"
      $py - pgo.json gen.json <<'PYEOF' || fail "$f: the profile-guided build's result differs"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
for r in (a, b):
    del r["context"]
assert a["fingerprint"], a
if a != b:
    diff = [k for k in a if a[k] != b.get(k)]
    sys.exit(f"differs in {diff}")
PYEOF
    done
    ;;
  validate_bad)
    printf '{"nics": [{"queues": 0}]}\n' > bad.json
    expect_bad_input '/nics/0/queues: expected integer in [1, 1024], got 0' "$napisim" validate bad.json
    ;;

  *)
    fail "unknown case"
    ;;
esac
echo "ok [$case_name]"

#!/usr/bin/env bash
# Fuzzes napisim's input parsers with libFuzzer under AddressSanitizer + UndefinedBehaviorSanitizer:
# the scenario loader (includes and --set), the trace reader and the cpulist parser.
#
#   tools/fuzz.sh            60 s per target (what CI runs)
#   tools/fuzz.sh 600        a long run: 10 minutes per target
#   tools/fuzz.sh 60 trace   one target
#
# Builds in build-fuzz/ with clang++-14 (installed with libFuzzer by tools/setup.sh). The corpus of
# each target grows in build-fuzz/corpus/<target> from a seed of the shipped scenarios, traces and
# cpulists and of tests/fuzz/regressions/<target> (inputs that once failed). A failing input is
# saved as build-fuzz/artifacts/<target>-crash-*; the script then exits 1. Every failure found
# becomes a regression input there and a unit test.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
secs=${1:-60}
targets=${2:-"scenario trace cpulist"}
build=${NAPISIM_FUZZ_BUILD_DIR:-$root/build-fuzz}
"$root/tools/setup.sh" clang-14 libclang-rt-14-dev libfuzzer-14-dev
if [ ! -f "$build/CMakeCache.txt" ]; then
  CXX=clang++-14 cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNAPISIM_FUZZ=ON \
    -DNAPISIM_SANITIZE="address;undefined" -DNAPISIM_BUILD_TESTS=OFF -DNAPISIM_BUILD_PYTHON=OFF \
    -DNAPISIM_LTO=OFF > "$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
fi
names=()
for t in $targets; do names+=("napisim_${t}_fuzz"); done
cmake --build "$build" -j"$(nproc)" --target "${names[@]}" > "$build.build.log" 2>&1 ||
  { grep -vE '^\[ *[0-9]+%\]|^$' "$build.build.log" | tail -40; exit 1; }

# Seed corpora (regenerated each time; libFuzzer adds what it finds beside them).
seed_corpus() {  # seed_corpus TARGET DIR
  local t=$1 dir=$2
  mkdir -p "$dir"
  case $t in
    scenario)
      for f in "$root"/scenarios/quickstart.json "$root"/scenarios/*/*.json; do
        cp "$f" "$dir/$(basename "$(dirname "$f")")_$(basename "$f")"
      done ;;
    trace)  # first byte: format (0 auto, 1 csv, 2 neper) and repeat (bit 2)
      for f in "$root"/scenarios/traces/*.csv; do
        { printf '\001'; head -c 4000 "$f"; } > "$dir/$(basename "$f")"
      done
      printf '\000timestamp,flow,request_size,response_size\n0,1,64,64\n0.5,2,100,10\n' > "$dir/small.csv"
      printf '\002      timestamp  thread_id    flow_id          rtt\n    0.000100000          0          0  0.000050000\n    0.000120000          1          0  0.000100000\n' > "$dir/neper.txt" ;;
    cpulist)  # first two bytes: CPU count - 1, little-endian
      local i=0
      for l in 0 0-7 1,3,5 0-55:2/4 28-55 "" all 0-3,8-11 7-0 0-99999999999; do
        printf '\067\000%s' "$l" > "$dir/list$i"
        i=$((i + 1))
      done ;;
  esac
  if [ -d "$root/tests/fuzz/regressions/$t" ]; then cp "$root/tests/fuzz/regressions/$t"/* "$dir"/ 2>/dev/null || true; fi
}

mkdir -p "$build/artifacts"
status=0
for t in $targets; do
  corpus=$build/corpus/$t
  seed_corpus "$t" "$corpus"
  echo "fuzz: $t for ${secs} s" >&2
  # Leak checking is off as in the ASan unit tests (coroutine frames are pooled by design).
  if ! ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
       "$build/napisim_${t}_fuzz" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
       -print_final_stats=1 -artifact_prefix="$build/artifacts/$t-" "$corpus" > "$build/fuzz-$t.log" 2>&1; then
    echo "fuzz: $t FAILED; see $build/fuzz-$t.log and $build/artifacts/" >&2
    grep -E "ERROR|SUMMARY|Test unit written" "$build/fuzz-$t.log" | head -20 >&2 || true
    status=1
  fi
  grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb|cov:" "$build/fuzz-$t.log" | tail -3 >&2 || true
done
exit $status

#!/usr/bin/env bash
# Configures (once) and builds napisim in build/ (Release). Incremental: cheap when up to date.
#
# A Release build without sanitizers is profile-guided (GCC PGO) unless NAPISIM_PGO=0: its first
# build compiles an instrumented napisim in $build/pgo/gen, runs every scenario in scenarios/ for
# 20 ms to record a profile in $build/pgo/profile, then builds $build with that profile (about
# 3 minutes more, once). Later builds reuse the profile; NAPISIM_PGO=retrain takes a new one (after
# large changes to the hot path: functions edited since are compiled without profile data).
#
#   tools/build.sh                     everything: napisim, the tests, the Python module
#   tools/build.sh --target napisim    only what the arguments name (cmake --build's)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NAPISIM_BUILD_DIR:-$root/build}
pgo=${NAPISIM_PGO:-1}
# ccache (optional, a developer convenience) lets several build directories share compiled objects.
launcher=""
if command -v ccache >/dev/null; then
  launcher="-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"
  export CCACHE_BASEDIR="$root"
fi
# shellcheck disable=SC2086  # NAPISIM_CMAKE_ARGS is a list of arguments
configure() {  # configure DIR LOG [extra cmake args]
  local dir=$1 log=$2
  shift 2
  cmake -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE=/usr/bin/python3 \
        -DPYBIND11_FINDPYTHON=ON $launcher ${NAPISIM_CMAKE_ARGS:-} "$@" > "$log" 2>&1 ||
    { cat "$log"; exit 1; }
}
compile() {  # compile DIR [cmake --build args]
  local dir=$1
  shift
  # With pipefail the pipeline fails with cmake's status; the filter's own "no line left" is not one.
  cmake --build "$dir" -j"$(nproc)" "$@" 2>&1 | { grep -vE '^\[ *[0-9]+%\]|^-- |^$|Consolidate compiler' || true; }
}
cache_value() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }

[ -f "$build/CMakeCache.txt" ] || configure "$build" "$build.configure.log"

build_args=()

if [ "$pgo" != 0 ] && [ "$(cache_value CMAKE_BUILD_TYPE)" = Release ] && [ -z "$(cache_value NAPISIM_SANITIZE)" ] &&
   { [ "$pgo" = retrain ] || [ "$(cache_value NAPISIM_PGO)" != use ] || [ ! -d "$build/pgo/profile" ]; }; then
  # The training runs: every scenario, short, so every model's hot path is in the profile.
  gen=$build/pgo/gen
  profile=$build/pgo/profile
  rm -rf "$profile"
  echo "napisim: profile-guided build: training an instrumented build ($gen)" >&2
  configure "$gen" "$build.pgo-configure.log" -DNAPISIM_BUILD_TESTS=OFF -DNAPISIM_BUILD_PYTHON=OFF \
            -DNAPISIM_PGO=generate -DNAPISIM_PGO_DIR="$profile"
  compile "$gen" --target napisim
  for scenario in quickstart "$root"/scenarios/*/*.json; do
    "$gen/napisim" run "$scenario" --set duration_s=0.02 --set warmup_s=0.01 --format json >/dev/null ||
      { echo "napisim: PGO training run failed: $scenario" >&2; exit 1; }
  done
  # Switching to "use" changes every compile command, so everything is rebuilt; a new profile under
  # an unchanged command line is not a dependency make knows of: rebuild from clean.
  if [ "$(cache_value NAPISIM_PGO)" = use ]; then build_args+=(--clean-first); fi
  cmake -S "$root" -B "$build" -DNAPISIM_PGO=use -DNAPISIM_PGO_DIR="$profile" >> "$build.configure.log" 2>&1 ||
    { cat "$build.configure.log"; exit 1; }
elif [ "$pgo" = 0 ] && [ -n "$(cache_value NAPISIM_PGO)" ]; then
  cmake -S "$root" -B "$build" -DNAPISIM_PGO= >> "$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
fi
compile "$build" "${build_args[@]}" "$@"

#!/usr/bin/env bash
# Configures (once) and builds napisim in build/ (Release). Incremental: cheap when up to date.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NAPISIM_BUILD_DIR:-$root/build}
# ccache (optional, a developer convenience) lets several build directories share compiled objects.
launcher=""
if command -v ccache >/dev/null; then
  launcher="-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"
  export CCACHE_BASEDIR="$root"
fi
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE=/usr/bin/python3 \
        -DPYBIND11_FINDPYTHON=ON $launcher ${NAPISIM_CMAKE_ARGS:-} > "$build.configure.log" 2>&1 ||
    { cat "$build.configure.log"; exit 1; }
fi
cmake --build "$build" -j"$(nproc)" 2>&1 | grep -vE '^\[ *[0-9]+%\]|^-- |^$|Consolidate compiler' || true
test "${PIPESTATUS[0]}" -eq 0

#!/usr/bin/env bash
# `cmake --install` into a temporary prefix gives a working napisim and `import napisim`, run from a
# directory outside the source tree: both resolve scenario names against the scenarios installed
# with them, not the source tree the build came from.
#
# Usage: install_test.sh BUILD_DIR PYTHONDIR SCENARIOSDIR SOURCE_DIR WORK_DIR
#   (PYTHONDIR, SCENARIOSDIR: NAPISIM_INSTALL_PYTHONDIR and NAPISIM_INSTALL_SCENARIOSDIR, relative
#   to the prefix)
set -euo pipefail
build=$1 pydir=$2 scenariosdir=$3 src=$4 work=$5
prefix=$work/prefix
fail() {
  echo "FAIL [install]: $*" >&2
  exit 1
}
rm -rf "$work"
mkdir -p "$work/elsewhere"
cmake --install "$build" --prefix "$prefix" > "$work/install.log" || { cat "$work/install.log"; fail "cmake --install"; }
cd "$work/elsewhere"
unset NAPISIM_SCENARIOS PYTHONPATH
export NAPISIM_CACHE=$work/cache

"$prefix/bin/napisim" --version | grep -q '^napisim [0-9.]* (' || fail "--version"
"$prefix/bin/napisim" run wei2020/tcp_rr_1B --set duration_s=0.002 --set warmup_s=0.001 > run.txt 2> run.err ||
  fail "installed napisim run wei2020/tcp_rr_1B: $(cat run.err)"
cat run.txt
grep -q '^napisim [0-9.]* (.*): scenario wei2020/tcp_rr_1B, seed 1$' run.txt || fail "ran another scenario"
grep -Eq '^throughput +[1-9][0-9]* transactions/s' run.txt || fail "no throughput"
# Names resolve against the installed copy only.
if "$prefix/bin/napisim" run no/such/scenario > /dev/null 2> err.txt; then fail "an unknown name ran"; fi
grep -qF "(searched $prefix/$scenariosdir, " err.txt || fail "not searched in the prefix: $(cat err.txt)"
! grep -qF "$src/scenarios," err.txt || fail "the installed napisim searched the source tree: $(cat err.txt)"
[ "$("$prefix/bin/napisim" list-scenarios | wc -l)" -eq "$(find "$src/scenarios" -name '*.json' | wc -l)" ] ||
  fail "list-scenarios does not list every installed scenario"

PYTHONPATH="$prefix/$pydir" /usr/bin/python3 - "$prefix" "$src" <<'PY' || fail "import napisim from the prefix"
import sys
import napisim
prefix, src = sys.argv[1], sys.argv[2]
assert napisim.__file__.startswith(prefix + "/"), napisim.__file__
dirs = [str(d) for d in napisim.scenario_dirs()]
assert dirs[0].startswith(prefix + "/") and src + "/scenarios" not in dirs, dirs
assert "wei2020/tcp_rr_1B" in napisim.list_scenarios()
r = napisim.run("wei2020/tcp_rr_1B", duration_s=0.002, warmup_s=0.001)
assert r.context["scenario"] == "wei2020/tcp_rr_1B" and r.summary["throughput"] > 0, r.context
from napisim import validation
assert validation.load_datasets(), "no datasets installed"
print("import napisim from", napisim.__file__, "ran wei2020/tcp_rr_1B:", r.summary["throughput"], "transactions/s")
PY

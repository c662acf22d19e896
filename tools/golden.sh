#!/usr/bin/env bash
# Regenerates tests/golden/fingerprints.json: the trajectory fingerprint of a short run (5 ms
# warm-up + 10 ms) of every shipped scenario, which CTest's e2e.scenario:* cases compare with. A
# change meant to leave behaviour alone leaves this file as it is; a change of the model updates it
# here, in the same commit, and says why.
#
#   tools/golden.sh            (NAPISIM_BUILD_DIR picks the build, default build/)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(realpath -m "${NAPISIM_BUILD_DIR:-$root/build}")
"$root/tools/build.sh" >/dev/null
cd "$root/scenarios"
out=$root/tests/golden/fingerprints.json
mkdir -p "$(dirname "$out")"
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
find . -name '*.json' | sed 's|^\./||' | LC_ALL=C sort | while read -r f; do
  # The same run as tests/e2e/e2e.sh's scenario:* case.
  fp=$("$build/napisim" run "$f" --set warmup_s=0.005 --set duration_s=0.01 --format json |
       /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["fingerprint"])')
  printf '%s\t%s\n' "$f" "$fp"
done >"$tmp"
/usr/bin/python3 - "$tmp" "$out" <<'PYEOF'
import json, sys
rows = dict(line.rstrip("\n").split("\t") for line in open(sys.argv[1]) if line.strip())
doc = {"description": "Trajectory fingerprints of every shipped scenario run for 5 ms + 10 ms "
                      "(tools/golden.sh writes this file; tests/e2e/e2e.sh's scenario:* cases check it).",
       "fingerprints": rows}
open(sys.argv[2], "w").write(json.dumps(doc, indent=1, sort_keys=True) + "\n")
PYEOF
echo "wrote $out ($(grep -c '\.json"' "$out") scenarios)"

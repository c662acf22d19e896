#!/usr/bin/env bash
# Formats every C++ file of the project (sim/ models/ python/ tests/) with .clang-format, using
# clang-format 14 (Debian 12's: another version may break lines differently).
#
#   tools/format.sh           rewrite the files in place
#   tools/format.sh --check   list the files that differ and exit 1 if any does (CTest: format.check)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cf=$(command -v clang-format-14 || true)
if [ -z "$cf" ]; then
  echo "format.sh: clang-format-14 not found (tools/setup.sh installs it)" >&2
  exit 2
fi
cd "$root"
mapfile -t files < <(find sim models python tests -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' \) | LC_ALL=C sort)
if [ "${1:-}" != --check ]; then
  "$cf" -i "${files[@]}"
  exit 0
fi
bad=0
for f in "${files[@]}"; do
  if ! "$cf" "$f" | cmp -s - "$f"; then
    echo "format.sh: $f differs from .clang-format (run tools/format.sh)"
    bad=1
  fi
done
exit $bad

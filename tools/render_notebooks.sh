#!/usr/bin/env bash
# Executes every notebook (or the ones named) at full size and writes it, outputs and plots
# included, to notebooks/rendered/<notebook>.ipynb: the copy a clone shows without running anything.
# The notebooks in notebooks/ are the sources (committed without outputs). Results are cached
# (~/.cache/napisim or $NAPISIM_CACHE), so a second render only recomputes what changed.
# Usage: tools/render_notebooks.sh [notebooks/NN_name.ipynb ...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NAPISIM_BUILD_DIR:-$root/build}
"$root/tools/setup.sh"
NAPISIM_BUILD_DIR="$build" "$root/tools/build.sh"
if [ $# -eq 0 ]; then
  set -- "$root"/notebooks/*.ipynb
fi
export PYTHONPATH="$build/python${PYTHONPATH:+:$PYTHONPATH}"
export JUPYTER_PATH="$build/jupyter${JUPYTER_PATH:+:$JUPYTER_PATH}"
unset NAPISIM_NOTEBOOK_SMALL MPLBACKEND
exec /usr/bin/python3 -m napisim._notebooks render --out "$root/notebooks/rendered" "$@"

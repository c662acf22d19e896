#!/usr/bin/env bash
# Regenerates VALIDATION.md and validation/*.png: every published dataset (validation/datasets.json)
# run through napisim with several seeds, side by side with the published tables and directions.
# Builds first if needed. Results are cached (napisim.sweep), so a rerun only simulates what changed.
#
#   tools/validate.sh            full sizes, seeds 1-5
#   tools/validate.sh --quick    reduced durations, seeds 1-3 (minutes on 2 cores)
#   tools/validate.sh --include calibration/fitted_costs.json   with a calibrated parameter set
#   tools/validate.sh --only gulati2024,tkhai2018                some datasets (writes only those)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NAPISIM_BUILD_DIR:-$root/build}
NAPISIM_BUILD_DIR=$build "$root/tools/build.sh"
cd "$root"
export PYTHONPATH="$build/python${PYTHONPATH:+:$PYTHONPATH}" MPLBACKEND=Agg
exec /usr/bin/python3 -m napisim.validation -j "$(nproc)" "$@"

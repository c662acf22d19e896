#!/usr/bin/env bash
# Installs every Debian package napisim needs to build, test and run its notebooks.
# Idempotent: does nothing when everything is present. Nothing comes from outside Debian's archive.
set -euo pipefail
PKGS=(
  build-essential cmake pkg-config git
  libsimgrid-dev libeigen3-dev nlohmann-json3-dev pybind11-dev libgtest-dev libcli11-dev
  python3-dev python3-numpy python3-pandas python3-matplotlib python3-pytest python3-pybind11
  python3-jsonschema python3-nbclient python3-ipykernel python3-nbformat python3-distributed python3-tqdm
  jupyter-nbconvert valgrind clang-format-14
  libhwloc-dev hwloc ethtool
)
PKGS+=("$@")  # extra packages a tool needs (tools/fuzz.sh: clang and libFuzzer)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "setup: installing ${missing[*]}" >&2
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2

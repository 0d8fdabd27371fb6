#!/usr/bin/env bash
# Builds the attnsel CLI from this checkout into BUILD_DIR (default: build-cli) and prints the
# binary's path on stdout; everything else goes to stderr. Used by the pre-commit hook
# attnsel-check-from-source and by the GitHub Action. A second run rebuilds only what changed.
#
# Needs cmake, a C++17 compiler, CLI11, fmt, nlohmann-json, toml++ (and yaml-cpp for YAML inputs). On a
# Debian or Ubuntu host where they are missing it installs them with apt-get when it may (root, or
# ATTNSEL_APT_SUDO=1 for passwordless sudo, as on GitHub's runners); otherwise it says what to install.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${1:-$root/build-cli}
packages=(cmake g++ libcli11-dev nlohmann-json3-dev libfmt-dev libyaml-cpp-dev libtomlplusplus-dev)

missing=()
if command -v dpkg-query >/dev/null 2>&1; then
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
fi
if ((${#missing[@]} > 0)); then
  apt=()
  if [[ $(id -u) -eq 0 ]]; then apt=(env DEBIAN_FRONTEND=noninteractive)
  elif [[ "${ATTNSEL_APT_SUDO:-0}" == 1 ]]; then apt=(sudo env DEBIAN_FRONTEND=noninteractive)
  fi
  if ((${#apt[@]} == 0)); then
    echo "attnsel: to build attnsel, install: sudo apt-get install -y ${missing[*]}" >&2
    exit 2
  fi
  echo "attnsel: installing ${missing[*]}" >&2
  "${apt[@]}" apt-get update -qq >&2
  "${apt[@]}" apt-get install -y -qq "${missing[@]}" >&2
fi
command -v cmake >/dev/null 2>&1 || { echo "attnsel: cmake is needed to build attnsel" >&2; exit 2; }

jobs=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
# The portable build links libstdc++ statically: the binary can be cached and moved between runners.
cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DATTNSEL_BUILD_TESTS=OFF -DATTNSEL_INSTALL=OFF \
      -DATTNSEL_PORTABLE=ON >&2
cmake --build "$build_dir" -j"$jobs" --target attnsel_cli >&2
binary="$build_dir/tools/attnsel/attnsel"
[[ -x "$binary" ]] || { echo "attnsel: the build produced no $binary" >&2; exit 2; }
echo "$binary"

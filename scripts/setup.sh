#!/usr/bin/env bash
# Installs what is missing (Debian packages), configures and builds tessel.
# Usage: scripts/setup.sh [--sanitize]   (the sanitizer build goes to build-asan/)
# Safe to run again: nothing is reinstalled, and the build is incremental.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake ninja-build g++ llvm-14-dev llvm-14-tools libfmt-dev libgtest-dev
          libopenblas-dev liblapacke-dev libbenchmark-dev python3 python3-numpy gnuplot-nox)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  sudo_cmd=""; [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi

build=build; extra=()
if [ "${1:-}" = "--sanitize" ]; then build=build-asan; extra=(-DTESSEL_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug); fi
if [ ! -f "$build/build.ninja" ]; then
  cmake -S . -B "$build" -G Ninja "${extra[@]}" >/dev/null
fi
cmake --build "$build"

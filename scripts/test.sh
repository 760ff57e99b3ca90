#!/usr/bin/env bash
# Builds tessel (installing what is missing) and runs the whole test suite through ctest.
# Usage: scripts/test.sh [--sanitize]   (AddressSanitizer + UBSan build in build-asan/)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh "$@"
build=build; [ "${1:-}" = "--sanitize" ] && build=build-asan
ctest --test-dir "$build" --output-on-failure -j"$(nproc)"

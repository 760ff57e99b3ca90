#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, clang + ASan + UBSan, in build-fuzz/) and
# runs each one for a bounded time. Any crash, sanitizer report, timeout or
# out-of-memory fails the run; the input is kept in build-fuzz/crashes/NAME/.
#
# Usage: scripts/fuzz.sh [--seconds N] [TARGET...]
#   --seconds N   fuzzing time per target (default 30: the CI budget; a longer
#                 developer run: scripts/fuzz.sh --seconds 1800)
#   TARGET        tsl tir tasm npy target tune-cache tune-report (default: all)
#
# Each run first replays fuzz/regressions/NAME/ (inputs that once crashed),
# then fuzzes from the seed corpus: examples/ and tests/ files of the format,
# fuzz/seeds/NAME/, the regressions, and what earlier runs found
# (build-fuzz/corpus/NAME/, kept between runs).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=30
targets=()
while (($#)); do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --seconds=*) seconds="${1#*=}"; shift ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) targets+=("$1"); shift ;;
  esac
done
((${#targets[@]})) || targets=(tsl tir tasm npy target tune-cache tune-report)

command -v clang++ >/dev/null || { echo "fuzz: clang++ is needed (libFuzzer): apt-get install clang" >&2; exit 2; }
build=build-fuzz
launcher=(); command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
if [ ! -f "$build/build.ninja" ]; then
  # -O1 with assertions on (a failed assert is a finding too).
  cmake -S . -B "$build" -G Ninja -DTESSEL_FUZZ=ON -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
        -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" "${launcher[@]}" >/dev/null
fi
cmake --build "$build" --target fuzzers -j"${FUZZ_BUILD_JOBS:-2}"

# The seed files of one target's format, found in the repository.
seed_files() {
  case "$1" in
    tsl)  find examples tests -name '*.tsl' ;;
    tir)  find tests -name '*.tir' ;;
    tasm) find tests -name '*.tasm' ;;
    target) find runtime/targets tests -name '*.json' ;;
    *) ;;
  esac
}

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:allocator_may_return_null=1"
export UBSAN_OPTIONS="halt_on_error=1:abort_on_error=1:print_stacktrace=1"
summary=()
failed=0
for name in "${targets[@]}"; do
  bin="$build/bin/fuzz-$name"
  [ -x "$bin" ] || { echo "fuzz: no target '$name' ($bin)" >&2; exit 2; }
  regressions="fuzz/regressions/$name"
  seeds="$build/seeds/$name"; corpus="$build/corpus/$name"; crashes="$build/crashes/$name"
  rm -rf "$seeds"; mkdir -p "$seeds" "$corpus" "$crashes"
  while IFS= read -r f; do cp "$f" "$seeds/$(echo "$f" | tr / _)"; done < <(seed_files "$name")
  [ -d "fuzz/seeds/$name" ] && cp fuzz/seeds/"$name"/* "$seeds"/ 2>/dev/null || true

  dirs=("$corpus" "$seeds")
  if compgen -G "$regressions/*" >/dev/null; then
    dirs+=("$regressions")
    if ! "$bin" "$regressions"/* >"$build/$name-regressions.log" 2>&1; then
      echo "fuzz: $name: a regression input fails again (log: $build/$name-regressions.log)" >&2
      tail -30 "$build/$name-regressions.log" >&2
      failed=1; summary+=("$name: REGRESSION"); continue
    fi
  fi

  log="$build/$name.log"
  if "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
       -print_final_stats=1 -artifact_prefix="$crashes/" \
       "${dirs[@]}" >"$log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    summary+=("$name: ${runs:-?} executions in ${seconds} s, no crash")
  else
    echo "fuzz: $name FAILED (log: $log); the input is in $crashes/." >&2
    echo "  Fix it, then add the input to $regressions/ (it is replayed first from then on)." >&2
    grep -m1 -A25 'ERROR\|runtime error\|fuzz invariant\|Assertion' "$log" >&2 || tail -30 "$log" >&2
    failed=1; summary+=("$name: FAILED")
  fi
done
printf 'fuzz: %s\n' "${summary[@]}"
exit "$failed"

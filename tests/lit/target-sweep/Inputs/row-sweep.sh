#!/bin/sh
# Usage: row-sweep.sh EXAMPLE.tsl ROWS "CHECKED" [tessel run options...]
#
# Runs EXAMPLE on the 64-partition synthetic target (../target/Inputs/
# synthetic-target.json) at -O0 and -O2 for each row count below, setting the
# rows with -D ROWS=M: 1 and 7 are under one row tile; 100, 129 and 130 end in
# a partial tile; 192 is three tiles (a row strip of no power of two of them);
# 647 is ten tiles and a partial one. Row counts listed in CHECKED run with
# --check (the numerics against the fp32 reference); the others with
# --timing-only, which still compiles and verifies the kernel and checks
# every access against its buffer, but skips the numerics (whose cost grows
# with the weights, not the rows). Prints one line per run; stops at the
# first failure with tessel's output.
example=$1 rows=$2 checked=$3
shift 3
target=$(dirname "$0")/../../target/Inputs/synthetic-target.json
for m in 1 7 100 129 130 192 647; do
  case " $checked " in
    *" $m "*) mode=--check ;;
    *) mode=--timing-only ;;
  esac
  for opt in -O0 -O2; do
    if ! out=$(tessel run "$example" -D "$rows=$m" "$opt" "$mode" --report=json --target="$target" "$@" 2>&1); then
      printf 'FAILED: %s=%s %s %s\n%s\n' "$rows" "$m" "$opt" "$mode" "$out"
      exit 1
    fi
    if [ "$mode" = --check ] && ! printf '%s\n' "$out" | grep -q '"passed": true'; then
      printf 'FAILED: %s=%s %s %s: no passed check\n%s\n' "$rows" "$m" "$opt" "$mode" "$out"
      exit 1
    fi
    echo "ok: $rows=$m $opt $mode"
  done
done

#!/bin/bash
# Emits the examples that use every op kind (the GELU and the factorised SiLU MLP) at -O0 and -O2 for both API generations (current on
# trn2, legacy on trn1) and holds each file to nki_signatures.py.
# usage: signatures-all.sh EXAMPLES_DIR WORKDIR   (writes WORKDIR/current.txt, legacy.txt)
set -e
examples=$1 work=$2
here=$(dirname "$0")
for spec in vit_gelu_mlp: llama32_1b_swiglu_mlp:R=128; do
  ex=${spec%%:*} defs=${spec#*:}
  for o in -O0 -O2; do
    for gen in current:trn2 legacy:trn1; do
      api=${gen%%:*} target=${gen#*:}
      tessel compile "$examples/$ex.tsl" -D M=7 ${defs:+-D $defs} $o --target=$target --emit=nki -o "$work/$ex$o.$api.py"
      python3 "$here/nki_signatures.py" $api "$work/$ex$o.$api.py" >> "$work/$api.txt"
    done
  done
done

# nisa.tensor_partition_reduce: a tile's columns folded over its 128 partitions on the GpSimd
# engine, into a [1, F] tile; add in the legacy returned form, max in the current one (dst first).
# Checked against numpy on trn1 and trn2; folding only the first 64 partitions fails the reference.
# REQUIRES: numpy
# RUN: tessel compile %s -k column_stats --arg x=f32[128,256] | FileCheck %s
# RUN: tessel run %s -k column_stats --arg x=f32[128,256] --check --reference %S/Inputs/refs.py:column_sums_maxes --target trn1 | FileCheck %s --check-prefix=PASS
# RUN: tessel run %s -k column_stats --arg x=bf16[128,256] --check --reference %S/Inputs/refs.py:column_sums_maxes --target trn2 | FileCheck %s --check-prefix=PASS
# RUN: not tessel run %s -k column_stats_half --arg x=f32[128,256] --check --reference %S/Inputs/refs.py:column_sums_maxes > %t.out 2> %t.err
# RUN: FileCheck %s --check-prefix=FAIL < %t.out
# RUN: FileCheck %s --check-prefix=FAILERR < %t.err
# CHECK: tensor_partition_reduce add %sums[0 +: 1, 0 +: 256] <- %xt[0 +: 128, 0 +: 256]
# CHECK: tensor_partition_reduce max %maxes[0 +: 1, 0 +: 256] <- %xt[0 +: 128, 0 +: 256]
# PASS: check: PASSED
# FAIL: check: FAILED
# FAILERR: error: check failed
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


def _column_stats(x, rows):
    out = nl.ndarray((2, x.shape[1]), dtype=x.dtype, buffer=nl.shared_hbm)
    xt = nl.load(x)
    sums = nisa.tensor_partition_reduce(np.add, xt[0:rows, :])
    maxes = nl.ndarray((1, x.shape[1]), dtype=x.dtype, buffer=nl.sbuf)
    nisa.tensor_partition_reduce(maxes, nl.maximum, xt[0:rows, :])
    nl.store(out[0:1, :], value=sums)
    nl.store(out[1:2, :], value=maxes)
    return out


@nki.jit
def column_stats(x):
    return _column_stats(x, 128)


@nki.jit
def column_stats_half(x):
    return _column_stats(x, 64)

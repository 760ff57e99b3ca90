# `.reshape` of a tensor whose new dimensions split the old ones is an access pattern of it
# (docs/nki.md): RMSNorm with a 1-D weight reshaped to [1, D] as AWS's RMSNorm tutorial loads it
# (`g.reshape((1, D))`), and sums of adjacent column pairs of an SBUF tile read as [P, F/2, 2]. A
# reshape that pairs the wrong columns ([P, 2, F/2], summed over the 2) fails the reference (one that
# merges dimensions is an error: err-reshape.py).
# REQUIRES: numpy
# RUN: tessel compile %s -k rmsnorm_1d --arg x=f32[256,1024] --arg g=f32[1024] | FileCheck %s
# RUN: tessel run %s -k rmsnorm_1d --arg x=f32[256,1024] --arg g=f32[1024] --check --reference %S/Inputs/refs.py:rmsnorm | FileCheck %s --check-prefix=PASS
# RUN: tessel run %s -k rmsnorm_1d --arg x=bf16[256,1024] --arg g=bf16[1024] --check --reference %S/Inputs/refs.py:rmsnorm | FileCheck %s --check-prefix=PASS
# RUN: tessel run %s -k rmsnorm_1d --arg x=bf16[2048,1024] --arg g=bf16[1024] --target trn1 --timing-only | FileCheck %s --check-prefix=TIME
# RUN: tessel run %s -k rmsnorm_1d --arg x=bf16[2048,1024] --arg g=bf16[1024] --target trn2 --timing-only | FileCheck %s --check-prefix=TIME
# RUN: tessel run %s -k pair_sums --arg x=f32[256,64] --check --reference %S/Inputs/refs.py:pair_sums | FileCheck %s --check-prefix=PASS
# RUN: tessel compile %s -k pair_sums --arg x=f32[256,64] | FileCheck %s --check-prefix=PAIRS
# RUN: not tessel run %s -k pair_sums_wrong --arg x=f32[128,64] --check --reference %S/Inputs/refs.py:pair_sums > %t.out 2> %t.err
# RUN: FileCheck %s --check-prefix=FAIL < %t.out
# RUN: FileCheck %s --check-prefix=FAILERR < %t.err
# CHECK: dma %{{[a-z_0-9]+}}[0 +: 1, 0 +: 1024] <- %g[0 +: 1 step 1024 +: 1024]
# PAIRS: tensor_reduce add %{{.*}}[0 +: 128, 0 +: 32] <- %{{.*}}[0 +: 128, 0 +: 32 step 2 +: 2]
# PASS: check: PASSED
# TIME: latency
# FAIL: check: FAILED
# FAILERR: error: check failed
import math

import nki
import nki.language as nl


@nki.jit
def rmsnorm_1d(x, g, eps=1e-6):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    rows, d = x.shape
    P = nl.tile_size.pmax
    g_all = nl.load(g.reshape((1, d))).broadcast_to((P, d))
    for t in nl.affine_range(math.ceil(rows / P)):
        xt = nl.load(x[nl.ds(t * P, P), 0:d])
        r = nl.rsqrt(nl.sum(nl.square(xt), axis=1) / d + eps)
        y = nl.multiply(xt, r)
        y[...] = nl.multiply(y, g_all)
        nl.store(out[nl.ds(t * P, P), 0:d], value=y)
    return out


def _pairs(x, split):
    rows, cols = x.shape
    out = nl.ndarray((rows, cols // 2), dtype=x.dtype, buffer=nl.shared_hbm)
    for t in nl.affine_range(rows // 128):
        xt = nl.ndarray((128, cols), dtype=x.dtype, buffer=nl.sbuf)
        xt[...] = nl.load(x[t * 128:(t + 1) * 128, :])
        if split == "pairs":
            s = nl.sum(xt.reshape((128, cols // 2, 2)), axis=2)
        else:
            s = nl.sum(xt.reshape((128, 2, cols // 2)), axis=1)
        nl.store(out[t * 128:(t + 1) * 128, :], value=s)
    return out


@nki.jit
def pair_sums(x):
    return _pairs(x, "pairs")


@nki.jit
def pair_sums_wrong(x):
    """Wrong: column f is summed with column f + F/2."""
    return _pairs(x, "halves")

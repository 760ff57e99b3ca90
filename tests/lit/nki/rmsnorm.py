# RMSNorm after the schedule of AWS's RMSNorm tutorial (the weight loaded once and broadcast over the
# partitions, per 128-row tile: square, row sum, / D, rsqrt, times the [P, 1] factor and the weight),
# in the current `nki` namespace; a second kernel does the same with nki.isa (activation with
# reduce_res, activation with a scale and a bias, tensor_scalar with a [P, 1] operand). Checked
# against numpy; timed on trn1 and trn2.
# REQUIRES: numpy
# RUN: tessel compile %s -k rmsnorm --arg x=f32[256,1024] --arg g=f32[1,1024] | FileCheck %s
# RUN: tessel run %s -k rmsnorm --arg x=f32[256,1024] --arg g=f32[1,1024] --check --reference %S/Inputs/refs.py:rmsnorm | FileCheck %s --check-prefix=PASS
# RUN: tessel run %s -k rmsnorm_isa --arg x=bf16[256,1024] --arg g=bf16[1,1024] --arg eps=1e-5 --check --reference %S/Inputs/refs.py:rmsnorm | FileCheck %s --check-prefix=PASS
# RUN: tessel compile %s -k rmsnorm_isa --arg x=bf16[256,1024] --arg g=bf16[1,1024] | FileCheck %s --check-prefix=ISA
# RUN: tessel run %s -k rmsnorm --arg x=bf16[2048,1024] --arg g=bf16[1,1024] --target trn1 --timing-only | FileCheck %s --check-prefix=TIME
# RUN: tessel run %s -k rmsnorm_isa --arg x=bf16[2048,1024] --arg g=bf16[1,1024] --target trn2 --timing-only | FileCheck %s --check-prefix=TIME
# The weight, broadcast over 128 partitions: a product with a ones row, one bank of columns at a time.
# CHECK: memset %ones[0 +: 1, 0 +: 128], 1.0
# CHECK: matmul %bcast_psum[0 +: 128, 0 +: 512] <- %ones[0 +: 1, 0 +: 128], %g_row[0 +: 1, 0 +: 512]
# CHECK: matmul %bcast_psum1[0 +: 128, 0 +: 512] <- %ones[0 +: 1, 0 +: 128], %g_row[0 +: 1, 512 +: 512]
# CHECK: tensor_reduce add %ss[0 +: 128, 0 +: 1] <- %sq[0 +: 128, 0 +: 1024]
# CHECK: tensor_scalar divide %ms[0 +: 128, 0 +: 1] <- %ss[0 +: 128, 0 +: 1], 1024.0
# CHECK: activation rsqrt
# CHECK: tensor_scalar mul %y[0 +: 128, 0 +: 1024] <- %xt[0 +: 128, 0 +: 1024], %r{{[0-9]*}}[0 +: 128, 0 +: 1]
# ISA: activation square %sq[0 +: 128, 0 +: 1024] <- %xt[0 +: 128, 0 +: 1024] accumulate %ss[0 +: 128, 0 +: 1]
# ISA: activation rsqrt %r[0 +: 128, 0 +: 1] <- %ss[0 +: 128, 0 +: 1] scale 0.0009765625 bias 1e-06
# PASS: check: PASSED
# TIME: latency
import math

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def rmsnorm(x, g, eps=1e-6):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    rows, d = x.shape
    P = nl.tile_size.pmax
    g_row = nl.load(g[0:1, 0:d])
    g_all = g_row.broadcast_to((P, d))
    for t in nl.affine_range(math.ceil(rows / P)):
        xt = nl.load(x[nl.ds(t * P, P), 0:d])
        sq = nl.square(xt)
        ss = nl.sum(sq, axis=1)
        ms = ss / d
        r = nl.rsqrt(ms + eps)
        y = nl.multiply(xt, r)
        y[...] = nl.multiply(y, g_all)
        nl.store(out[nl.ds(t * P, P), 0:d], value=y)
    return out


@nki.jit
def rmsnorm_isa(x, g, eps=1e-6):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    rows, d = x.shape
    P = nl.tile_size.pmax
    g_all = nl.load(g[0:1, 0:d]).broadcast_to((P, d))
    for t in nl.affine_range(rows // P):
        xt = nl.ndarray((P, d), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=xt, src=x[nl.ds(t * P, P), 0:d])
        sq = nl.ndarray((P, d), dtype=nl.float32, buffer=nl.sbuf)
        ss = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=sq, op=nl.square, data=xt, reduce_op=nl.add, reduce_res=ss)
        r = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=r, op=nl.rsqrt, data=ss, scale=1.0 / d, bias=eps)
        y = nl.ndarray((P, d), dtype=x.dtype, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=y, data=xt, op0=nl.multiply, operand0=r)
        nisa.tensor_tensor(dst=y, data1=y, data2=g_all, op=nl.multiply)
        nisa.dma_copy(dst=out[nl.ds(t * P, P), 0:d], src=y)
    return out

# The elementwise and index ops NKI kernels use, each checked against numpy: abs, reciprocal, log,
# a comparison (1.0 / 0.0), scalar - tile and tile / tile, **, negation, max/min/mean rows, a [P, 1]
# tile on the left of a divide (tensor_scalar reverse), and nisa.iota in both API forms.
# REQUIRES: numpy
# RUN: tessel compile %s --arg x=f32[128,64] --arg y=f32[128,64] | FileCheck %s
# RUN: tessel run %s --arg x=f32[128,64] --arg y=f32[128,64] --check --reference %S/Inputs/refs.py:vector_ops | FileCheck %s --check-prefix=PASS
# RUN: tessel run %s --arg x=f32[128,64] --arg y=f32[128,64] --check | FileCheck %s --check-prefix=PASS
# CHECK: activation abs
# CHECK: activation reciprocal
# CHECK: activation log
# CHECK: tensor_tensor is_gt
# CHECK: tensor_scalar sub %d{{[0-9]*}}[0 +: 128, 0 +: 64] <- %{{.*}}[0 +: 128, 0 +: 64], 2.0 reverse
# CHECK: tensor_scalar pow
# CHECK: tensor_reduce max
# CHECK: tensor_reduce min
# CHECK: tensor_scalar divide %e{{[0-9]*}}[0 +: 128, 0 +: 64] <- %{{.*}}[0 +: 128, 0 +: 64], %rng{{[0-9]*}}[0 +: 128, 0 +: 1] reverse
# CHECK: tensor_reduce add %mean
# CHECK: tensor_scalar divide %mean[0 +: 128, 0 +: 1] <- %mean[0 +: 128, 0 +: 1], 64.0
# CHECK: iota %ii[0 +: 128, 0 +: 64] offset 0 partition 64 free 1
# CHECK: iota %jj[0 +: 128, 0 +: 64] offset 5 partition 2 free 1
# PASS: check: PASSED
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def vector_ops(x, y):
    out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    a = nl.load(x)
    b = nl.load(y)
    r = nl.reciprocal(nl.abs(b) + 1.0)
    lg = nl.log(nl.abs(a) + 1.0)
    c = nl.greater(a, b)
    d = 2.0 - a / (nl.abs(b) + 1.0)
    pw = (nl.abs(a) + 1.0) ** 2.0
    rng = nl.max(a, axis=1) - nl.min(a, axis=1)
    e = rng / (nl.abs(a) + 1.0)
    mean = nl.mean(a, axis=1, keepdims=True)
    i_p, i_f = nl.mgrid[0:128, 0:64]
    ii = nisa.iota(i_p * 64 + i_f, dtype=nl.float32)
    jj = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
    nisa.iota(jj, pattern=[[1, 64]], offset=5, channel_multiplier=2)
    total = r + lg + c + d + pw * 0.1 + (e + -mean)
    nl.store(out, value=total + ii * 0.001 + jj * 0.01)
    return out

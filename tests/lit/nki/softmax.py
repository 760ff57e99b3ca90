# Row softmax after the schedule of AWS's softmax tutorial (128-row tiles, the row max subtracted,
# exp, the row sum, a divide by the [P, 1] sum; masks that hold for every row), written for tessel
# with nki.language only: checked against numpy, timed on trn1 and trn2.
# REQUIRES: numpy
# RUN: tessel compile %s -k softmax_rows --arg x=f32[256,512] | FileCheck %s
# RUN: tessel run %s -k softmax_rows --arg x=f32[256,512] --check --reference %S/Inputs/refs.py:softmax | FileCheck %s --check-prefix=PASS
# RUN: tessel run %s -k softmax_rows --arg x=bf16[1024,2048] --target trn1 --timing-only | FileCheck %s --check-prefix=TIME
# RUN: tessel run %s -k softmax_rows --arg x=bf16[1024,2048] --target trn2 --timing-only | FileCheck %s --check-prefix=TIME
# A wrong reduction axis (each column normalised instead of each row) fails the reference...
# RUN: not tessel run %s -k softmax_columns --arg x=bf16[128,128] --check --reference %S/Inputs/refs.py:softmax > %t.out 2> %t.err
# RUN: FileCheck %s --check-prefix=FAIL < %t.out
# RUN: FileCheck %s --check-prefix=FAILERR < %t.err
# ... and passes the check without one, which only checks the lowering.
# RUN: tessel run %s -k softmax_columns --arg x=bf16[128,128] --check | FileCheck %s --check-prefix=LOWERING
# CHECK: tensor_reduce max %row_max[0 +: 128, 0 +: 1] <- %tile[0 +: 128, 0 +: 512]
# CHECK: tensor_scalar sub %{{.*}}[0 +: 128, 0 +: 512] <- %tile[0 +: 128, 0 +: 512], %row_max[0 +: 128, 0 +: 1]
# CHECK: activation exp
# CHECK: tensor_reduce add %total[0 +: 128, 0 +: 1]
# CHECK: tensor_scalar divide %{{.*}}[0 +: 128, 0 +: 512] <- %e{{.*}}[0 +: 128, 0 +: 512], %total[0 +: 128, 0 +: 1]
# PASS: check: PASSED
# PASS: reference: "{{.*}}refs.py:softmax (numpy, the kernel's math)"
# TIME: latency
# FAIL: check: FAILED
# FAILERR: error: check failed
# LOWERING: check: PASSED
# LOWERING: reference: "the kernel's own trace executed in Python: checks tessel's lowering and simulator, not the kernel's math
import math

import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def softmax_rows(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    rows, cols = x.shape
    ip, jf = nl.mgrid[0:128, 0:cols]
    for t in nl.affine_range(math.ceil(rows / 128)):
        live = t * 128 + ip < rows
        tile = nl.load(x[t * 128 + ip, jf], mask=live)
        row_max = nl.max(tile, axis=[1], keepdims=True, mask=live)
        e = nl.exp(nl.subtract(tile, row_max, mask=live))
        total = nl.sum(e, axis=[1])
        nl.store(out[t * 128 + ip, jf], value=e / total, mask=live)
    return out


@nki.jit
def softmax_columns(x):
    """Wrong: the tile is loaded transposed, so its free axis is the matrix's rows."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    xt = nl.load_transpose2d(x)
    e = nl.exp(xt - nl.max(xt, axis=1, keepdims=True))
    sm = nl.divide(e, nl.sum(e, axis=1, keepdims=True))
    back = nl.copy(nisa.nc_transpose(sm), dtype=x.dtype)
    nl.store(out, value=back)
    return out

# nisa.tensor_tensor_scan in the current `nki` namespace: the destination first with positional
# arguments and a [P, 1] tile as the initial value, then the returned form with keywords, a number
# as the initial value and other ALU ops (op0(data0[f], result[f - 1]), then op1 with data1[f]).
# Checked against numpy, on trn1 and trn2.
# REQUIRES: numpy
# RUN: tessel compile %s --arg x=f32[128,256] --arg y=f32[128,256] --arg init=f32[128,1] | FileCheck %s
# RUN: tessel run %s --arg x=f32[128,256] --arg y=f32[128,256] --arg init=f32[128,1] --check --reference %S/Inputs/refs.py:scan_forms --target trn1 | FileCheck %s --check-prefix=PASS
# RUN: tessel run %s --arg x=bf16[128,256] --arg y=bf16[128,256] --arg init=bf16[128,1] --check --reference %S/Inputs/refs.py:scan_forms --target trn2 | FileCheck %s --check-prefix=PASS
# CHECK: tensor_tensor_scan mul add %h[0 +: 128, 0 +: 256] <- %xt[0 +: 128, 0 +: 256], %yt[0 +: 128, 0 +: 256] initial %it[0 +: 128, 0 +: 1]
# CHECK: tensor_tensor_scan sub max %g[0 +: 128, 0 +: 256] <- %h[0 +: 128, 0 +: 256], %yt[0 +: 128, 0 +: 256] initial -1.0
# PASS: check: PASSED
import numpy as np
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def scan_forms(x, y, init):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    xt = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    yt = nl.ndarray(y.shape, dtype=y.dtype, buffer=nl.sbuf)
    it = nl.ndarray(init.shape, dtype=init.dtype, buffer=nl.sbuf)
    h = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=xt, src=x)
    nisa.dma_copy(dst=yt, src=y)
    nisa.dma_copy(dst=it, src=init)
    nisa.tensor_tensor_scan(h, xt, yt, it, np.multiply, np.add)
    g = nisa.tensor_tensor_scan(data0=h, data1=yt, initial=-1.0, op0=nl.subtract, op1=nl.maximum, dtype=x.dtype)
    nisa.dma_copy(dst=out, src=g)
    return out

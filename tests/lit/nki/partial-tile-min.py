# A partial last tile written as NKI 0.7+ writes it: loops are unrolled when the kernel is
# specialised, so Python's min() of a loop variable is an integer there. The tracer keeps it
# symbolic: the tile IR's min(), checked against the numpy reference at every iteration.
# RUN: tessel compile %s --arg a=f32[300,64] | FileCheck %s
# RUN: tessel run %s --arg a=f32[300,64] --check | FileCheck %s --check-prefix=SIM
# CHECK: for %m = 0 to 3 step 1 parallel {
# CHECK: dma %t[0 +: min(128, %m*-128 + 300), 0 +: 64] <- %a[%m*128 +: min(128, %m*-128 + 300), 0 +: 64]
# CHECK: tensor_scalar mul %u[0 +: min(128, %m*-128 + 300), 0 +: 64] <- %t[0 +: min(128, %m*-128 + 300), 0 +: 64], 3.0
# SIM: check: PASSED
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def scale_rows(a):
    out = nl.ndarray((300, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    for m in nl.affine_range(3):
        rows = min(128, 300 - m * 128)
        t = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t[nl.ds(0, rows), 0:64], src=a[nl.ds(m * 128, rows), 0:64])
        u = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=u[nl.ds(0, rows), 0:64], data=t[nl.ds(0, rows), 0:64], op0=nl.multiply, operand0=3.0)
        nisa.dma_copy(dst=out[nl.ds(m * 128, rows), 0:64], src=u[nl.ds(0, rows), 0:64])
    return out

# A PSUM tensor over several banks, [128, 2, 512] f32 (one accumulation tile per bank, the
# bank picked by a point index), is the tile IR's folded PSUM buffer [256, 512]: bank g's
# partition p is row g * 128 + p. Each bank's tile is its own accumulation group: the loop
# choosing the bank is not a reset loop (NKI infers accumulation per PSUM location).
# RUN: tessel compile %s --arg a=bf16[256,128] --arg b=bf16[256,1024] | FileCheck %s
# RUN: tessel run %s --arg a=bf16[256,128] --arg b=bf16[256,1024] --check | FileCheck %s --check-prefix=SIM
# CHECK: %acc = alloc psum<f32, [M:256, N:512]>
# CHECK: matmul %acc[%j*128 +: 128, 0 +: 512] <- %at[0 +: 128, 0 +: 128], %bt[0 +: 128, 0 +: 512] reset(%k)
# CHECK: copy %o[0 +: 128, 0 +: 512] <- %acc[%j1*128 +: 128, 0 +: 512]
# SIM: check: PASSED
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def banks(a, b):
    y = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.ndarray((128, 2, 512), dtype=nl.float32, buffer=nl.psum)
    for k in nl.affine_range(2):
        at = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
        nisa.dma_copy(dst=at, src=a[nl.ds(k * 128, 128), 0:128])
        for j in nl.affine_range(2):
            bt = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
            nisa.dma_copy(dst=bt, src=b[nl.ds(k * 128, 128), nl.ds(j * 512, 512)])
            nisa.nc_matmul(dst=acc[0:128, j, 0:512], stationary=at, moving=bt)
    for j in nl.affine_range(2):
        o = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=o, src=acc[0:128, j, 0:512])
        nisa.dma_copy(dst=y[0:128, nl.ds(j * 512, 512)], src=o)
    return y

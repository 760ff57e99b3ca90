# PSUM accumulation that is not one loop: nc_matmul(accumulate=True) and a second accumulation loop
# into the same tile continue the earlier matmuls' sum (`matmul ... accumulate`).
# RUN: tessel compile %s --arg a=bf16[256,128] --arg b=bf16[256,512] | FileCheck %s
# RUN: tessel compile %s --arg a=bf16[256,128] --arg b=bf16[256,512] | tessel opt --verify-roundtrip - > /dev/null
# RUN: tessel run %s --arg a=bf16[256,128] --arg b=bf16[256,512] --check | FileCheck %s --check-prefix=SIM
# CHECK: matmul %p[0 +: 128, 0 +: 512] <- %at[0 +: 128, %i, 0 +: 128], %bt[0 +: 128, %i, 0 +: 512] reset(%i)
# CHECK: matmul %p[0 +: 128, 0 +: 512] <- %at[0 +: 128, %j, 0 +: 128], %bt[0 +: 128, %j, 0 +: 512] accumulate
# CHECK: matmul %p[0 +: 128, 0 +: 512] <- %at[0 +: 128, 0, 0 +: 128], %bt[0 +: 128, 0, 0 +: 512] accumulate
# SIM: check: PASSED
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def acc(a, b):
    y = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    at = nl.ndarray((128, 2, 128), dtype=a.dtype, buffer=nl.sbuf)
    bt = nl.ndarray((128, 2, 512), dtype=b.dtype, buffer=nl.sbuf)
    for k in nl.affine_range(2):
        nisa.dma_copy(dst=at[:, k, :], src=a[k * 128:(k + 1) * 128, :])
        nisa.dma_copy(dst=bt[:, k, :], src=b[k * 128:(k + 1) * 128, :])
    p = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
    for i in nl.affine_range(2):
        nisa.nc_matmul(p, at[:, i, :], bt[:, i, :])
    for j in nl.affine_range(2):
        nisa.nc_matmul(p, at[:, j, :], bt[:, j, :])
    nisa.nc_matmul(p, at[:, 0, :], bt[:, 0, :], accumulate=True)
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=out, src=p)
    nisa.dma_copy(dst=y, src=out)
    return y

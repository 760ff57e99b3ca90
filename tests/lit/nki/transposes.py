# Transposes: nisa.nc_transpose (tensor engine, to PSUM), nl.load_transpose2d and nisa.dma_transpose (DMA).
# RUN: tessel compile %s --arg x=bf16[128,64] | FileCheck %s
# RUN: tessel run %s --arg x=bf16[128,64] --check | FileCheck %s --check-prefix=SIM
# CHECK: transpose %tp[0 +: 64, 0 +: 128] <- %t[0 +: 128, 0 +: 64]
# CHECK: dma transpose %u[0 +: 64, 0 +: 128] <- %x[0 +: 128, 0 +: 64]
# CHECK: dma transpose %v[0 +: 64, 0 +: 128] <- %x[0 +: 128, 0 +: 64]
# SIM: check: PASSED
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def tr(x):
    a = nl.ndarray((64, 128), dtype=x.dtype, buffer=nl.shared_hbm)
    b = nl.ndarray((64, 128), dtype=x.dtype, buffer=nl.shared_hbm)
    c = nl.ndarray((64, 128), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    tp = nisa.nc_transpose(t)
    nl.store(a, value=nl.copy(tp, dtype=x.dtype))
    u = nl.load_transpose2d(x)
    nl.store(b, value=u)
    v = nl.ndarray((64, 128), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_transpose(v, x)
    nisa.dma_copy(dst=c, src=v)
    return a, b, c

# Indexing: slices, nl.arange broadcasts, nl.mgrid (unpacked and .p/.x), nl.ds, nl.par_dim, points.
# RUN: tessel compile %s --arg x=bf16[256,1024] | FileCheck %s
# RUN: tessel run %s --arg x=bf16[256,1024] --check | FileCheck %s --check-prefix=SIM
# CHECK: %buf = alloc sbuf<bf16, [{{[A-Z0-9]+}}:128, {{[A-Z0-9]+}}:4, {{[A-Z0-9]+}}:256]>
# CHECK: dma %buf[0 +: 128, %t, 0 +: 256] <- %x[%r*128 +: 128, %t*256 +: 256]
# CHECK: dma %y[%r*128 +: 128, %t*256 +: 256] <- %buf[0 +: 128, %t, 0 +: 256]
# CHECK: dma %y[%r*128 + 1 +: 127, 0 +: 256] <- %buf[1 +: 127, 0, 0 +: 256]
# CHECK: dma %y[%r*128 +: 128, 512 +: 256] <- %buf[0 +: 128, 2, 0 +: 256]
# SIM: check: PASSED
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def idx(x):
    y = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(256)[None, :]
    for r in nl.affine_range(2):
        buf = nl.ndarray((4, nl.par_dim(128), 256), dtype=x.dtype, buffer=nl.sbuf)
        for t in nl.affine_range(4):
            buf[t] = nl.load(x[r * 128 + i_p, t * 256 + i_f])
            nl.store(y[nl.ds(r * 128, 128), nl.ds(t * 256, 256)], value=buf[t, :, :])
        g_p, g_f = nl.mgrid[1:128, 0:256]
        nl.store(y[r * 128 + g_p, g_f], value=buf[0, g_p, g_f])
        g = nl.mgrid[0:128, 0:256]
        nl.store(y[r * 128 + g.p, 512 + g.x], value=buf[2, g.p, g.x])
    return y

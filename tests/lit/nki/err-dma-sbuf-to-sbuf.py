# tessel's DMA moves tiles between HBM and SBUF; an SBUF-to-SBUF dma_copy is an error.
# RUN: not tessel compile %s --arg x=bf16[128,128] 2>&1 | FileCheck %s
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def k(x):
    y = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    u = nl.ndarray((128, 128), dtype=x.dtype, buffer=nl.sbuf)
    # CHECK: err-dma-sbuf-to-sbuf.py:[[@LINE+1]]: error: nisa.dma_copy from sbuf to sbuf: tessel's DMA moves tiles between HBM and SBUF
    nisa.dma_copy(dst=u, src=t)
    nl.store(y, value=u)
    return y

# nl.store of an f32 tile into a bf16 tensor: tessel's DMA does not cast.
# RUN: not tessel compile %s --arg x=bf16[128,128] 2>&1 | FileCheck %s
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def k(x):
    y = nl.ndarray((128, 128), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.copy(nl.load(x), dtype=nl.float32)
    # CHECK: err-store-dtype.py:[[@LINE+1]]: error: nl.store: source dtype float32 differs from destination dtype bfloat16; tessel's DMA does not cast
    nl.store(y, value=t)
    return y

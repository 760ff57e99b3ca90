# A strided slice is not a contiguous tile.
# RUN: not tessel compile %s --arg x=bf16[128,256] 2>&1 | FileCheck %s
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def k(x):
    y = nl.ndarray((128, 128), dtype=x.dtype, buffer=nl.shared_hbm)
    # CHECK: err-strided-slice.py:[[@LINE+1]]: error: a strided slice is not supported (tiles are contiguous)
    t = nl.load(x[:, 0:256:2])
    nl.store(y, value=t)
    return y

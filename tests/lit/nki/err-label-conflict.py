# One buffer in two roles would give one tile IR dimension two layouts: an error, not a wrong program.
# RUN: not tessel compile %s --arg a=bf16[128,128] 2>&1 | FileCheck %s
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def k(a):
    y = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
    at = nl.load(a)
    # CHECK: err-label-conflict.py:[[@LINE+1]]: error: tessel's tile IR gives each dimension a layout label, and this op would make dimensions 0 and 1 of
    g = nl.matmul(at, at, transpose_x=True)
    nl.store(y, value=nl.copy(g))
    return y

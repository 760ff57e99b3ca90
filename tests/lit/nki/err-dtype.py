# dtypes other than bf16 and f32 are errors.
# RUN: not tessel compile %s --arg x=bf16[128,128] 2>&1 | FileCheck %s
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def k(x):
    # CHECK: err-dtype.py:[[@LINE+1]]: error: dtype float16 is not supported: tessel's tile IR has bf16 and f32
    y = nl.ndarray(x.shape, dtype=nl.float16, buffer=nl.shared_hbm)
    return y

# A loop variable used as a Python value (a condition) cannot be traced symbolically.
# RUN: not tessel compile %s --arg x=bf16[256,128] 2>&1 | FileCheck %s
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def k(x):
    y = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(2):
        t = nl.load(x[i * 128:(i + 1) * 128, :])
        # CHECK: err-loop-variable-condition.py:[[@LINE+1]]: error: loop variable used as a Python value (in a comparison)
        if i == 0:
            nl.store(y[0:128, :], value=t)
    return y

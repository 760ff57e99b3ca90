# A mask that is false somewhere (here rows 64..127) is an error, not silently dropped: tessel accepts
# only masks it proves true everywhere.
# RUN: not tessel compile %s --arg x=bf16[128,128] 2>&1 | FileCheck %s
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def k(x):
    y = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    i = nl.arange(128)[:, None]
    # CHECK: err-unsupported-argument.py:[[@LINE+1]]: error: nl.load: mask= is supported only where it holds for every element of every loop iteration
    t = nl.load(x, mask=(i < 64))
    nl.store(y, value=t)
    return y

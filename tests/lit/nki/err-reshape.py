# reshape is not supported.
# RUN: not tessel compile %s --arg x=bf16[128,128] 2>&1 | FileCheck %s
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def k(x):
    y = nl.ndarray((128, 128), dtype=x.dtype, buffer=nl.shared_hbm)
    # CHECK: err-reshape.py:[[@LINE+1]]: error: 'x'.reshape is not supported
    z = x.reshape((64, 256))
    nl.store(y, value=nl.load(z))
    return y

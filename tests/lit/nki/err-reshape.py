# A reshape that merges dimensions is an error naming it (a reshape that splits them runs: reshape.py).
# RUN: not tessel compile %s --arg x=bf16[128,128] 2>&1 | FileCheck %s
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def k(x):
    y = nl.ndarray((128, 128), dtype=x.dtype, buffer=nl.shared_hbm)
    # CHECK: err-reshape.py:[[@LINE+1]]: error: 'x'.reshape((64, 256)): the new shape merges dimensions of [128, 128]; tessel's access patterns only split a dimension into several
    z = x.reshape((64, 256))
    nl.store(y, value=nl.load(z))
    return y

# An exception of the kernel's own Python code is reported at its line.
# RUN: not tessel compile %s --arg x=bf16[128,128] 2>&1 | FileCheck %s
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def k(x):
    y = nl.ndarray((128, 128), dtype=x.dtype, buffer=nl.shared_hbm)
    # CHECK: err-python-exception.py:[[@LINE+1]]: error: NameError: name 'undefined_tile' is not defined
    nl.store(y, value=undefined_tile)
    return y

# A kernel argument that is both read and written (in/out) is not supported.
# RUN: not tessel compile %s --arg x=bf16[128,128] 2>&1 | FileCheck %s
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def k(x):
    t = nl.load(x)
    # CHECK: err-inout-argument.py:[[@LINE+1]]: error: kernel argument 'x' is read and written; in/out arguments are not supported
    nl.store(x, value=t)

# A zero dimension in --arg is an error naming the --arg, not located in a file of the tracer.
# RUN: not tessel compile %s --arg x=bf16[0,128] 2>&1 | FileCheck %s --implicit-check-not=nki_trace --implicit-check-not=Traceback
# CHECK: {{^}}error: --arg 'x=bf16[0,128]': dimensions must be positive, got [0, 128]
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def k(x):
    y = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(y, value=nl.load(x))
    return y

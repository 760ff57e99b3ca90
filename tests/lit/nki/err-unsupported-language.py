# An nki.language API outside the subset is an error naming it and the kernel's file:line.
# RUN: not tessel compile %s --arg x=bf16[128,128] 2>&1 | FileCheck %s
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def k(x):
    y = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    # CHECK: err-unsupported-language.py:[[@LINE+1]]: error: nl.softmax is not supported by tessel's NKI tracer
    s = nl.softmax(t, axis=1)
    nl.store(y, value=s)
    return y

# A non-finite constant (here a scalar operand of NaN) is refused at the
# statement that uses it; the error had no file:line (it is found while the
# traced ops are written out, after the kernel ran).
# RUN: not tessel compile %s --arg x=f32[128,128] 2>&1 | FileCheck %s
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def k(x):
    y = nl.ndarray((128, 128), dtype=x.dtype, buffer=nl.shared_hbm)
    a = nl.load(x)
    # CHECK: err-nonfinite-constant.py:[[@LINE+1]]: error: a non-finite constant nan is not supported
    b = nl.multiply(a, float("nan"))
    nl.store(y, value=b)
    return y

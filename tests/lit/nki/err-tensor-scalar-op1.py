# nisa.tensor_scalar's second op (op1/operand1) is an error naming it: the tile IR's tensor_scalar
# has one op; the kernel can write a second call.
# RUN: not tessel compile %s --arg x=f32[128,256] 2>&1 | FileCheck %s
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def k(x):
    y = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    # CHECK: err-tensor-scalar-op1.py:[[@LINE+1]]: error: nisa.tensor_scalar: op1/operand1 (a second ALU op in the same instruction) is not supported
    u = nisa.tensor_scalar(t, nl.subtract, 1.0, op1=nl.multiply, operand1=2.0)
    nl.store(y, value=u)
    return y

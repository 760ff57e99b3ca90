# An nki.isa API outside the subset is an error naming it and the kernel's file:line.
# RUN: not tessel compile %s -k k --arg x=bf16[128,128] 2>&1 | FileCheck %s
# RUN: not tessel compile %s -k stt --arg x=bf16[128,128] 2>&1 | FileCheck %s --check-prefix=STT
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def k(x):
    y = nl.ndarray((128, 8), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    # CHECK: err-unsupported-isa.py:[[@LINE+1]]: error: nisa.max8 is not supported by tessel's NKI tracer
    r = nisa.max8(src=t)
    nl.store(y, value=r)
    return y


@nki.jit
def stt(x):
    y = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    # STT: err-unsupported-isa.py:[[@LINE+1]]: error: nisa.scalar_tensor_tensor is not supported by tessel's NKI tracer
    r = nisa.scalar_tensor_tensor(data=t, op0=nl.multiply, operand0=2.0, op1=nl.add, operand1=t)
    nl.store(y, value=r)
    return y

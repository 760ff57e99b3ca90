# An nki.isa API outside the subset is an error naming it and the kernel's file:line.
# RUN: not tessel compile %s -k k --arg x=bf16[128,128] 2>&1 | FileCheck %s
# The mamba tutorial's scan is refused at its line too (no scan instruction in the tile IR yet).
# RUN: not tessel compile %s -k scan --arg x=bf16[128,128] 2>&1 | FileCheck %s --check-prefix=SCAN
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def k(x):
    y = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    # CHECK: err-unsupported-isa.py:[[@LINE+1]]: error: nisa.bn_stats is not supported by tessel's NKI tracer
    r = nisa.bn_stats(t)
    nl.store(y, value=r)
    return y


@nki.jit
def scan(x):
    y = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    # SCAN: err-unsupported-isa.py:[[@LINE+1]]: error: nisa.tensor_tensor_scan is not supported by tessel's NKI tracer
    r = nisa.tensor_tensor_scan(t, t, initial=0.0, op0=nl.multiply, op1=nl.add)
    nl.store(y, value=r)
    return y

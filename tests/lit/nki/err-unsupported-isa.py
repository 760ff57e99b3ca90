# An nki.isa API outside the subset is an error naming it and the kernel's file:line.
# RUN: not tessel compile %s --arg x=bf16[128,128] 2>&1 | FileCheck %s
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

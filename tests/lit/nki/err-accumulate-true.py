# nc_matmul(accumulate=True) (always accumulate) has no tile IR form.
# RUN: not tessel compile %s --arg a=bf16[128,128] --arg b=bf16[128,512] 2>&1 | FileCheck %s
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def k(a, b):
    y = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    at = nl.load(a)
    bt = nl.load(b)
    p = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
    # CHECK: err-accumulate-true.py:[[@LINE+1]]: error: nisa.nc_matmul accumulate=True is not supported
    nisa.nc_matmul(p, at, bt, accumulate=True)
    nl.store(y, value=nl.copy(p))
    return y

# A matmul beyond the tensor engine's limits (moving free size 1024 > 512) is an error.
# RUN: not tessel compile %s --arg a=bf16[128,128] --arg b=bf16[128,1024] 2>&1 | FileCheck %s
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def k(a, b):
    y = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
    at = nl.load(a)
    bt = nl.load(b)
    # CHECK: err-matmul-limits.py:[[@LINE+1]]: error: nisa.nc_matmul: stationary [128, 128] x moving [128, 1024] exceeds the tensor engine's limits (K <= 128, stationary free <= 128, moving free <= 512)
    p = nisa.nc_matmul(at, bt)
    nl.store(y, value=nl.copy(p))
    return y

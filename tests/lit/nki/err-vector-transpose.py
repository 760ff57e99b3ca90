# nisa.nc_transpose on the vector engine is not supported (tessel's transpose runs on the tensor engine).
# RUN: not tessel compile %s --arg x=bf16[32,32] 2>&1 | FileCheck %s
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def k(x):
    y = nl.ndarray((32, 32), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x)
    # CHECK: err-vector-transpose.py:[[@LINE+1]]: error: nisa.nc_transpose: engine=nisa.vector_engine is not supported
    u = nisa.nc_transpose(t, engine=nisa.vector_engine)
    nl.store(y, value=nl.copy(u))
    return y

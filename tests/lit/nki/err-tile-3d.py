# A 3-D tile loads, copies and reduces (average-pool.py), but the tensor engine takes 2-D tiles: a
# transpose of one is an error naming the tensor.
# RUN: not tessel compile %s --arg x=bf16[128,2,128] 2>&1 | FileCheck %s
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def k(x):
    y = nl.ndarray((128, 256), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 2, 128), dtype=x.dtype, buffer=nl.sbuf)
    t[...] = nl.load(x)
    # CHECK: err-tile-3d.py:[[@LINE+1]]: error: the source of 't' is a 3-D tile; this operation takes 2-D tiles
    u = nl.copy(nisa.nc_transpose(t), dtype=x.dtype)
    nl.store(y, value=u)
    return y

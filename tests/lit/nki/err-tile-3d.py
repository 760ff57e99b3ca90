# Tile operands are 2-D: a 3-D slice is an error naming the tensor.
# RUN: not tessel compile %s --arg x=bf16[2,128,128] 2>&1 | FileCheck %s
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def k(x):
    y = nl.ndarray((128, 128), dtype=x.dtype, buffer=nl.shared_hbm)
    # CHECK: err-tile-3d.py:[[@LINE+1]]: error: the source of 'x' is a 3-D tile; tessel's tile IR takes 2-D tiles
    t = nl.load(x[0:2, :, :])
    nl.store(y, value=t)
    return y

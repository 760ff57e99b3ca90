# A [1, F] tile does not broadcast over the partitions implicitly: the error names .broadcast_to.
# RUN: not tessel compile %s --arg x=f32[128,256] --arg g=f32[1,256] 2>&1 | FileCheck %s
import nki
import nki.language as nl


@nki.jit
def k(x, g):
    y = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    w = nl.load(g)
    # CHECK: err-partition-broadcast.py:[[@LINE+1]]: error: elementwise mul of tiles [128, 256] and [1, 256]: only a [P, 1] tile broadcasts (along the free dimension); broadcast a [1, F] tile over partitions with .broadcast_to((P, F))
    nl.store(y, value=t * w)
    return y

# A reduction over the partitions (axis=0) is an error naming the call: tessel reduces along the
# free axis (a partition reduction is a matmul against a ones vector, which the kernel can write).
# RUN: not tessel compile %s --arg x=f32[128,256] 2>&1 | FileCheck %s
import nki
import nki.language as nl


@nki.jit
def k(x):
    y = nl.ndarray((1, 256), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    # CHECK: err-reduce-axis.py:[[@LINE+1]]: error: nl.sum: axis=0 is not supported: tessel reduces along the free axis of a 2-D tile (axis=1)
    s = nl.sum(t, axis=0)
    nl.store(y, value=s)
    return y

# An access pattern that permutes the free dimension of an SBUF tile (the schedule of AWS's transpose2d
# tutorial: three nl.mgrid indices, the destination indexed i_f2 * F1 + i_f1) is an error naming the
# index at its line: tessel's tile IR accesses contiguous 2-D tiles. So is a tile's .ap() (the current
# average-pool tutorial's 5-D view of its input).
# RUN: not tessel compile %s -k permute_free --arg x=f32[128,12] 2>&1 | FileCheck %s
# RUN: not tessel compile %s -k pool_view --arg x=f32[128,16] 2>&1 | FileCheck %s --check-prefix=AP
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def permute_free(x, rows_cols=(3, 4)):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    f1, f2 = rows_cols
    ip, i1, i2 = nl.mgrid[0:128, 0:f1, 0:f2]
    u = nl.ndarray((128, f1 * f2), dtype=x.dtype, buffer=nl.sbuf)
    # CHECK: err-access-pattern.py:[[@LINE+1]]: error: index 1 of 't' is a strided or combined nl.arange/nl.mgrid index (an access pattern, such as i_f2 * F1 + i_f1, that splits, permutes or strides a dimension) and is not supported: tessel's tile IR accesses contiguous 2-D tiles
    u[ip, i2 * f1 + i1] = nl.copy(t[ip, i1 * f2 + i2])
    nl.store(out, value=u)
    return out


@nki.jit
def pool_view(x):
    out = nl.ndarray((128, 8), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    # AP: err-access-pattern.py:[[@LINE+1]]: error: 't'.ap (an explicit access pattern) is not supported: tessel's tile IR accesses contiguous 2-D tiles
    pairs = t.ap([[16, 128], [2, 8], [1, 2]])
    nl.store(out, value=nl.sum(pairs, axis=[2]))
    return out

# The schedule of AWS's transpose2d tutorial, written for tessel: every row of x holds a row-major
# F1 x F2 matrix, and the kernel transposes each of them in SBUF with one copy whose destination
# permutes the free dimension (an access pattern over three nl.mgrid indices: the source read as
# i_f1 * F2 + i_f2, the result written at i_f2 * F1 + i_f1), then stores the rows. Rows go in tiles of
# 128 partitions here (the tutorial loads the whole tensor at once).
# REQUIRES: numpy
# RUN: tessel compile %s -k transpose2d --arg x=bf16[256,12] --arg "shape2D=(3, 4)" | FileCheck %s
# RUN: tessel run %s -k transpose2d --arg x=f32[256,12] --arg "shape2D=(3, 4)" --check --reference %S/Inputs/refs.py:transpose2d | FileCheck %s --check-prefix=PASS
# RUN: tessel run %s -k transpose2d --arg x=bf16[128,2048] --arg "shape2D=(32, 64)" --check --reference %S/Inputs/refs.py:transpose2d | FileCheck %s --check-prefix=PASS
# RUN: tessel run %s -k transpose2d --arg x=bf16[1024,4096] --arg "shape2D=(64, 64)" --target trn1 --timing-only | FileCheck %s --check-prefix=TIME
# RUN: tessel run %s -k transpose2d --arg x=bf16[1024,4096] --arg "shape2D=(64, 64)" --target trn2 --timing-only | FileCheck %s --check-prefix=TIME
# The same copy with the destination written as read (i_f1 * F2 + i_f2: no transpose) fails.
# RUN: not tessel run %s -k transpose2d_unpermuted --arg x=f32[128,12] --arg "shape2D=(3, 4)" --check --reference %S/Inputs/refs.py:transpose2d > %t.out 2> %t.err
# RUN: FileCheck %s --check-prefix=FAIL < %t.out
# RUN: FileCheck %s --check-prefix=FAILERR < %t.err
# CHECK: copy %[[OUT:[a-z_0-9]+]][0 +: 128, 0 +: 3 +: 4 step 3] <- %[[IN:[a-z_0-9]+]][0 +: 128, 0 +: 3 step 4 +: 4]
# CHECK: dma %{{.*}}[%{{.*}}*128 +: 128, 0 +: 12] <- %[[OUT]][0 +: 128, 0 +: 12]
# PASS: check: PASSED
# TIME: latency
# FAIL: check: FAILED
# FAILERR: error: check failed
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


def _transpose_rows(x, shape2D, permute):
    rows, cols = x.shape
    f1, f2 = shape2D
    out = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.shared_hbm)
    for r in nl.affine_range(rows // 128):
        tile = nl.load(x[r * 128:(r + 1) * 128, :])
        i_p, i_f1, i_f2 = nl.mgrid[0:128, 0:f1, 0:f2]
        flipped = nl.ndarray((128, cols), dtype=x.dtype, buffer=nl.sbuf)
        if permute:
            flipped[i_p, i_f2 * f1 + i_f1] = nl.copy(tile[i_p, i_f1 * f2 + i_f2])
        else:
            flipped[i_p, i_f1 * f2 + i_f2] = nl.copy(tile[i_p, i_f1 * f2 + i_f2])
        nl.store(out[r * 128:(r + 1) * 128, :], value=flipped)
    return out


@nki.jit
def transpose2d(x, shape2D):
    return _transpose_rows(x, shape2D, True)


@nki.jit
def transpose2d_unpermuted(x, shape2D):
    """Wrong: the copy keeps each matrix as it is."""
    return _transpose_rows(x, shape2D, False)

# Sub-kernels: an nki.jit(mode='trace') function called from a kernel (as the flash attention kernel
# calls its transpose and core helpers) is traced inline where it is called, its loops and its writes
# into the caller's tiles included. Launching one on a grid from inside a kernel is an error at its line.
# REQUIRES: numpy
# RUN: tessel compile %s -k row_softmax --arg x=f32[256,512] | FileCheck %s
# RUN: tessel run %s -k row_softmax --arg x=f32[256,512] --check --reference %S/Inputs/refs.py:softmax | FileCheck %s --check-prefix=PASS
# RUN: not tessel compile %s -k grid_inside --arg x=f32[256,512] 2>&1 | FileCheck %s --check-prefix=GRID
# CHECK: for %t = 0 to 2 step 1 parallel {
# CHECK: tensor_reduce max
# CHECK: for %c = 0 to 4 step 1 parallel {
# CHECK: activation exp %probs[0 +: 128, %c*128 +: 128] <- %tile[0 +: 128, %c*128 +: 128] bias %neg_max{{[0-9]*}}[0 +: 128, 0 +: 1]
# PASS: check: PASSED
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit(mode='trace')
def exp_shifted(dst, src, neg_max, width):
    for c in nl.affine_range(width // 128):
        dst[:, nl.ds(c * 128, 128)] = nisa.activation(op=nl.exp, data=src[:, nl.ds(c * 128, 128)], bias=neg_max)


@nki.jit
def row_softmax(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    rows, cols = x.shape
    for t in nl.affine_range(rows // 128):
        tile = nl.load(x[nl.ds(t * 128, 128), :])
        neg_max = nl.multiply(nl.max(tile, axis=1), -1.0)
        probs = nl.ndarray((128, cols), dtype=nl.float32, buffer=nl.sbuf)
        exp_shifted(probs, tile, neg_max, cols)
        nl.store(out[nl.ds(t * 128, 128), :], value=nl.divide(probs, nl.sum(probs, axis=1)))
    return out


@nki.jit
def grid_inside(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    tile = nl.load(x[0:128, :])
    probs = nl.ndarray((128, x.shape[1]), dtype=nl.float32, buffer=nl.sbuf)
    # GRID: sub-kernels.py:[[@LINE+1]]: error: launching 'exp_shifted' on a grid from inside a kernel is not supported; call it as a sub-kernel (exp_shifted(...))
    exp_shifted[2](probs, tile, 0.0, x.shape[1])
    nl.store(out[0:128, :], value=probs)
    return out

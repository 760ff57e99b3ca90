# [P] tiles (NKI's 1-D tiles along the partitions) indexed with a point after their range, as the mamba
# tutorial loads its per-channel A column (A[c0:c0 + 128, i]) and the flash attention kernel reads its
# running max (m_buffer[:, 0]): each is the [P, 1] tile the point selects, a per-partition operand or a
# reduction's destination. Checked against numpy; a column read at the wrong point fails it.
# REQUIRES: numpy
# RUN: tessel compile %s -k row_sums --arg x=f32[128,64] --arg scales=f32[128,4] | FileCheck %s
# RUN: tessel run %s -k row_sums --arg x=f32[128,64] --arg scales=f32[128,4] --check --reference %S/Inputs/refs.py:exp_row_sums | FileCheck %s --check-prefix=PASS
# RUN: not tessel run %s -k row_sums_wrong_column --arg x=f32[128,64] --arg scales=f32[128,4] --check --reference %S/Inputs/refs.py:exp_row_sums > %t.out 2> %t.err
# RUN: FileCheck %s --check-prefix=FAIL < %t.out
# CHECK: dma %a[0 +: 128, 0 +: 1] <- %scales[0 +: 128, %i +: 1]
# CHECK: activation exp %e[0 +: 128, 0 +: 64] <- %x_sb[0 +: 128, 0 +: 64] scale %a[0 +: 128, 0 +: 1]
# CHECK: tensor_reduce add %sums[0 +: 128, %i +: 1] <- %e[0 +: 128, 0 +: 64]
# CHECK: dma %out[0 +: 128, 0 +: 1] <- %sums[0 +: 128, 0 +: 1]
# PASS: check: PASSED
# FAIL: check: FAILED
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


def _row_sums(x, scales, shift):
    n = scales.shape[1]
    out = nl.ndarray((128, n), dtype=nl.float32, buffer=nl.shared_hbm)
    x_sb = nl.load(x)
    sums = nl.ndarray((128, n), dtype=nl.float32, buffer=nl.sbuf)
    for i in nl.affine_range(n - shift):
        a = nl.load(scales[0:128, i + shift])
        e = nisa.activation(op=nl.exp, data=x_sb, scale=a)
        sums[:, i] = nl.sum(e, axis=1)
    if shift:
        sums[:, n - 1] = 0.0
    nl.store(out[:, 0], value=sums[:, 0])
    nl.store(out[:, 1:n], value=sums[:, 1:n])
    return out


@nki.jit
def row_sums(x, scales):
    return _row_sums(x, scales, 0)


@nki.jit
def row_sums_wrong_column(x, scales):
    """Wrong: the scale of column i + 1 for column i."""
    return _row_sums(x, scales, 1)

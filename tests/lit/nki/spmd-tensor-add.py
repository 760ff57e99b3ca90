# Tensor addition over an SPMD launch grid, after the schedule of AWS's SPMD tensor-addition tutorial
# (one 128 x 512 tile per program instance, the instance's tile chosen by nl.program_id, a caller that
# launches kernel[rows // 128, cols // 512]), written for tessel: checked against numpy, timed on trn1
# and trn2. Every instance runs on the one NeuronCore: the grid is a parallel loop per axis.
# REQUIRES: numpy
# RUN: tessel compile %s -k tensor_add --arg a=bf16[256,1024] --arg b=bf16[256,1024] | FileCheck %s
# RUN: tessel run %s -k tensor_add --arg a=bf16[256,1024] --arg b=bf16[256,1024] --check --reference %S/Inputs/refs.py:tensor_add | FileCheck %s --check-prefix=PASS
# The kernel itself with --grid is the same program...
# RUN: tessel compile %s -k add_tile --grid 2,2 --arg a=bf16[256,1024] --arg b=bf16[256,1024] | FileCheck %s --check-prefix=GRID
# RUN: tessel run %s -k add_tile --grid 2,2 --arg a=bf16[256,1024] --arg b=bf16[256,1024] --check --reference %S/Inputs/refs.py:tensor_add | FileCheck %s --check-prefix=PASS
# ... and a 1-D grid of row blocks, each instance looping over its columns (nl.num_programs, nl.program_ndim).
# RUN: tessel run %s -k add_row_blocks --grid 4 --arg a=f32[1024,1024] --arg b=f32[1024,1024] --check --reference %S/Inputs/refs.py:tensor_add | FileCheck %s --check-prefix=PASS
# Timing: the grid of 16 x 8 instances predicts what the same tiles in a loop nest do (tensor-add.py).
# RUN: tessel run %s -k tensor_add --arg a=bf16[2048,4096] --arg b=bf16[2048,4096] --target trn1 --timing-only | FileCheck %s --check-prefix=TIME1
# RUN: tessel run %s -k tensor_add --arg a=bf16[2048,4096] --arg b=bf16[2048,4096] --target trn2 --timing-only | FileCheck %s --check-prefix=TIME2
# RUN: tessel run %S/tensor-add.py --arg a=bf16[2048,4096] --arg b=bf16[2048,4096] --target trn1 --timing-only | FileCheck %s --check-prefix=TIME1
# RUN: tessel run %S/tensor-add.py --arg a=bf16[2048,4096] --arg b=bf16[2048,4096] --target trn2 --timing-only | FileCheck %s --check-prefix=TIME2
# A caller that forgets the grid's column axis leaves all but the first 512 columns unwritten: the
# reference fails it.
# RUN: not tessel run %s -k tensor_add_first_columns --arg a=bf16[256,1024] --arg b=bf16[256,1024] --check --reference %S/Inputs/refs.py:tensor_add > %t.out 2> %t.err
# RUN: FileCheck %s --check-prefix=FAIL < %t.out
# RUN: FileCheck %s --check-prefix=FAILERR < %t.err
# CHECK: kernel @tensor_add(%a: hbm<bf16, [{{.*}}:256, {{.*}}:1024]>, %b: {{.*}}) -> (%c: hbm<bf16,
# CHECK-NEXT: for %program0 = 0 to 2 step 1 parallel {
# CHECK-NEXT: for %program1 = 0 to 2 step 1 parallel {
# CHECK: dma %x[0 +: 128, 0 +: 512] <- %a[%program0*128 +: 128, %program1*512 +: 512]
# CHECK: tensor_tensor add
# CHECK: dma %c[%program0*128 +: 128, %program1*512 +: 512] <- %{{.*}}[0 +: 128, 0 +: 512]
# GRID: kernel @add_tile(
# GRID-NEXT: for %program0 = 0 to 2 step 1 parallel {
# GRID-NEXT: for %program1 = 0 to 2 step 1 parallel {
# PASS: check: PASSED
# PASS: reference: "{{.*}}refs.py:tensor_add (numpy, the kernel's math)"
# TIME1: latency{{ +}}325.189 us
# TIME2: latency{{ +}}221.724 us
# FAIL: check: FAILED
# FAILERR: error: check failed
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def add_tile(a, b):
    c = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    row0 = nl.program_id(0) * 128
    col0 = nl.program_id(axis=1) * 512
    ip, jf = nl.mgrid[0:128, 0:512]
    x = nl.load(a[row0 + ip, col0 + jf])
    y = nl.load(b[row0 + ip, col0 + jf])
    nl.store(c[row0 + ip, col0 + jf], value=x + y)
    return c


def tensor_add(a, b):
    rows, cols = a.shape
    return add_tile[rows // 128, cols // 512](a, b)


def tensor_add_first_columns(a, b):
    """Wrong: the grid covers the row tiles only."""
    return add_tile[a.shape[0] // 128, 1](a, b)


@nki.jit
def add_row_blocks(a, b):
    assert nl.program_ndim() == 1
    c = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    rows, cols = a.shape
    block = rows // nl.num_programs(0)
    for t in nl.affine_range(block // 128):
        for j in nl.affine_range(cols // 512):
            r = nl.program_id(0) * block + t * 128
            x = nl.load(a[r:r + 128, j * 512:j * 512 + 512])
            y = nl.load(b[r:r + 128, j * 512:j * 512 + 512])
            nl.store(c[r:r + 128, j * 512:j * 512 + 512], value=nl.add(x, y))
    return c

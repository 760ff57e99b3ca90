# A matrix transpose over an SPMD grid: each program instance moves one 128 x 128 tile to its mirrored
# place, transposing it on the tensor engine (nisa.nc_transpose into PSUM, a copy back to SBUF) or in
# the DMA (nl.load_transpose2d). Written for tessel; not the schedule of AWS's transpose2d tutorial,
# which permutes the free dimension of an SBUF tile with an access pattern (i_f2 * F1 + i_f1:
# transpose2d.py).
# REQUIRES: numpy
# RUN: tessel compile %s -k transpose --arg x=bf16[256,384] | FileCheck %s
# RUN: tessel run %s -k transpose --arg x=bf16[256,384] --check --reference %S/Inputs/refs.py:transpose | FileCheck %s --check-prefix=PASS
# RUN: tessel run %s -k transpose_in_dma --arg x=f32[256,384] --check --reference %S/Inputs/refs.py:transpose | FileCheck %s --check-prefix=PASS
# RUN: tessel run %s -k transpose --arg x=bf16[2048,2048] --target trn1 --timing-only | FileCheck %s --check-prefix=TIME
# RUN: tessel run %s -k transpose --arg x=bf16[2048,2048] --target trn2 --timing-only | FileCheck %s --check-prefix=TIME
# RUN: tessel run %s -k transpose_in_dma --arg x=bf16[2048,2048] --target trn1 --timing-only | FileCheck %s --check-prefix=TIME
# RUN: tessel run %s -k transpose_in_dma --arg x=bf16[2048,2048] --target trn2 --timing-only | FileCheck %s --check-prefix=TIME
# Each tile transposed but stored at its own place instead of the mirrored one fails the reference.
# RUN: not tessel run %s -k transpose_unmirrored --arg x=bf16[256,256] --check --reference %S/Inputs/refs.py:transpose > %t.out 2> %t.err
# RUN: FileCheck %s --check-prefix=FAIL < %t.out
# RUN: FileCheck %s --check-prefix=FAILERR < %t.err
# CHECK: for %program0 = 0 to 2 step 1 parallel {
# CHECK-NEXT: for %program1 = 0 to 3 step 1 parallel {
# CHECK: dma %tile[0 +: 128, 0 +: 128] <- %x[%program0*128 +: 128, %program1*128 +: 128]
# CHECK: transpose %{{.*}}[0 +: 128, 0 +: 128] <- %tile[0 +: 128, 0 +: 128]
# CHECK: dma %out[%program1*128 +: 128, %program0*128 +: 128] <- %{{.*}}[0 +: 128, 0 +: 128]
# PASS: check: PASSED
# TIME: latency
# FAIL: check: FAILED
# FAILERR: error: check failed
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def transpose_tile(x, mirrored=True):
    rows, cols = x.shape
    out = nl.ndarray((cols, rows), dtype=x.dtype, buffer=nl.shared_hbm)
    i, j = nl.program_id(0), nl.program_id(1)
    tile = nl.load(x[i * 128:i * 128 + 128, j * 128:j * 128 + 128])
    flipped = nl.copy(nisa.nc_transpose(tile), dtype=x.dtype)
    if mirrored:
        nl.store(out[j * 128:j * 128 + 128, i * 128:i * 128 + 128], value=flipped)
    else:
        nl.store(out[i * 128:i * 128 + 128, j * 128:j * 128 + 128], value=flipped)
    return out


@nki.jit
def transpose_tile_dma(x):
    rows, cols = x.shape
    out = nl.ndarray((cols, rows), dtype=x.dtype, buffer=nl.shared_hbm)
    i, j = nl.program_id(0), nl.program_id(1)
    flipped = nl.load_transpose2d(x[i * 128:i * 128 + 128, j * 128:j * 128 + 128])
    nl.store(out[j * 128:j * 128 + 128, i * 128:i * 128 + 128], value=flipped)
    return out


def transpose(x):
    return transpose_tile[x.shape[0] // 128, x.shape[1] // 128](x)


def transpose_in_dma(x):
    return transpose_tile_dma[x.shape[0] // 128, x.shape[1] // 128](x)


def transpose_unmirrored(x):
    """Wrong: every tile is transposed in place."""
    return transpose_tile[x.shape[0] // 128, x.shape[1] // 128](x, mirrored=False)

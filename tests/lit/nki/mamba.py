# Mamba's selective scan after the schedule of AWS's fused mamba tutorial (its second and third
# versions), written for tessel: per batch and 128-channel tile, delta and u loaded once; per state,
# the A column as a [P, 1] scale of exp(delta * A) (one activation), delta * u * B (B's row broadcast
# to the partitions), the recurrence h = decay * h + drive along the sequence with
# nisa.tensor_tensor_scan, times C's row, summed over the states in SBUF. `mamba_chunked` runs the
# scan per 512-element chunk of the sequence in a sequential loop, each chunk's initial value the
# [P, 1] last column of the previous chunk's result. Checked against numpy on inputs as a model
# gives them (delta > 0, A < 0: Inputs/mamba_inputs.py), timed on trn1 and trn2 at the tutorial's
# size (batch 1, 256 channels, sequence 2048, 16 states). Checked in f32, as the tutorial checks
# it: in bf16 the decays' rounding compounds along the sequence (2.3% at 1024). A chunked scan that
# restarts every chunk from 0 (the state not carried) fails the reference.
# REQUIRES: numpy
# RUN: rm -rf %t && %python %S/Inputs/mamba_inputs.py %t 2 256 1024 4
# RUN: tessel compile %s -k mamba --arg delta=f32[2,256,1024] --arg u=f32[2,256,1024] --arg A=f32[256,4] --arg B=f32[2,4,1024] --arg C=f32[2,4,1024] | FileCheck %s
# RUN: tessel compile %s -k mamba_chunked --arg delta=f32[2,256,1024] --arg u=f32[2,256,1024] --arg A=f32[256,4] --arg B=f32[2,4,1024] --arg C=f32[2,4,1024] | FileCheck %s --check-prefix=CHUNKED
# RUN: tessel run %s -k mamba --input delta=%t/delta.npy --input u=%t/u.npy --input A=%t/A.npy --input B=%t/B.npy --input C=%t/C.npy --check --reference %S/Inputs/refs.py:mamba --target trn1 | FileCheck %s --check-prefix=PASS
# RUN: tessel run %s -k mamba --input delta=%t/delta.npy --input u=%t/u.npy --input A=%t/A.npy --input B=%t/B.npy --input C=%t/C.npy --check --reference %S/Inputs/refs.py:mamba --target trn2 | FileCheck %s --check-prefix=PASS
# RUN: tessel run %s -k mamba_chunked --input delta=%t/delta.npy --input u=%t/u.npy --input A=%t/A.npy --input B=%t/B.npy --input C=%t/C.npy --check --reference %S/Inputs/refs.py:mamba --target trn1 | FileCheck %s --check-prefix=PASS
# RUN: tessel run %s -k mamba_chunked --input delta=%t/delta.npy --input u=%t/u.npy --input A=%t/A.npy --input B=%t/B.npy --input C=%t/C.npy --check --reference %S/Inputs/refs.py:mamba --target trn2 | FileCheck %s --check-prefix=PASS
# RUN: tessel run %s -k mamba --arg delta=f32[1,256,2048] --arg u=f32[1,256,2048] --arg A=f32[256,16] --arg B=f32[1,16,2048] --arg C=f32[1,16,2048] --target trn1 --timing-only | FileCheck %s --check-prefix=TIME
# RUN: tessel run %s -k mamba --arg delta=f32[1,256,2048] --arg u=f32[1,256,2048] --arg A=f32[256,16] --arg B=f32[1,16,2048] --arg C=f32[1,16,2048] --target trn2 --timing-only | FileCheck %s --check-prefix=TIME
# RUN: tessel run %s -k mamba_chunked --arg delta=f32[1,256,2048] --arg u=f32[1,256,2048] --arg A=f32[256,16] --arg B=f32[1,16,2048] --arg C=f32[1,16,2048] --target trn1 --timing-only | FileCheck %s --check-prefix=TIME
# RUN: tessel run %s -k mamba_chunked --arg delta=f32[1,256,2048] --arg u=f32[1,256,2048] --arg A=f32[256,16] --arg B=f32[1,16,2048] --arg C=f32[1,16,2048] --target trn2 --timing-only | FileCheck %s --check-prefix=TIME
# The state not carried from chunk to chunk: the reference fails it, the lowering check does not.
# RUN: not tessel run %s -k mamba_fresh_chunks --input delta=%t/delta.npy --input u=%t/u.npy --input A=%t/A.npy --input B=%t/B.npy --input C=%t/C.npy --check --reference %S/Inputs/refs.py:mamba > %t.out 2> %t.err
# RUN: FileCheck %s --check-prefix=FAIL < %t.out
# RUN: FileCheck %s --check-prefix=FAILERR < %t.err
# RUN: tessel run %s -k mamba_fresh_chunks --input delta=%t/delta.npy --input u=%t/u.npy --input A=%t/A.npy --input B=%t/B.npy --input C=%t/C.npy --check | FileCheck %s --check-prefix=LOWERING
# CHECK: activation exp %decay[0 +: 128, 0 +: 1024] <- %d_tile[0 +: 128, 0 +: 1024] scale %a_col[0 +: 128, 0 +: 1]
# CHECK: tensor_tensor_scan mul add %h[0 +: 128, 0 +: 1024] <- %decay[0 +: 128, 0 +: 1024], %drive[0 +: 128, 0 +: 1024] initial 0.0
# CHUNKED: for %k = 0 to 2 step 1 {
# CHUNKED: tensor_tensor_scan mul add %h[0 +: 128, 0 +: 512] <- %decay[0 +: 128, 0 +: 512], %drive[0 +: 128, 0 +: 512] initial %carry[0 +: 128, 0 +: 1]
# CHUNKED: copy %carry[0 +: 128, 0 +: 1] <- %h[0 +: 128, 511 +: 1]
# PASS: check: PASSED
# PASS: reference: "{{.*}}refs.py:mamba (numpy, the kernel's math)"
# TIME: latency
# TIME: tensor_tensor_scan.mul.add
# FAIL: check: FAILED
# FAILERR: error: check failed
# LOWERING: check: PASSED
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

CHUNK = 512  # sequence elements per scan in the chunked version (the tutorial's)


def _mamba(delta, u, A, state):
    """The tutorial's loops: per batch and 128-channel tile, delta and u loaded once; per state, A's
    column loaded and `state(b, s, d_tile, u_tile, a_col, total)` adding that state's C h to total."""
    batch, channels, seq = delta.shape
    P = nl.tile_size.pmax
    out = nl.ndarray((batch, channels, seq), dtype=delta.dtype, buffer=nl.shared_hbm)
    for b in nl.affine_range(batch):
        for c in nl.affine_range(channels // P):
            rows = nl.ds(c * P, P)
            total = nl.zeros((P, seq), dtype=delta.dtype, buffer=nl.sbuf)
            d_tile = nl.load(delta[b, rows, 0:seq])
            u_tile = nl.load(u[b, rows, 0:seq])
            for s in nl.affine_range(A.shape[1]):
                a_col = nl.load(A[rows, s])
                state(b, s, d_tile, u_tile, a_col, total)
            nl.store(out[b, rows, 0:seq], value=total)
    return out


def _scan_state(B, C, b, s, tiles, cols, n, initial):
    """Over the n columns `cols`: h = scan(exp(delta A), delta u B) from `initial`; total += C h.
    `tiles` are delta's and u's tiles, A's column and the total. Returns h."""
    d_tile, u_tile, a_col, total = tiles
    P = d_tile.shape[0]
    decay = nisa.activation(op=nl.exp, data=d_tile[0:P, cols], scale=a_col)
    du = nisa.tensor_tensor(d_tile[0:P, cols], u_tile[0:P, cols], op=nl.multiply)
    b_rows = nl.load(B[b, s:s + 1, cols]).broadcast_to((P, n))
    drive = nisa.tensor_tensor(du, b_rows, op=nl.multiply)
    h = nisa.tensor_tensor_scan(decay, drive, initial=initial, op0=np.multiply, op1=np.add)
    c_rows = nl.load(C[b, s:s + 1, cols]).broadcast_to((P, n))
    total[0:P, cols] += nisa.tensor_tensor(h, c_rows, op=nl.multiply)
    return h


@nki.jit
def mamba(delta, u, A, B, C):
    seq = delta.shape[2]
    return _mamba(delta, u, A, lambda b, s, *tiles: _scan_state(B, C, b, s, tiles, slice(0, seq), seq, 0))


def _chunked(delta, u, A, B, C, carry_state):
    P = nl.tile_size.pmax

    def state(b, s, *tiles):
        carry = nl.zeros((P, 1), dtype=delta.dtype, buffer=nl.sbuf)
        for k in nl.sequential_range(delta.shape[2] // CHUNK):
            h = _scan_state(B, C, b, s, tiles, nl.ds(k * CHUNK, CHUNK), CHUNK, carry if carry_state else 0.0)
            carry[...] = h[0:P, CHUNK - 1]
    return _mamba(delta, u, A, state)


@nki.jit
def mamba_chunked(delta, u, A, B, C):
    return _chunked(delta, u, A, B, C, carry_state=True)


@nki.jit
def mamba_fresh_chunks(delta, u, A, B, C):
    return _chunked(delta, u, A, B, C, carry_state=False)

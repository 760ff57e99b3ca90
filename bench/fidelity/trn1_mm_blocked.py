"""trn1 matmul ladder, rung 3 "blocked free dims" (docs/measurements.md §1; measured 22.07 ms).

Published schedule (aws-neuron/nki-samples src/nki_samples/tutorials/matrix_multiplication/matrix_multiplication_nki_kernels.py (current API; the measured 2.20-2.23 release used nl.load / nl.store, as this kernel does), nki_matmul_block_free_dimension_):
    TILES_IN_BLOCK_M = 2; TILES_IN_BLOCK_N = 2
    for m in nl.affine_range(M // BLOCK_M):
      for bm in nl.affine_range(TILES_IN_BLOCK_M):
        for k in nl.affine_range(K // TILE_K): # lhsT tile loaded
      for n in nl.affine_range(N // BLOCK_N):
        for bn in nl.affine_range(TILES_IN_BLOCK_N):
          for k in nl.affine_range(K // TILE_K): # rhs tile loaded
        for bm ...: for bn ...: for k ...: matmul; then copy and store per (bm, bn)

As the hoisted rung with blocks of 2 M tiles and 2 N tiles (BLOCK_M 256,
BLOCK_N 1024), K unblocked: per M block the K column of its 2 lhsT tile
columns is loaded once, per (M block, N block) the K column of its 2 rhs tile
columns, and each of the 2 x 2 output tiles accumulates over all of K in PSUM.
Written for tessel from the published schedule. Run: tessel run
  trn1_mm_blocked.py --target trn1 --timing-only --arg lhsT=bf16[8192,4096]
  --arg rhs=bf16[8192,8192]
"""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE_K, TILE_M, TILE_N = 128, 128, 512
TILES_M, TILES_N = 2, 2


@nki.jit
def mm_blocked(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    KT = K // TILE_K
    BLOCK_M, BLOCK_N = TILES_M * TILE_M, TILES_N * TILE_N
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // BLOCK_M):
        a_cols = nl.ndarray((TILES_M, KT, nl.par_dim(TILE_K), TILE_M), dtype=lhsT.dtype, buffer=nl.sbuf)
        for bm in nl.affine_range(TILES_M):
            for k in nl.affine_range(KT):
                a_cols[bm, k] = nl.load(lhsT[k * TILE_K:(k + 1) * TILE_K,
                                             m * BLOCK_M + bm * TILE_M:m * BLOCK_M + (bm + 1) * TILE_M])
        for n in nl.affine_range(N // BLOCK_N):
            b_cols = nl.ndarray((TILES_N, KT, nl.par_dim(TILE_K), TILE_N), dtype=rhs.dtype, buffer=nl.sbuf)
            for bn in nl.affine_range(TILES_N):
                for k in nl.affine_range(KT):
                    b_cols[bn, k] = nl.load(rhs[k * TILE_K:(k + 1) * TILE_K,
                                                n * BLOCK_N + bn * TILE_N:n * BLOCK_N + (bn + 1) * TILE_N])
            for bm in nl.affine_range(TILES_M):
                for bn in nl.affine_range(TILES_N):
                    acc = nl.zeros((TILE_M, TILE_N), nl.float32, buffer=nl.psum)  # as published
                    for k in nl.affine_range(KT):
                        acc += nl.matmul(a_cols[bm, k], b_cols[bn, k], transpose_x=True)
                    out = nl.copy(acc, dtype=result.dtype)
                    row = m * BLOCK_M + bm * TILE_M
                    col = n * BLOCK_N + bn * TILE_N
                    nl.store(result[row:row + TILE_M, col:col + TILE_N], value=out)
    return result

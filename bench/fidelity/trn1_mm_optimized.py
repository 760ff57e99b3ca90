"""trn1 matmul ladder, rung 4 "fully optimized" (docs/measurements.md §1; measured 6.97 ms).

Published schedule (aws-neuron/nki-samples src/nki_samples/tutorials/matrix_multiplication/matrix_multiplication_nki_kernels.py (current API; the measured 2.20-2.23 release used nl.load / nl.store, as this kernel does), nki_matmul_fully_optimized_,
TILES_IN_BLOCK_M=16, TILES_IN_BLOCK_N=2, TILES_IN_BLOCK_K=8; docs/hardware.md §6):
    for n in nl.affine_range(NUM_BLOCK_N):
      for k in nl.sequential_range(NUM_BLOCK_K):
        # rhs block loaded, one DMA per K tile of [TILE_K, BLOCK_N]
        for m in nl.affine_range(NUM_BLOCK_M):
          # lhsT block loaded, one DMA per K tile of [TILE_K, BLOCK_M]
          for bn ...: for bm ...: for bk ...: matmul into PSUM; VectorE adds it into the SBUF result
      # one coalesced store per M tile of the N block

Blocks of 16 M tiles, 2 N tiles and 8 K tiles (BLOCK_M 2048, BLOCK_N 1024,
BLOCK_K 1024); loop order n -> k (sequential) -> m. Per (n, k) the rhs block
is loaded as 8 rows of 128x1024, per (n, k, m) the lhsT block as 8 rows of
128x2048; each 128x512 PSUM tile accumulates the block's 8 K tiles and the
vector engine adds it into the SBUF result block of the N block. As in the
release the measurement used (2.20-2.23), the result block is held as
(TILES_N) separate 128x512 tiles per M tile, which are copied side by side
into a 128x1024 row (one `nl.copy` per tile) and stored coalesced at the end
of each n. Written for tessel from the published schedule. Run: tessel run trn1_mm_optimized.py --target
  trn1 --timing-only --arg lhsT=bf16[8192,4096] --arg rhs=bf16[8192,8192]
"""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

TILE_K, TILE_M, TILE_N = 128, 128, 512
TILES_M, TILES_N, TILES_K = 16, 2, 8


@nki.jit
def mm_optimized(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    BLOCK_M, BLOCK_N, BLOCK_K = TILES_M * TILE_M, TILES_N * TILE_N, TILES_K * TILE_K
    NUM_M = M // BLOCK_M
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for n in nl.affine_range(N // BLOCK_N):
        # The partial sums of all K blocks, one 128x512 tile per (M tile, N tile).
        res = nl.zeros((NUM_M, TILES_M, TILES_N, nl.par_dim(TILE_M), TILE_N), dtype=result.dtype, buffer=nl.sbuf)
        for k in nl.sequential_range(K // BLOCK_K):
            b_rows = nl.ndarray((TILES_K, nl.par_dim(TILE_K), BLOCK_N), dtype=rhs.dtype, buffer=nl.sbuf)
            for bk in nl.affine_range(TILES_K):
                r = k * BLOCK_K + bk * TILE_K
                b_rows[bk] = nl.load(rhs[r:r + TILE_K, n * BLOCK_N:(n + 1) * BLOCK_N])
            for m in nl.affine_range(NUM_M):
                a_rows = nl.ndarray((TILES_K, nl.par_dim(TILE_K), BLOCK_M), dtype=lhsT.dtype, buffer=nl.sbuf)
                for bk in nl.affine_range(TILES_K):
                    r = k * BLOCK_K + bk * TILE_K
                    a_rows[bk] = nl.load(lhsT[r:r + TILE_K, m * BLOCK_M:(m + 1) * BLOCK_M])
                for bn in nl.affine_range(TILES_N):
                    for bm in nl.affine_range(TILES_M):
                        acc = nl.ndarray((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.psum)
                        for bk in nl.affine_range(TILES_K):
                            acc += nisa.nc_matmul(a_rows[bk, :, bm * TILE_M:(bm + 1) * TILE_M],
                                                  b_rows[bk, :, bn * TILE_N:(bn + 1) * TILE_N])
                        res[m, bm, bn] += acc
        for m in nl.affine_range(NUM_M):
            for bm in nl.affine_range(TILES_M):
                # Coalesce the M tile's N tiles into one row for a larger store.
                packed = nl.ndarray((nl.par_dim(TILE_M), BLOCK_N), dtype=result.dtype, buffer=nl.sbuf)
                for bn in nl.affine_range(TILES_N):
                    packed[:, bn * TILE_N:(bn + 1) * TILE_N] = nl.copy(res[m, bm, bn])
                row = m * BLOCK_M + bm * TILE_M
                nl.store(result[row:row + TILE_M, n * BLOCK_N:(n + 1) * BLOCK_N], value=packed)
    return result

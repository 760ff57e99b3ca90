"""trn2 4096^3 ladder, V1 "blocked" (docs/measurements.md §2; profile total 2,451 us).

Published schedule (aws-neuron/neuron-agentic-development skills/neuron-nki-profile-querying/
references/example-bounds-analysis.md, "V1: Blocking free dimension"; its snippet says
TILES_IN_BLOCK_M = 12 and one 512-wide rhs tile per n, its measured profile "V1 Bounds
(BM=8, BN=2)", which this kernel follows):
    for m_block in nl.affine_range(M // BLOCK_M):
        for bm in nl.affine_range(TILES_IN_BLOCK_M):
            for k in nl.affine_range(K // TILE_K):
                nisa.dma_copy(dst=lhsT_tiles[bm][k], src=lhsT[k..., m_block*BLOCK_M + bm*TILE_M...])
        for n in nl.affine_range(N // TILE_N):
            for k in nl.affine_range(K // TILE_K):
                nisa.dma_copy(dst=rhs_tiles[k], src=rhs[k..., n...])
            for bm ...: for k ...: nisa.nc_matmul(dst=res_psum[bm], stationary=lhsT_tiles[bm][k], moving=rhs_tiles[k])

Blocks of 8 M tiles and 2 N tiles (1024 x 1024 outputs). An M block's lhsT is
loaded once per M block as 128x128 tiles in the published order (bm outer, k
inner; until issue 40 this kernel loaded k outer, bm inner, which simulated
-5.2 % against the published order's figure), the K column of an N block's
rhs once per (M block, N block) as 128x512 tiles; each of the 8 x 2 output
tiles accumulates all of K in PSUM, then `tensor_copy` and a store. Current
NKI API. Written for tessel from the published schedule.
Run: tessel run trn2_mm_v1_blocked.py --target trn2 --timing-only
  --arg lhsT=bf16[4096,4096] --arg rhs=bf16[4096,4096]
"""
import nki
import nki.isa as nisa
import nki.language as nl

TILE_K, TILE_M, TILE_N = 128, 128, 512
TILES_M, TILES_N = 8, 2


@nki.jit
def mm_v1(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    KT = K // TILE_K
    BLOCK_M, BLOCK_N = TILES_M * TILE_M, TILES_N * TILE_N
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for mb in nl.affine_range(M // BLOCK_M):
        a_blk = nl.ndarray((KT, nl.par_dim(TILE_K), BLOCK_M), dtype=lhsT.dtype, buffer=nl.sbuf)
        for bm in nl.affine_range(TILES_M):
            for k in nl.affine_range(KT):
                col = mb * BLOCK_M + bm * TILE_M
                nisa.dma_copy(dst=a_blk[k, :, bm * TILE_M:(bm + 1) * TILE_M],
                              src=lhsT[k * TILE_K:(k + 1) * TILE_K, col:col + TILE_M])
        for nb in nl.affine_range(N // BLOCK_N):
            b_blk = nl.ndarray((KT, nl.par_dim(TILE_K), BLOCK_N), dtype=rhs.dtype, buffer=nl.sbuf)
            for k in nl.affine_range(KT):
                for bn in nl.affine_range(TILES_N):
                    col = nb * BLOCK_N + bn * TILE_N
                    nisa.dma_copy(dst=b_blk[k, :, bn * TILE_N:(bn + 1) * TILE_N],
                                  src=rhs[k * TILE_K:(k + 1) * TILE_K, col:col + TILE_N])
            for bm in nl.affine_range(TILES_M):
                for bn in nl.affine_range(TILES_N):
                    acc = nl.ndarray((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.psum)
                    for k in nl.affine_range(KT):
                        nisa.nc_matmul(dst=acc, stationary=a_blk[k, :, bm * TILE_M:(bm + 1) * TILE_M],
                                       moving=b_blk[k, :, bn * TILE_N:(bn + 1) * TILE_N])
                    out = nl.ndarray((TILE_M, TILE_N), dtype=result.dtype, buffer=nl.sbuf)
                    nisa.tensor_copy(dst=out, src=acc)
                    row, col = mb * BLOCK_M + bm * TILE_M, nb * BLOCK_N + bn * TILE_N
                    nisa.dma_copy(dst=result[row:row + TILE_M, col:col + TILE_N], src=out)
    return result

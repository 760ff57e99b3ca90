"""trn2 4096^3 ladder, V2 "row loads" (docs/measurements.md §2; profile total 1,801 us).

Published schedule (aws-neuron/neuron-agentic-development skills/neuron-nki-profile-querying/references/example-bounds-analysis.md, "V2: Row loads"):
    for m in nl.affine_range(M // BLOCK_M):
        for k in nl.affine_range(num_k):   # one [TILE_K, BLOCK_M] = [128, 1024] lhsT row
        for n in nl.affine_range(N // BLOCK_N):
            for k in nl.affine_range(num_k):   # one [TILE_K, BLOCK_N] = [128, 1024] rhs row
            for bm ...: for bn ...: for k ...: nc_matmul into the PSUM accumulator

As V1 (blocks of 8 M tiles and 2 N tiles), but both operands are loaded as
128x1024 rows: one DMA per K tile of an M block's lhsT and one per K tile of
an N block's rhs. Current NKI API. Written for tessel from the published
schedule. Run: tessel run trn2_mm_v2_rows.py --target trn2 --timing-only
  --arg lhsT=bf16[4096,4096] --arg rhs=bf16[4096,4096]
"""
import nki
import nki.isa as nisa
import nki.language as nl

TILE_K, TILE_M, TILE_N = 128, 128, 512
TILES_M, TILES_N = 8, 2


@nki.jit
def mm_v2(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    KT = K // TILE_K
    BLOCK_M, BLOCK_N = TILES_M * TILE_M, TILES_N * TILE_N
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for mb in nl.affine_range(M // BLOCK_M):
        a_blk = nl.ndarray((KT, nl.par_dim(TILE_K), BLOCK_M), dtype=lhsT.dtype, buffer=nl.sbuf)
        for k in nl.affine_range(KT):
            nisa.dma_copy(dst=a_blk[k], src=lhsT[k * TILE_K:(k + 1) * TILE_K, mb * BLOCK_M:(mb + 1) * BLOCK_M])
        for nb in nl.affine_range(N // BLOCK_N):
            b_blk = nl.ndarray((KT, nl.par_dim(TILE_K), BLOCK_N), dtype=rhs.dtype, buffer=nl.sbuf)
            for k in nl.affine_range(KT):
                nisa.dma_copy(dst=b_blk[k], src=rhs[k * TILE_K:(k + 1) * TILE_K, nb * BLOCK_N:(nb + 1) * BLOCK_N])
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

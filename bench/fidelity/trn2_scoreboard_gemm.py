"""trn2 GEMM scoreboard stand-in (../../../shared/FIDELITY.md s4: best tuned MetaGEMM per square shape).

MetaGEMM's tuned schedules are not published, so this is FIDELITY.md s1's
published "fully optimized" schedule (the NKI matmul tutorial's rung 4) with
its block sizes fitted to each shape instead of fixed: per shape the largest
M block of at most 16 tiles, N block of at most 2 tiles of 512 and K block of
at most 8 tiles that divide it. Loop order n -> k (sequential) -> m; per
(n, k) the rhs block is loaded as 128-row slabs of the N block, per
(n, k, m) the lhsT block as 128-row slabs of the M block; each 128x512 PSUM
tile accumulates the K block and the vector engine adds it into the SBUF
result rows of the N block, stored as 128-row slabs after the last K block.
The measured figure is a tuned schedule's, so the error of these points mixes
schedule and model (the measured kernel is at least as fast as this one).
Written for tessel. Run: tessel run trn2_scoreboard_gemm.py --target trn2
  --timing-only --latency=benchmark --arg lhsT=bf16[S,S] --arg rhs=bf16[S,S]
"""
import nki
import nki.isa as nisa
import nki.language as nl

TILE_K, TILE_M, TILE_N = 128, 128, 512


def largest_divisor(n, cap):
    """The largest d <= cap dividing n."""
    d = min(n, cap)
    while n % d:
        d -= 1
    return d


@nki.jit
def scoreboard_gemm(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    TM = largest_divisor(M // TILE_M, 16)
    TN = largest_divisor(N // TILE_N, 2)
    TK = largest_divisor(K // TILE_K, 8)
    BLOCK_M, BLOCK_N, BLOCK_K = TM * TILE_M, TN * TILE_N, TK * TILE_K
    NUM_M = M // BLOCK_M
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for n in nl.affine_range(N // BLOCK_N):
        res = nl.zeros((NUM_M, TM, nl.par_dim(TILE_M), BLOCK_N), dtype=result.dtype, buffer=nl.sbuf)
        for k in nl.sequential_range(K // BLOCK_K):
            b_rows = nl.ndarray((TK, nl.par_dim(TILE_K), BLOCK_N), dtype=rhs.dtype, buffer=nl.sbuf)
            for bk in nl.affine_range(TK):
                r = k * BLOCK_K + bk * TILE_K
                nisa.dma_copy(dst=b_rows[bk], src=rhs[r:r + TILE_K, n * BLOCK_N:(n + 1) * BLOCK_N])
            for m in nl.affine_range(NUM_M):
                a_rows = nl.ndarray((TK, nl.par_dim(TILE_K), BLOCK_M), dtype=lhsT.dtype, buffer=nl.sbuf)
                for bk in nl.affine_range(TK):
                    r = k * BLOCK_K + bk * TILE_K
                    nisa.dma_copy(dst=a_rows[bk], src=lhsT[r:r + TILE_K, m * BLOCK_M:(m + 1) * BLOCK_M])
                for bn in nl.affine_range(TN):
                    for bm in nl.affine_range(TM):
                        acc = nl.ndarray((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.psum)
                        for bk in nl.affine_range(TK):
                            nisa.nc_matmul(dst=acc, stationary=a_rows[bk, :, bm * TILE_M:(bm + 1) * TILE_M],
                                           moving=b_rows[bk, :, bn * TILE_N:(bn + 1) * TILE_N])
                        res[m, bm, :, bn * TILE_N:(bn + 1) * TILE_N] += acc
        for m in nl.affine_range(NUM_M):
            for bm in nl.affine_range(TM):
                row = m * BLOCK_M + bm * TILE_M
                nisa.dma_copy(dst=result[row:row + TILE_M, n * BLOCK_N:(n + 1) * BLOCK_N], src=res[m, bm])
    return result

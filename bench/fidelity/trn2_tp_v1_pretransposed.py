"""trn2 2048^3 matmul on a pre-transposed lhsT, V1 (docs/measurements.md §6;
profile total 608 us, TensorE active 420 us).

Published schedule (aws-neuron/neuron-agentic-development skills/neuron-nki-profile-querying/references/investigations/redundant_te_transposes.md, "Worked example"):
    "V1 (pre-transposed): takes lhsT[K,M] already transposed, eliminates
     nc_transpose entirely."
    i.e. V0's loop nest without the transpose and its copy:
    for m in nl.affine_range(M // TILE_M):          # 16
        for n in nl.affine_range(N // TILE_N):      # 4
            for k in nl.affine_range(K // TILE_K):  # 16
                (dma_copy a 128x128 lhsT tile and a 128x512 rhs tile)
                nisa.nc_matmul(dst=acc, stationary=lhsT_tile, moving=rhs_tile)
    "1,024 REGULAR MATMULs"; bounds: total_time 608 us, compute_bound (TE
    active) 420 us, compute_bound_ideal 218 us.

result[M, N] = lhsT[K, M]^T @ rhs[K, N]. Loops m (M/128), n (N/512), k (K/128);
per k a 128x128 stationary tile of lhsT and a 128x512 moving tile of rhs are
loaded and one `nc_matmul` accumulates into a 128x512 fp32 PSUM tile; per
(m, n) a `tensor_copy` to SBUF and a store (as V0). The same schedule as the
4096^3 ladder's V0 (trn2_mm_v0_tiled.py) at 2048^3; device: trn2 (see
trn2_tp_v0_transpose.py). Current NKI API. Written for tessel from the
published schedule. Run:
  tessel run trn2_tp_v1_pretransposed.py --target trn2 --timing-only
  --arg lhsT=bf16[2048,2048] --arg rhs=bf16[2048,2048]
"""
import nki
import nki.isa as nisa
import nki.language as nl

TILE_K, TILE_M, TILE_N = 128, 128, 512


@nki.jit
def mm_pretransposed_v1(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // TILE_M):
        for n in nl.affine_range(N // TILE_N):
            acc = nl.ndarray((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // TILE_K):
                st = nl.ndarray((TILE_K, TILE_M), dtype=lhsT.dtype, buffer=nl.sbuf)
                mv = nl.ndarray((TILE_K, TILE_N), dtype=rhs.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=st, src=lhsT[k * TILE_K:(k + 1) * TILE_K, m * TILE_M:(m + 1) * TILE_M])
                nisa.dma_copy(dst=mv, src=rhs[k * TILE_K:(k + 1) * TILE_K, n * TILE_N:(n + 1) * TILE_N])
                nisa.nc_matmul(dst=acc, stationary=st, moving=mv)
            out = nl.ndarray((TILE_M, TILE_N), dtype=result.dtype, buffer=nl.sbuf)
            nisa.tensor_copy(dst=out, src=acc)
            nisa.dma_copy(dst=result[m * TILE_M:(m + 1) * TILE_M, n * TILE_N:(n + 1) * TILE_N], src=out)
    return result

"""trn2 4096^3 ladder, V0 "tiled" (docs/measurements.md §2; profile total 8,602 us).

Published schedule (aws-neuron/neuron-agentic-development skills/neuron-nki-profile-querying/references/example-bounds-analysis.md, "Kernel (V0)"):
    for m in nl.affine_range(M // TILE_M):          # 32
        for n in nl.affine_range(N // TILE_N):      # 8
            for k in nl.affine_range(K // TILE_K):  # 32
                nisa.dma_copy(dst=lhsT_tile, src=lhsT[k..., m...])
                nisa.dma_copy(dst=rhs_tile,  src=rhs[k..., n...])
                nisa.nc_matmul(dst=res_psum, stationary=lhsT_tile, moving=rhs_tile)
            nisa.tensor_copy(dst=res_sb, src=res_psum)
            nisa.dma_copy(dst=result[m..., n...], src=res_sb)

Also published, at 2048^3 (docs/measurements.md §6, point tp_v1_pretransposed; profile
total 608 us, TensorE active 420 us): aws-neuron/neuron-agentic-development
skills/neuron-nki-profile-querying/references/investigations/redundant_te_transposes.md,
"Worked example", "V1 (pre-transposed): takes lhsT[K,M] already transposed, eliminates
nc_transpose entirely", i.e. the loop nest of its V0 (trn2_tp_v0_transpose.py) without the
transpose: m 16, n 4, k 16, per k a 128x128 lhsT tile and a 128x512 rhs tile, nc_matmul;
"1,024 REGULAR MATMULs".

result[M, N] = lhsT[K, M]^T @ rhs[K, N]. Loops m (M/128), n (N/512), k (K/128);
per k `dma_copy` a 128x128 stationary tile and a 128x512 moving tile into
SBUF, then `nc_matmul` into a 128x512 fp32 PSUM tile; per (m, n) a
`tensor_copy` to SBUF and a store. Current NKI API (destination first).
Written for tessel from the published schedule. Run: tessel run
  trn2_mm_v0_tiled.py --target trn2 --timing-only --arg lhsT=bf16[4096,4096]
  --arg rhs=bf16[4096,4096]
"""
import nki
import nki.isa as nisa
import nki.language as nl

TILE_K, TILE_M, TILE_N = 128, 128, 512


@nki.jit
def mm_v0(lhsT, rhs):
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

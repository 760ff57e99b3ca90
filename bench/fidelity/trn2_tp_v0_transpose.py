"""trn2 2048^3 matmul with an on-device transpose per tile, V0 (docs/measurements.md §6;
profile total 802 us, TensorE active 503 us).

Published schedule (aws-neuron/neuron-agentic-development skills/neuron-nki-profile-querying/references/investigations/redundant_te_transposes.md, "Worked example", "V0 (with transpose)"):
    "A 2048x2048x2048 bf16 matmul in two versions:
     V0 (with transpose): takes A[M,K] and transposes each tile on-device
     via nc_transpose before matmul:"
    for m in nl.affine_range(M // TILE_M):          # 16
        for n in nl.affine_range(N // TILE_N):      # 4
            for k in nl.affine_range(K // TILE_K):  # 16
                nisa.dma_copy(dst=A_tile, src=A[m..., k...])
                nisa.nc_transpose(dst=A_t_psum, data=A_tile)
                nisa.tensor_copy(dst=lhsT_tile, src=A_t_psum)
                nisa.dma_copy(dst=rhs_tile, src=rhs[k..., n...])
                nisa.nc_matmul(dst=acc, stationary=lhsT_tile, moving=rhs_tile)
    "1,024 TRANSPOSE MATMULs, 1,024 REGULAR MATMULs"; bounds: total_time 802 us,
    compute_bound (TE active) 503 us, compute_bound_ideal 246 us.

result[M, N] = A[M, K] @ rhs[K, N]. Loops m (M/128), n (N/512), k (K/128); per k
a 128x128 tile of A is loaded, transposed on the tensor engine into PSUM and
copied to SBUF as the stationary tile, a 128x512 tile of rhs is loaded, and one
`nc_matmul` accumulates into a 128x512 fp32 PSUM tile. Not shown in the
published snippet, as in its V1 and in the bounds example's V0 it follows:
per (m, n) a `tensor_copy` of the accumulator to SBUF and a store. The source
names no device; its compute_bound_ideal (17.18 GFLOP of regular matmuls in
218 us = 78.8 TFLOP/s, V1) is trn2's TensorE peak. Current NKI API
(destination first). Written for tessel from the published schedule. Run:
  tessel run trn2_tp_v0_transpose.py --target trn2 --timing-only
  --arg A=bf16[2048,2048] --arg rhs=bf16[2048,2048]
"""
import nki
import nki.isa as nisa
import nki.language as nl

TILE_K, TILE_M, TILE_N = 128, 128, 512


@nki.jit
def mm_transpose_v0(A, rhs):
    M, K = A.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), dtype=A.dtype, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // TILE_M):
        for n in nl.affine_range(N // TILE_N):
            acc = nl.ndarray((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // TILE_K):
                a = nl.ndarray((TILE_M, TILE_K), dtype=A.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=a, src=A[m * TILE_M:(m + 1) * TILE_M, k * TILE_K:(k + 1) * TILE_K])
                a_t = nl.ndarray((TILE_K, TILE_M), dtype=nl.float32, buffer=nl.psum)
                nisa.nc_transpose(dst=a_t, data=a)
                st = nl.ndarray((TILE_K, TILE_M), dtype=A.dtype, buffer=nl.sbuf)
                nisa.tensor_copy(dst=st, src=a_t)
                mv = nl.ndarray((TILE_K, TILE_N), dtype=rhs.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=mv, src=rhs[k * TILE_K:(k + 1) * TILE_K, n * TILE_N:(n + 1) * TILE_N])
                nisa.nc_matmul(dst=acc, stationary=st, moving=mv)
            out = nl.ndarray((TILE_M, TILE_N), dtype=result.dtype, buffer=nl.sbuf)
            nisa.tensor_copy(dst=out, src=acc)
            nisa.dma_copy(dst=result[m * TILE_M:(m + 1) * TILE_M, n * TILE_N:(n + 1) * TILE_N], src=out)
    return result

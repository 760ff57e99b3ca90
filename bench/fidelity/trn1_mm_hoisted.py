"""trn1 matmul ladder, rung 2 "hoisted loads" (docs/measurements.md §1; measured 42.96 ms).

Published schedule (aws-neuron/nki-samples src/nki_samples/tutorials/matrix_multiplication/matrix_multiplication_nki_kernels.py (current API; the measured 2.20-2.23 release used nl.load / nl.store, as this kernel does), nki_matmul_hoist_load_):
    for m in nl.affine_range(M // TILE_M):
      for k in nl.affine_range(K // TILE_K): # lhsT tile [TILE_K, TILE_M] loaded
      for n in nl.affine_range(N // TILE_N):
        for k in nl.affine_range(K // TILE_K): # rhs tile [TILE_K, TILE_N] loaded
        for k in nl.affine_range(K // TILE_K): # matmul into one PSUM tile
        # copy and store per (m, n)

As the tiled rung, but the whole K column of lhsT (K/128 tiles of 128x128) is
loaded once per m and the whole K column of rhs (K/128 tiles of 128x512) once
per (m, n), before the matmuls that use them. Written for tessel from the
published schedule. Run: tessel run trn1_mm_hoisted.py --target trn1
  --timing-only --arg lhsT=bf16[8192,4096] --arg rhs=bf16[8192,8192]
"""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE_K, TILE_M, TILE_N = 128, 128, 512


@nki.jit
def mm_hoisted(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    KT = K // TILE_K
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // TILE_M):
        # As published: the lhsT column is allocated TILE_N wide (only TILE_M of it is used).
        a_col = nl.ndarray((KT, nl.par_dim(TILE_K), TILE_N), dtype=lhsT.dtype, buffer=nl.sbuf)
        for k in nl.affine_range(KT):
            a_col[k, :, 0:TILE_M] = nl.load(lhsT[k * TILE_K:(k + 1) * TILE_K, m * TILE_M:(m + 1) * TILE_M])
        for n in nl.affine_range(N // TILE_N):
            b_col = nl.ndarray((KT, nl.par_dim(TILE_K), TILE_N), dtype=rhs.dtype, buffer=nl.sbuf)
            for k in nl.affine_range(KT):
                b_col[k] = nl.load(rhs[k * TILE_K:(k + 1) * TILE_K, n * TILE_N:(n + 1) * TILE_N])
            acc = nl.zeros((TILE_M, TILE_N), nl.float32, buffer=nl.psum)
            for k in nl.affine_range(KT):
                acc += nl.matmul(a_col[k, :, 0:TILE_M], b_col[k], transpose_x=True)
            out = nl.copy(acc, dtype=result.dtype)
            nl.store(result[m * TILE_M:(m + 1) * TILE_M, n * TILE_N:(n + 1) * TILE_N], value=out)
    return result

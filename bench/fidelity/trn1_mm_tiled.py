"""trn1 matmul ladder, rung 1 "tiled" (docs/measurements.md §1; measured 51.80 ms).

Published schedule (aws-neuron/nki-samples src/nki_samples/tutorials/matrix_multiplication/matrix_multiplication_nki_kernels.py (current API; the measured 2.20-2.23 release used nl.load / nl.store, as this kernel does), nki_matmul_tiled_):
    for m in nl.affine_range(M // TILE_M):
      for n in nl.affine_range(N // TILE_N):
        for k in nl.affine_range(K // TILE_K):
          # one lhsT tile [TILE_K, TILE_M] and one rhs tile [TILE_K, TILE_N] loaded, one matmul
      # PSUM -> SBUF copy and one store per (m, n)

result[M, N] = lhsT[K, M]^T @ rhs[K, N]. Loops m (M/128), n (N/512), k (K/128);
per k one 128x128 stationary tile of lhsT and one 128x512 moving tile of rhs
are loaded and multiplied into a 128x512 fp32 PSUM tile, which is copied to
SBUF and stored once per (m, n). Written for tessel from the published
schedule. Run: tessel run trn1_mm_tiled.py --target trn1 --timing-only
  --arg lhsT=bf16[8192,4096] --arg rhs=bf16[8192,8192]
"""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE_K, TILE_M, TILE_N = 128, 128, 512


@nki.jit
def mm_tiled(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // TILE_M):
        for n in nl.affine_range(N // TILE_N):
            # As published: a zeroed PSUM accumulator and SBUF tiles declared per k.
            acc = nl.zeros((TILE_M, TILE_N), nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // TILE_K):
                a = nl.ndarray((TILE_K, TILE_M), dtype=lhsT.dtype, buffer=nl.sbuf)
                b = nl.ndarray((TILE_K, TILE_N), dtype=rhs.dtype, buffer=nl.sbuf)
                a[...] = nl.load(lhsT[k * TILE_K:(k + 1) * TILE_K, m * TILE_M:(m + 1) * TILE_M])
                b[...] = nl.load(rhs[k * TILE_K:(k + 1) * TILE_K, n * TILE_N:(n + 1) * TILE_N])
                acc += nl.matmul(a, b, transpose_x=True)
            out = nl.copy(acc, dtype=result.dtype)
            nl.store(result[m * TILE_M:(m + 1) * TILE_M, n * TILE_N:(n + 1) * TILE_N], value=out)
    return result

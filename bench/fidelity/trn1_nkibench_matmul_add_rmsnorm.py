"""trn1 NKIBench matmul_add_rmsnorm, M 4096 x K 2048 x N 2048 fp32 (docs/measurements.md §6;
measured 2.667 ms, device profile total_time, mean of 10 runs).

Published schedule (zhang677/AccelOpt NKIBench/kernels/matmul_add_rmsnorm_M4096_N2048_K2048_0.py,
the benchmark's initial kernel, hand-written NKI; measured in
experiments/full_complete_local/profile_results.csv: "latency": 2.66658 ms, min 2.664, max 2.669,
hbm_read_bytes 98,115,584, hbm_write_bytes 33,554,432, no spill; trn1.32xlarge, nki.baremetal
"--disable-dge --logical-nc-config=1", mean of 10 profiles' total_time):
    forward: y = x @ w + z; y * g / sqrt(mean(y^2, axis=-1) + eps)
    TILE_M 128, TILE_K 128, TILE_N 512; g loaded once as [1, N]
    for i in affine_range(M // 128):
        x_tiles = load x[i*128 : +128, 0:K]                      # [128, 2048]
        for n in affine_range(N // 512):
            res_psum = zeros((128, 512), psum)
            for k in affine_range(K // 128):
                w_tile = load w[k*128 : +128, n*512 : +512]
                res_psum += nl.matmul(x_tiles[:, k*128 : +128], w_tile)
            rmsnorm_in_tile[:, n*512 : +512] = copy(res_psum)
        z_tile = load z[i*128 : +128, 0:N]
        a = add(rmsnorm_in_tile, z_tile); sum(square(a), axis 1) / N; add eps; rsqrt
        out = a * rms_reciprocal; out *= g.broadcast_to((128, N)); store result[i*128 : +128]

`nl.matmul(x, w)` with x untransposed: a tensor-engine transpose of the x tile, a copy and
the matmul (tessel's lowering, docs/nki.md; the profile counts 17.2 GFLOP of transposes).
The profile's bytes say the compiler did not run this as written: the loops load w once per
row tile (32 x 16.8 MB = 537 MB), the profile reads 98.1 MB in all (x and z 33.6 MB each, w
16.8 MB once, 14.2 MB more). This kernel is the written schedule. Deviation, as tessel runs no
reshape: g is a [1, N] parameter (the published kernel reshapes its [N] vector; same bytes).
Written for tessel from the published schedule. Run:
  tessel run trn1_nkibench_matmul_add_rmsnorm.py --target trn1 --timing-only --latency=device
  --arg x=f32[4096,2048] --arg w=f32[2048,2048] --arg eps=1e-5 --arg z=f32[4096,2048] --arg g=f32[1,2048]
"""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE_M, TILE_K, TILE_N = 128, 128, 512


@nki.jit
def matmul_add_rmsnorm(x, w, eps, z, g):
    M, K = x.shape
    _, N = w.shape
    result = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)
    g_tile = nl.load(g[0:1, 0:N])
    for i in nl.affine_range(M // TILE_M):
        rms_in = nl.ndarray((TILE_M, N), dtype=x.dtype, buffer=nl.sbuf)
        x_tiles = nl.load(x[nl.ds(i * TILE_M, TILE_M), 0:K])
        for n in nl.affine_range(N // TILE_N):
            acc = nl.zeros((TILE_M, TILE_N), nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // TILE_K):
                w_tile = nl.load(w[nl.ds(k * TILE_K, TILE_K), nl.ds(n * TILE_N, TILE_N)])
                acc += nl.matmul(x_tiles[0:TILE_M, nl.ds(k * TILE_K, TILE_K)], w_tile)
            rms_in[0:TILE_M, nl.ds(n * TILE_N, TILE_N)] = nl.copy(acc, dtype=result.dtype)
        z_tile = nl.load(z[nl.ds(i * TILE_M, TILE_M), 0:N])
        a = nl.add(rms_in, z_tile)
        mean = nl.sum(nl.square(a), axis=[1]) / N
        rms_reciprocal = nl.rsqrt(nl.add(mean, eps))
        out = nl.multiply(a, rms_reciprocal)
        out[...] = nl.multiply(out, g_tile.broadcast_to((TILE_M, N)))
        nl.store(result[nl.ds(i * TILE_M, TILE_M), 0:N], value=out)
    return result

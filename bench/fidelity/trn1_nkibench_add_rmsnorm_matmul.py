"""trn1 NKIBench add_rmsnorm_matmul, M 4096 x K 1024 x N 2048 fp32 (docs/measurements.md §6;
measured 1.222 ms, device profile total_time, mean of 10 runs).

Published schedule (zhang677/AccelOpt NKIBench/kernels/add_rmsnorm_matmul_M4096_N2048_K1024_0.py,
the benchmark's initial kernel, hand-written NKI; measured in
experiments/full_complete_local/profile_results.csv: "latency": 1.221911 ms, min 1.220, max 1.224,
hbm_read_bytes 42,012,672, hbm_write_bytes 33,554,432, no spill; trn1.32xlarge, nki.baremetal
"--disable-dge --logical-nc-config=1", mean of 10 profiles' total_time):
    forward: rmsnorm(x + z) * g, then @ w
    TILE_M 128, TILE_K 128, TILE_N 512; "Load RMSNorm weight once" (g as [1, K])
    for i in affine_range(32):                       # 4096 / 128
        x_tile = load x[i*128 : +128, 0:K]; z_tile = load z[i*128 : +128, 0:K]
        a = add(x_tile, z_tile); square; sum(axis 1); / K; add eps; rsqrt
        out = a * rms_reciprocal; out *= g.broadcast_to((128, K))
        for n in affine_range(4):                    # 2048 / 512
            res_psum = zeros((128, 512), psum)
            for k in affine_range(8):                # 1024 / 128
                w_tile = load w[k*128 : +128, n*512 : +512]
                res_psum += nl.matmul(out[:, k*128 : +128], w_tile)
            store result[i*128 : +128, n*512 : +512] <- copy(res_psum)

`nl.matmul` of the untransposed normalised tile: a tensor-engine transpose, a copy and the
matmul (tessel's lowering, docs/nki.md). The profile's bytes say the compiler did not run this
as written: 42.0 MB read is x and z (33.6 MB) and w once (8.4 MB), where the loops load w per
row tile (32 x 8.4 MB). This kernel is the written schedule. Deviation, as tessel runs no
reshape: g is a [1, K] parameter (the published kernel reshapes its [K] vector; same bytes).
Written for tessel from the published schedule. Run:
  tessel run trn1_nkibench_add_rmsnorm_matmul.py --target trn1 --timing-only --latency=device
  --arg x=f32[4096,1024] --arg w=f32[1024,2048] --arg eps=1e-5 --arg z=f32[4096,1024] --arg g=f32[1,1024]
"""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE_M, TILE_K, TILE_N = 128, 128, 512


@nki.jit
def add_rmsnorm_matmul(x, w, eps, z, g):
    M, K = x.shape
    _, N = w.shape
    result = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)
    g_tile = nl.load(g[0:1, 0:K])
    for i in nl.affine_range(M // TILE_M):
        x_tile = nl.load(x[nl.ds(i * TILE_M, TILE_M), 0:K])
        z_tile = nl.load(z[nl.ds(i * TILE_M, TILE_M), 0:K])
        a = nl.add(x_tile, z_tile)
        mean = nl.sum(nl.square(a), axis=[1]) / K
        rms_reciprocal = nl.rsqrt(nl.add(mean, eps))
        out = nl.multiply(a, rms_reciprocal)
        out[...] = nl.multiply(out, g_tile.broadcast_to((TILE_M, K)))
        for n in nl.affine_range(N // TILE_N):
            acc = nl.zeros((TILE_M, TILE_N), nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // TILE_K):
                w_tile = nl.load(w[nl.ds(k * TILE_K, TILE_K), nl.ds(n * TILE_N, TILE_N)])
                acc += nl.matmul(out[0:TILE_M, nl.ds(k * TILE_K, TILE_K)], w_tile)
            nl.store(result[nl.ds(i * TILE_M, TILE_M), nl.ds(n * TILE_N, TILE_N)],
                     value=nl.copy(acc, dtype=result.dtype))
    return result

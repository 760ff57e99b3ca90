"""trn1 NKIBench transpose_matmul, M 4096 x K 2048 x N 10944 fp32 (docs/measurements.md §6;
measured 9.610 ms, device profile total_time, mean of 10 runs).

Published schedule (zhang677/AccelOpt NKIBench/kernels/transpose_matmul_M4096_K2048_N10944_0.py,
the benchmark's initial kernel; measured in experiments/full_complete_local/profile_results.csv:
"latency": 9.610311 ms, min 9.606, max 9.613, hbm_read_bytes 392,167,424, hbm_write_bytes
179,306,496; accelopt/kernel_wrapper.py: trn1.32xlarge, nki.baremetal with
"--disable-dge --logical-nc-config=1", latency = mean of 10 profiles' total_time after 2 warm-ups):
    forward: lhs [K, M] transposed times rhs [K, N]; inputs reshaped to lhs (128, 16, 4096)
    and rhs (128, 16, 10944) (contraction row p*16 + t at partition p of K tile t)
    for i0 in affine_range(4):                       # M blocks of 1024
        for i1 in affine_range(16):                  # K tiles
            load lhs[:, i1, 1024*i0 : +1024]  -> [128, 1024] fp32
        for i2 in affine_range(11):                  # N blocks of 1024 (last 704, masked)
            for i3 in affine_range(16):
                load rhs[:, i3, 1024*i2 : +1024] -> [128, 1024] fp32
            for i4 in affine_range(8):               # M tiles of 128 in the block
                for i5 in affine_range(2):           # N halves of 512
                    for i6 in affine_range(16):      # K tiles
                        psum += nc_matmul(lhs_tile[i6][:, 128*i4 : +128], rhs_tile[i6][:, 512*i5 : +512])
                    out[:, 512*i5 : +512] = copy(psum)           # fp32, to SBUF
                store result[(8*i0 + i4)*128 : +128, 1024*i2 : +1024] <- out

The HBM tensors are passed as the 2-D views of the same bytes (lhs [128, 16*4096], rhs
[128, 16*10944], result [4096, 10944]): each load reads 128 partitions of 4 KiB at the
published strides. The masked last N block is `min(1024, N - 1024*i2)` wide, which is the
published mask (it keeps the leading columns). The PSUM accumulator is not zeroed (published:
`nl.zeros(..., lazy_initialization=True)`; the first matmul of a group overwrites). Buffers are declared where they are live (the
published kernel declares full-extent blocks, whose block dimension NKI does not allocate as
written). Written for tessel from the published schedule. Run:
  tessel run trn1_nkibench_transpose_matmul.py --target trn1 --timing-only --latency=device
  --arg lhs=f32[128,65536] --arg rhs=f32[128,175104]
"""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

P, BLOCK, HALF, TILE_M = 128, 1024, 512, 128


@nki.jit
def transpose_matmul(lhs, rhs, k_tiles=16):
    M = lhs.shape[1] // k_tiles
    N = rhs.shape[1] // k_tiles
    result = nl.ndarray((M, N), dtype=lhs.dtype, buffer=nl.shared_hbm)
    for i0 in nl.affine_range(M // BLOCK):
        lhs_blk = nl.ndarray((k_tiles, nl.par_dim(P), BLOCK), dtype=lhs.dtype, buffer=nl.sbuf)
        for i1 in nl.affine_range(k_tiles):
            lhs_blk[i1] = nl.load(lhs[0:P, i1 * M + BLOCK * i0:i1 * M + BLOCK * (i0 + 1)])
        for i2 in nl.affine_range((N + BLOCK - 1) // BLOCK):
            width = min(BLOCK, N - BLOCK * i2)
            rhs_blk = nl.ndarray((k_tiles, nl.par_dim(P), BLOCK), dtype=rhs.dtype, buffer=nl.sbuf)
            for i3 in nl.affine_range(k_tiles):
                rhs_blk[i3, 0:P, nl.ds(0, width)] = nl.load(rhs[0:P, nl.ds(i3 * N + BLOCK * i2, width)])
            for i4 in nl.affine_range(BLOCK // TILE_M):
                out = nl.ndarray((P, BLOCK), dtype=lhs.dtype, buffer=nl.sbuf)
                for i5 in nl.affine_range(BLOCK // HALF):
                    cols = min(HALF, N - BLOCK * i2 - HALF * i5)
                    acc = nl.ndarray((TILE_M, HALF), dtype=nl.float32, buffer=nl.psum)
                    for i6 in nl.affine_range(k_tiles):
                        acc[0:TILE_M, nl.ds(0, cols)] += nisa.nc_matmul(
                            lhs_blk[i6, 0:P, TILE_M * i4:TILE_M * (i4 + 1)],
                            rhs_blk[i6, 0:P, nl.ds(HALF * i5, cols)])
                    out[0:P, nl.ds(HALF * i5, cols)] = nl.copy(acc[0:TILE_M, nl.ds(0, cols)])
                nl.store(result[nl.ds((8 * i0 + i4) * TILE_M, TILE_M), nl.ds(BLOCK * i2, width)],
                         value=out[0:P, nl.ds(0, width)])
    return result

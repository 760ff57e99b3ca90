"""trn1 NKIBench matmul, M 4096 x K 5120 x N 12288 fp32 (docs/measurements.md §6; measured
35.200 ms, device profile total_time, mean of 10 runs).

Published schedule (zhang677/AccelOpt NKIBench/kernels/matmul_M4096_N12288_K5120_0.py, the
benchmark's initial kernel; measured in experiments/full_complete_local/profile_results.csv:
"latency": 35.199742 ms, min 35.165, max 35.249, hbm_read_bytes 9,059,762,176, hbm_write_bytes
201,326,592, no spill, transpose_flops 128.8 G; trn1.32xlarge, nki.baremetal
"--disable-dge --logical-nc-config=1", mean of 10 profiles' total_time):
    forward: lhs [M, K] @ rhs [K, N]; inputs reshaped to lhs (32, 128, 40, 128), rhs (40, 128, 12288)
    identity [128, 128] loaded once (for the tensor-engine transposes)
    for i0 in affine_range(12):                      # N blocks of 1024
        for i1 in affine_range(5): for i2 in affine_range(8):
            load rhs[8*i1 + i2, 0:128, 1024*i0 : +1024]          # the whole K of the block
        for i3 in affine_range(32):                  # M tiles of 128
            for i4 in affine_range(5):
                load lhs[i3, 0:128, 8*i4 : +8, 0:128] -> [128, 1024] # 1024 contiguous K values
                for i5 in affine_range(8):
                    nc_matmul(lhs chunk [128, 128*i5 : +128], identity, is_transpose=True) -> PSUM
                    copy -> lhsT [128 (K), i5, 128 (M)]
            for i6 in affine_range(2):               # N halves of 512
                for i7 in affine_range(5): for i8 in affine_range(8):      # 40 K tiles
                    psum += nc_matmul(lhsT[i7][:, i8, :], rhs[i7, i8][:, 512*i6 : +512])
                copy psum -> out [128, 512*i6 : +512]
            store result[i3, 0:128, 1024*i0 : +1024] <- out

The transposes are the tensor engine's (`nc_transpose`, `nc_matmul` against the identity with
is_transpose). HBM tensors are passed as 2-D views of the same bytes (lhs [4096, 5120], rhs
[5120, 12288], result [4096, 12288]). The profile's bytes say the compiler did not run this as
written: 9.06 GB read = rhs 32 times (once per M tile, 8.05 GB) + lhs 12 times (1.01 GB),
where the written loops read rhs once per N block (1.26 GB in all). This kernel is the written
schedule; PSUM tiles are not zeroed (published lazy_initialization). Written for tessel from
the published schedule. Run:
  tessel run trn1_nkibench_matmul.py --target trn1 --timing-only --latency=device
  --arg lhs=f32[4096,5120] --arg rhs=f32[5120,12288]
"""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

P, BLOCK, HALF, KCHUNK = 128, 1024, 512, 8


@nki.jit
def matmul(lhs, rhs):
    M, K = lhs.shape
    _, N = rhs.shape
    kb = K // (P * KCHUNK)
    result = nl.ndarray((M, N), dtype=lhs.dtype, buffer=nl.shared_hbm)
    for i0 in nl.affine_range(N // BLOCK):
        rhs_blk = nl.ndarray((kb * KCHUNK, nl.par_dim(P), BLOCK), dtype=rhs.dtype, buffer=nl.sbuf)
        for i1 in nl.affine_range(kb):
            for i2 in nl.affine_range(KCHUNK):
                rhs_blk[KCHUNK * i1 + i2] = nl.load(rhs[nl.ds((KCHUNK * i1 + i2) * P, P), nl.ds(BLOCK * i0, BLOCK)])
        for i3 in nl.affine_range(M // P):
            lhsT = nl.ndarray((kb * KCHUNK, nl.par_dim(P), P), dtype=lhs.dtype, buffer=nl.sbuf)
            for i4 in nl.affine_range(kb):
                a = nl.load(lhs[nl.ds(i3 * P, P), nl.ds(BLOCK * i4, BLOCK)])
                for i5 in nl.affine_range(KCHUNK):
                    a_t = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.psum)
                    a_t[...] = nisa.nc_transpose(a[0:P, nl.ds(P * i5, P)])
                    lhsT[KCHUNK * i4 + i5] = nl.copy(a_t)
            out = nl.ndarray((P, BLOCK), dtype=lhs.dtype, buffer=nl.sbuf)
            for i6 in nl.affine_range(BLOCK // HALF):
                acc = nl.ndarray((P, HALF), dtype=nl.float32, buffer=nl.psum)
                for i7 in nl.affine_range(kb):
                    for i8 in nl.affine_range(KCHUNK):
                        acc += nisa.nc_matmul(lhsT[KCHUNK * i7 + i8],
                                              rhs_blk[KCHUNK * i7 + i8, 0:P, nl.ds(HALF * i6, HALF)])
                out[0:P, nl.ds(HALF * i6, HALF)] = nl.copy(acc)
            nl.store(result[nl.ds(i3 * P, P), nl.ds(BLOCK * i0, BLOCK)], value=out)
    return result

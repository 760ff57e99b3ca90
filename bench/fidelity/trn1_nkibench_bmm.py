"""trn1 NKIBench bmm, B 16 x M 4096 x K 64 x N 4096 fp32 (docs/measurements.md §6; measured
4.611 ms, device profile total_time, mean of 10 runs).

Published schedule (zhang677/AccelOpt NKIBench/kernels/bmm_B16_M4096_K64_N4096_0.py, the
benchmark's initial kernel; measured in experiments/full_complete_local/profile_results.csv:
"latency": 4.610889 ms, min 4.605, max 4.619, hbm_read_bytes 67,436,544, hbm_write_bytes
1,086,324,736, spill_reload_bytes 33,816,576, spill_save_bytes 12,582,912; trn1.32xlarge,
nki.baremetal "--disable-dge --logical-nc-config=1", mean of 10 profiles' total_time):
    forward: out[b] = lhs[b] @ rhs[b], lhs (16, 4096, 64), rhs (16, 64, 4096)
    for i0 in affine_range(16):                      # batch
        for i1 in affine_range(4):                   # N blocks of 1024
            load rhs[i0, 0:64, 1024*i1 : +1024]      -> [64, 1024]
            for i2 in affine_range(4):               # M blocks of 1024
                for i3 in affine_range(8):           # M tiles of 128
                    load lhs[i0, 1024*i2 + 128*i3 : +128, 0:64]   -> [128, 64]
                    nc_matmul(..., identity, is_transpose=True)   -> PSUM [64, 128]
                    copy to lhsT block [64, 128*i3 : +128]
                for i4 in affine_range(8):
                    for i5 in affine_range(2):       # N halves of 512
                        nc_matmul(lhsT block [64, 128*i4 : +128], rhs [64, 512*i5 : +512]) -> PSUM [128, 512]
                        copy to out [128, 512*i5 : +512]
                    store result[i0, 1024*i2 + 128*i4 : +128, 1024*i1 : +1024] <- out

The transpose is the tensor engine's (`nc_transpose`, which is `nc_matmul` against the
identity with is_transpose). HBM tensors are passed as 2-D views of the same bytes (lhs
[16*4096, 64], rhs [16*64, 4096], result [16*4096, 4096]). The profile's bytes say the
compiler did not run this as written: 67.4 MB read = lhs once (16.8 MB) + rhs (16.8 MB)
+ 33.8 MB spill reload, where the written loops read lhs four times (once per i1); this
kernel is the written schedule. PSUM tiles are not zeroed (published lazy_initialization).
Written for tessel from the published schedule. Run:
  tessel run trn1_nkibench_bmm.py --target trn1 --timing-only --latency=device
  --arg lhs=f32[65536,64] --arg rhs=f32[1024,4096]
"""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

P, BLOCK, HALF = 128, 1024, 512


@nki.jit
def bmm(lhs, rhs, batch=16):
    rows, K = lhs.shape
    M = rows // batch
    N = rhs.shape[1]
    result = nl.ndarray((rows, N), dtype=lhs.dtype, buffer=nl.shared_hbm)
    for i0 in nl.affine_range(batch):
        for i1 in nl.affine_range(N // BLOCK):
            rhs_t = nl.load(rhs[nl.ds(i0 * K, K), nl.ds(BLOCK * i1, BLOCK)])
            for i2 in nl.affine_range(M // BLOCK):
                lhsT = nl.ndarray((K, BLOCK), dtype=lhs.dtype, buffer=nl.sbuf)
                for i3 in nl.affine_range(BLOCK // P):
                    a = nl.load(lhs[nl.ds(i0 * M + BLOCK * i2 + P * i3, P), 0:K])
                    a_t = nl.ndarray((K, P), dtype=nl.float32, buffer=nl.psum)
                    a_t[...] = nisa.nc_transpose(a)
                    lhsT[0:K, nl.ds(P * i3, P)] = nl.copy(a_t)
                for i4 in nl.affine_range(BLOCK // P):
                    out = nl.ndarray((P, BLOCK), dtype=lhs.dtype, buffer=nl.sbuf)
                    for i5 in nl.affine_range(BLOCK // HALF):
                        acc = nl.ndarray((P, HALF), dtype=nl.float32, buffer=nl.psum)
                        acc[...] = nisa.nc_matmul(lhsT[0:K, nl.ds(P * i4, P)], rhs_t[0:K, nl.ds(HALF * i5, HALF)])
                        out[0:P, nl.ds(HALF * i5, HALF)] = nl.copy(acc)
                    nl.store(result[nl.ds(i0 * M + BLOCK * i2 + P * i4, P), nl.ds(BLOCK * i1, BLOCK)], value=out)
    return result

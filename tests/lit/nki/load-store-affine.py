# nl.load / nl.store, nl.affine_range, nl.matmul(transpose_x=True) accumulating in PSUM (`+=`), nl.copy.
# RUN: tessel compile %s --arg lhsT=bf16[256,128] --arg rhs=bf16[256,512] | FileCheck %s
# RUN: tessel run %s --arg lhsT=bf16[256,128] --arg rhs=bf16[256,512] --check | FileCheck %s --check-prefix=SIM
# RUN: tessel compile %s --arg lhsT=bf16[256,128] --arg rhs=bf16[256,512] | tessel opt --verify-roundtrip - > /dev/null
# CHECK: kernel @mm(%lhsT: hbm<bf16, [K:256, M:128]>, %rhs: hbm<bf16, [K:256, N:512]>) -> (%result: hbm<bf16, [M:128, N:512]>) {
# CHECK: for %m = 0 to 1 step 1 parallel {
# CHECK: %acc = alloc psum<f32, [M:128, N:512]> bufs 2
# CHECK: for %k = 0 to 2 step 1 parallel {
# CHECK: %a = alloc sbuf<bf16, [K:128, M:128]> bufs 2
# CHECK-NEXT: dma %a[0 +: 128, 0 +: 128] <- %lhsT[%k*128 +: 128, %m*128 +: 128]
# CHECK: dma %b[0 +: 128, 0 +: 512] <- %rhs[%k*128 +: 128, 0 +: 512]
# CHECK-NEXT: matmul %acc[0 +: 128, 0 +: 512] <- %a[0 +: 128, 0 +: 128], %b[0 +: 128, 0 +: 512] reset(%k)
# CHECK: copy %out[0 +: 128, 0 +: 512] <- %acc[0 +: 128, 0 +: 512]
# CHECK-NEXT: dma %result[%m*128 +: 128, 0 +: 512] <- %out[0 +: 128, 0 +: 512]
# SIM: check: PASSED
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def mm(lhsT, rhs):
    K, M = lhsT.shape
    result = nl.ndarray((M, rhs.shape[1]), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // 128):
        acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
        for k in nl.affine_range(K // 128):
            a = nl.load(lhsT[k * 128:(k + 1) * 128, m * 128:(m + 1) * 128])
            b = nl.load(rhs[k * 128:(k + 1) * 128, 0:512])
            acc += nl.matmul(a, b, transpose_x=True)
        out = nl.copy(acc, dtype=result.dtype)
        nl.store(result[m * 128:(m + 1) * 128, :], value=out)
    return result

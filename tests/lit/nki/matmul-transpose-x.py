# nl.matmul(x, y) with transpose_x=False: x is [M, K], so K is brought to the partitions by a
# tensor-engine transpose and a copy to SBUF before the matmul.
# RUN: tessel compile %s --arg x=bf16[128,128] --arg y=bf16[128,512] | FileCheck %s
# RUN: tessel run %s --arg x=bf16[128,128] --arg y=bf16[128,512] --check | FileCheck %s --check-prefix=SIM
# CHECK: %xt = alloc sbuf<bf16, [M:128, K:128]>
# CHECK: %xT_psum = alloc psum<f32, [K:128, M:128]>
# CHECK-NEXT: transpose %xT_psum[0 +: 128, 0 +: 128] <- %xt[0 +: 128, 0 +: 128]
# CHECK: copy %xT[0 +: 128, 0 +: 128] <- %xT_psum[0 +: 128, 0 +: 128]
# CHECK: matmul %prod[0 +: 128, 0 +: 512] <- %xT[0 +: 128, 0 +: 128], %yt[0 +: 128, 0 +: 512]{{$}}
# SIM: check: PASSED
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def mmx(x, y):
    out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
    xt = nl.load(x)
    yt = nl.load(y)
    prod = nl.matmul(xt, yt)
    nl.store(out, value=nl.copy(prod, dtype=x.dtype))
    return out

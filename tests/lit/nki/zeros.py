# nl.zeros in SBUF (a memset per 2-D tile, par_dim placed first) and in PSUM; an SBUF accumulator
# that PSUM partial sums are added into by the vector engine.
# RUN: tessel compile %s --arg a=bf16[256,128] --arg b=bf16[256,512] | FileCheck %s
# RUN: tessel run %s --arg a=bf16[256,128] --arg b=bf16[256,512] --check | FileCheck %s --check-prefix=SIM
# CHECK: %acc = alloc sbuf<f32, [M:128, [[T:[A-Z0-9]+]]:2, N:512]>
# CHECK-NEXT: memset %acc[0 +: 128, 0, 0 +: 512], 0.0
# CHECK-NEXT: memset %acc[0 +: 128, 1, 0 +: 512], 0.0
# CHECK: %p = alloc psum<f32, [M:128, N:512]> bufs 2
# CHECK-NEXT: memset %p[0 +: 128, 0 +: 512], 0.0
# CHECK: matmul %p[0 +: 128, 0 +: 512] <- %at[0 +: 128, 0 +: 128], %bt[0 +: 128, 0 +: 512]{{$}}
# CHECK: tensor_tensor add %acc[0 +: 128, %j, 0 +: 512] <- %acc[0 +: 128, %j, 0 +: 512], %p[0 +: 128, 0 +: 512]
# SIM: check: PASSED
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def z(a, b):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.zeros((2, nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.sbuf)
    for j in nl.affine_range(2):
        p = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.psum)
        at = nl.load(a[j * 128:(j + 1) * 128, :])
        bt = nl.load(b[j * 128:(j + 1) * 128, :])
        p += nl.matmul(at, bt, transpose_x=True)
        acc[j] += p
    tot = nl.add(acc[0], acc[1])
    nl.store(out, value=tot)
    return out

# nisa.nc_matmul: the legacy form (returns a PSUM tile, `+=` accumulates) and the current one (dst first;
# accumulate=None infers the accumulation group, accumulate=False overwrites).
# RUN: tessel compile %s --arg a=bf16[256,128] --arg b=bf16[256,512] | FileCheck %s
# RUN: tessel run %s --arg a=bf16[256,128] --arg b=bf16[256,512] --check | FileCheck %s --check-prefix=SIM
# CHECK: matmul %p[0 +: 128, 0 +: 512] <- %at[0 +: 128, %k1, 0 +: 128], %bt[0 +: 128, %k1, 0 +: 512] reset(%k1)
# CHECK: matmul %q[0 +: 128, 0 +: 512] <- %at[0 +: 128, %k2, 0 +: 128], %bt[0 +: 128, %k2, 0 +: 512] reset(%k2)
# CHECK: matmul %r[0 +: 128, 0 +: 512] <- %at[0 +: 128, 1, 0 +: 128], %bt[0 +: 128, 1, 0 +: 512]{{$}}
# CHECK: copy %s[0 +: 128, 0 +: 512] <- %p[0 +: 128, 0 +: 512]
# CHECK: tensor_tensor add %s[0 +: 128, 0 +: 512] <- %s[0 +: 128, 0 +: 512], %q[0 +: 128, 0 +: 512]
# CHECK: tensor_tensor add %s[0 +: 128, 0 +: 512] <- %s[0 +: 128, 0 +: 512], %r[0 +: 128, 0 +: 512]
# SIM: check: PASSED
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def ncmm(a, b):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    at = nl.ndarray((128, 2, 128), dtype=a.dtype, buffer=nl.sbuf)
    bt = nl.ndarray((128, 2, 512), dtype=b.dtype, buffer=nl.sbuf)
    for k in nl.affine_range(2):
        at[:, k, :] = nl.load(a[k * 128:(k + 1) * 128, :])
        bt[:, k, :] = nl.load(b[k * 128:(k + 1) * 128, :])
    p = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
    for k in nl.affine_range(2):
        p[...] += nisa.nc_matmul(at[:, k, :], bt[:, k, :])
    q = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
    for k in nl.affine_range(2):
        nisa.nc_matmul(q, at[:, k, :], bt[:, k, :])
    r = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=r, stationary=at[:, 1, :], moving=bt[:, 1, :], accumulate=False)
    s = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    s[...] = nl.copy(p)
    s[...] += q
    s[...] += r
    nl.store(out, value=s)
    return out

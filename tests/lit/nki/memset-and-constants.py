# nisa.memset (both API generations), `t[...] = constant`, nl.tile_size from the target, and the
# @nki.benchmark(...) decorator form.
# RUN: tessel compile %s --arg x=bf16[128,512] | FileCheck %s
# RUN: tessel compile %s --arg x=bf16[128,512] --target trn2 | FileCheck %s
# RUN: tessel run %s --arg x=bf16[128,512] --check | FileCheck %s --check-prefix=SIM
# CHECK: memset %a[0 +: 128, 0 +: 512], 1.5
# CHECK: memset %b[0 +: 128, 0 +: 512], -2.0
# CHECK: memset %c[0 +: 128, 0 +: 512], 0.25
# CHECK: tensor_tensor add %s[0 +: 128, 0 +: 512] <- %a[0 +: 128, 0 +: 512], %b[0 +: 128, 0 +: 512]
# SIM: check: PASSED
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.benchmark(warmup=5, iters=10)
def consts(x):
    P, F = nl.tile_size.pmax, nl.tile_size.gemm_moving_fmax
    y = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.shared_hbm)
    a = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
    nisa.memset(a, 1.5)
    b = nisa.memset((P, F), -2.0, nl.float32)
    c = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
    c[...] = 0.25
    s = nl.add(a, b)
    s2 = nl.multiply(s, c)
    nl.store(y, value=s2)
    return y

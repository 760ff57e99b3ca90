# Elementwise ops: nisa.tensor_copy, nisa.tensor_tensor, nisa.tensor_scalar, nisa.activation (scale),
# nl.add / nl.multiply / nl.exp / nl.silu / nl.gelu, tile operators, both API generations.
# RUN: tessel compile %s --arg x=bf16[128,256] --arg y=bf16[128,256] | FileCheck %s
# RUN: tessel run %s --arg x=bf16[128,256] --arg y=bf16[128,256] --check | FileCheck %s --check-prefix=SIM
# CHECK: tensor_tensor add %s[0 +: 128, 0 +: 256] <- %a[0 +: 128, 0 +: 256], %b[0 +: 128, 0 +: 256]
# CHECK: tensor_tensor mul %m[0 +: 128, 0 +: 256] <- %s[0 +: 128, 0 +: 256], %b[0 +: 128, 0 +: 256]
# CHECK: activation exp %e[0 +: 128, 0 +: 256] <- %m[0 +: 128, 0 +: 256]
# CHECK: activation silu %f[0 +: 128, 0 +: 256] <- %e[0 +: 128, 0 +: 256]
# CHECK: activation gelu %g[0 +: 128, 0 +: 256] <- %a[0 +: 128, 0 +: 256] scale 0.5
# CHECK: tensor_tensor sub %h[0 +: 128, 0 +: 256] <- %f[0 +: 128, 0 +: 256], %g[0 +: 128, 0 +: 256]
# CHECK: tensor_scalar mul %k[0 +: 128, 0 +: 256] <- %h[0 +: 128, 0 +: 256], 2.0
# CHECK: copy %w[0 +: 128, 0 +: 256] <- %k[0 +: 128, 0 +: 256]
# CHECK: tensor_tensor max %w[0 +: 128, 0 +: 256] <- %k[0 +: 128, 0 +: 256], %a[0 +: 128, 0 +: 256]
# CHECK: activation relu %w[0 +: 128, 0 +: 256] <- %w[0 +: 128, 0 +: 256]
# SIM: check: PASSED
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def ew(x, y):
    out = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.shared_hbm)
    a = nl.load(x)
    b = nl.load(y)
    s = nl.add(a, b)
    m = nl.multiply(s, b)
    e = nl.exp(m)
    f = nl.silu(e)
    g = nisa.activation(op=nl.gelu, data=a, scale=0.5)
    h = f - g
    k = nisa.tensor_scalar(h, nl.multiply, 2.0)
    w = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(w, k)
    nisa.tensor_tensor(dst=w, data1=k, data2=a, op=nl.maximum)
    nisa.activation(w, nl.relu, w)
    nl.store(out, value=w)
    return out

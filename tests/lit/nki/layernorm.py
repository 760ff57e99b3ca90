# LayerNorm after the schedule of AWS's layernorm tutorial (gamma and beta loaded once and broadcast;
# per 128-row tile: the mean, the variance as mean(x^2) - mean^2, (x - mean) * rsqrt(var + eps), then
# gamma and beta), in the legacy `neuronxcc.nki` namespace with `epsilon` a float parameter (its
# default, or --arg); a second kernel normalises with nki.isa: tensor_reduce with numpy's ufunc,
# activation_reduce, and one activation whose scale and bias are [P, 1] tiles. Checked against numpy;
# timed on trn1 and trn2.
# REQUIRES: numpy
# RUN: tessel run %s -k layernorm --arg x=f32[256,512] --arg gamma=f32[1,512] --arg beta=f32[1,512] --check --reference %S/Inputs/refs.py:layernorm | FileCheck %s --check-prefix=PASS
# RUN: tessel run %s -k layernorm --arg x=f32[256,512] --arg gamma=f32[1,512] --arg beta=f32[1,512] --arg epsilon=0.5 --check --reference %S/Inputs/refs.py:layernorm | FileCheck %s --check-prefix=PASS
# RUN: tessel run %s -k layernorm_isa --arg x=bf16[256,512] --arg gamma=bf16[1,512] --arg beta=bf16[1,512] --check --reference %S/Inputs/refs.py:layernorm | FileCheck %s --check-prefix=PASS
# RUN: tessel compile %s -k layernorm_isa --arg x=bf16[256,512] --arg gamma=bf16[1,512] --arg beta=bf16[1,512] | FileCheck %s
# RUN: tessel run %s -k layernorm --arg x=bf16[2048,2048] --arg gamma=bf16[1,2048] --arg beta=bf16[1,2048] --target trn1 --timing-only | FileCheck %s --check-prefix=TIME
# RUN: tessel run %s -k layernorm_isa --arg x=bf16[2048,2048] --arg gamma=bf16[1,2048] --arg beta=bf16[1,2048] --target trn2 --timing-only | FileCheck %s --check-prefix=TIME
# CHECK: tensor_reduce add %s1[0 +: 128, 0 +: 1] <- %xt[0 +: 128, 0 +: 512]
# CHECK: activation square %sq[0 +: 128, 0 +: 512] <- %xt[0 +: 128, 0 +: 512] accumulate %ss[0 +: 128, 0 +: 1]
# CHECK: activation copy %norm[0 +: 128, 0 +: 512] <- %xt[0 +: 128, 0 +: 512] scale %rstd[0 +: 128, 0 +: 1] bias %shift{{[0-9]*}}[0 +: 128, 0 +: 1]
# PASS: check: PASSED
# TIME: latency
import math

import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def layernorm(x, gamma, beta, epsilon=1e-5):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    rows, d = x.shape
    P = nl.tile_size.pmax
    ip, jf = nl.mgrid[0:P, 0:d]
    g = nl.load(gamma[0:1, 0:d]).broadcast_to((P, d))
    b = nl.load(beta[0:1, 0:d]).broadcast_to((P, d))
    for t in nl.affine_range(math.ceil(rows / P)):
        live = t * P + ip < rows
        xt = nl.load(x[t * P + ip, jf], mask=live)
        mu = nl.mean(xt, axis=1)
        var = nl.mean(nl.square(xt), axis=1) - mu * mu
        norm = (xt - mu) * nl.rsqrt(var + epsilon)
        nl.store(out[t * P + ip, jf], value=norm * g + b, mask=live)
    return out


@nki.jit
def layernorm_isa(x, gamma, beta, epsilon=1e-5):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    rows, d = x.shape
    P = nl.tile_size.pmax
    g = nl.load(gamma[0:1, 0:d]).broadcast_to((P, d))
    b = nl.load(beta[0:1, 0:d]).broadcast_to((P, d))
    for t in nl.affine_range(rows // P):
        xt = nl.load(x[nl.ds(t * P, P), 0:d])
        s1 = nisa.tensor_reduce(np.add, xt, axis=[1], keepdims=True, dtype=nl.float32)
        mu = nl.multiply(s1, 1.0 / d)
        ss = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
        sq = nisa.activation_reduce(op=nl.square, data=xt, reduce_op=nl.add, reduce_res=ss, dtype=nl.float32)
        var = nisa.tensor_scalar(ss, np.multiply, 1.0 / d) - mu * mu
        rstd = nisa.activation(op=nl.rsqrt, data=var, bias=epsilon)
        shift = nisa.tensor_scalar(data=nl.multiply(mu, rstd), op0=nl.multiply, operand0=-1.0)
        norm = nisa.activation(op=nl.copy, data=xt, scale=rstd, bias=shift)
        nl.store(out[nl.ds(t * P, P), 0:d], value=nl.add(nisa.tensor_tensor(norm, g, nl.multiply), b))
    return out

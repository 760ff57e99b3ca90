# Attention forward after the stages of AWS's attention tutorial, for one head: per 128-query tile, the
# scores Q K^T on the tensor engine into PSUM, the row max, exp(scores - max) with the row sums in the
# same activation (bias a [P, 1] tile, reduce_res), the probabilities transposed 128 columns at a time
# and multiplied by V (accumulating over the keys), and the result scaled by 1 / sum. Checked against
# numpy; timed on trn1 and trn2.
# REQUIRES: numpy
# RUN: tessel compile %s --arg qT=bf16[128,512] --arg k=bf16[128,512] --arg v=bf16[512,128] | FileCheck %s
# RUN: tessel run %s --arg qT=bf16[128,256] --arg k=bf16[128,512] --arg v=bf16[512,128] --check --reference %S/Inputs/refs.py:attention | FileCheck %s --check-prefix=PASS
# RUN: tessel run %s --arg qT=bf16[128,2048] --arg k=bf16[128,512] --arg v=bf16[512,128] --target trn1 --timing-only | FileCheck %s --check-prefix=TIME
# RUN: tessel run %s --arg qT=bf16[128,2048] --arg k=bf16[128,512] --arg v=bf16[512,128] --target trn2 --timing-only | FileCheck %s --check-prefix=TIME
# CHECK: tensor_reduce max %row_max[0 +: 128, 0 +: 1] <- %scores[0 +: 128, 0 +: 512]
# CHECK: activation exp %probs[0 +: 128, 0 +: 512] <- %scores[0 +: 128, 0 +: 512] bias %neg_max[0 +: 128, 0 +: 1] accumulate %row_sum[0 +: 128, 0 +: 1]
# CHECK: activation reciprocal %inv[0 +: 128, 0 +: 1] <- %row_sum[0 +: 128, 0 +: 1]
# CHECK: transpose
# CHECK: matmul %acc[0 +: 128, 0 +: 128] <- %pT{{[0-9]*}}[0 +: 128, 0 +: 128], %vt[0 +: 128, 0 +: 128] reset(%c)
# CHECK: tensor_scalar mul %o[0 +: 128, 0 +: 128] <- %acc[0 +: 128, 0 +: 128], %inv[0 +: 128, 0 +: 1]
# PASS: check: PASSED
# TIME: latency
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def attention_fwd(qT, k, v):
    d, n_q = qT.shape
    n_k = k.shape[1]
    out = nl.ndarray((n_q, d), dtype=nl.float32, buffer=nl.shared_hbm)
    k_sb = nl.load(k)
    for i in nl.affine_range(n_q // 128):
        q_sb = nl.load(qT[:, nl.ds(i * 128, 128)])
        scores = nisa.nc_matmul(q_sb, k_sb)
        row_max = nl.max(scores, axis=1, keepdims=True)
        neg_max = nl.multiply(row_max, -1.0)
        row_sum = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        probs = nisa.activation_reduce(op=nl.exp, data=scores, reduce_op=nl.add, reduce_res=row_sum,
                                       bias=neg_max, dtype=nl.bfloat16)
        inv = nl.reciprocal(row_sum)
        acc = nl.zeros((128, d), nl.float32, buffer=nl.psum)
        for c in nl.affine_range(n_k // 128):
            pT = nl.copy(nisa.nc_transpose(probs[:, nl.ds(c * 128, 128)]), dtype=nl.bfloat16)
            vt = nl.load(v[nl.ds(c * 128, 128), :])
            acc += nisa.nc_matmul(pT, vt)
        o = nl.multiply(acc, inv)
        nl.store(out[nl.ds(i * 128, 128), :], value=o)
    return out

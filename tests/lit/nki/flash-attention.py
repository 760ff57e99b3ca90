# Flash attention forward after the schedule of AWS's flash attention kernel (flash_fwd in nki-samples'
# reference kernels, which the attention tutorial builds up to), written for tessel: an SPMD grid over
# the heads (flash[heads]); per 128-query tile, the key blocks of 512 in a sequential loop carrying the
# running row max m, the running row sum l and the unnormalised output o in SBUF; per block the scores
# Q K^T into PSUM, the new max, exp(scale * s - m_new) with its row sums in one activation, the
# correction exp(m - m_new) applied to l and o, and P V accumulated over the block's four 128-key
# slices; o / l at the end. The causal variant masks each score block with affine_select (its offset
# follows the query tile and the key block) instead of skipping the blocks above the diagonal, which
# needs Python conditions on loop variables. Checked against numpy (softmax(Q K^T * scale) V), timed
# on trn1 and trn2; a kernel that forgets to rescale o by exp(m - m_new) fails the reference.
# REQUIRES: numpy
# RUN: tessel compile %s -k flash --arg q=bf16[2,128,256] --arg k=bf16[2,128,1024] --arg v=bf16[2,1024,128] | FileCheck %s
# RUN: tessel run %s -k flash --arg q=bf16[2,128,256] --arg k=bf16[2,128,1024] --arg v=bf16[2,1024,128] --check --reference %S/Inputs/refs.py:flash_attention | FileCheck %s --check-prefix=PASS
# RUN: tessel run %s -k flash_causal --arg q=f32[1,128,1024] --arg k=f32[1,128,1024] --arg v=f32[1,1024,128] --check --reference %S/Inputs/refs.py:flash_attention_causal | FileCheck %s --check-prefix=PASS
# RUN: tessel run %s -k flash --arg q=bf16[4,128,2048] --arg k=bf16[4,128,2048] --arg v=bf16[4,2048,128] --target trn1 --timing-only | FileCheck %s --check-prefix=TIME
# RUN: tessel run %s -k flash --arg q=bf16[4,128,2048] --arg k=bf16[4,128,2048] --arg v=bf16[4,2048,128] --target trn2 --timing-only | FileCheck %s --check-prefix=TIME
# Without the correction of o the first blocks' contributions keep their old scale: the reference fails it.
# RUN: not tessel run %s -k flash_no_rescale --arg q=bf16[1,128,128] --arg k=bf16[1,128,1024] --arg v=bf16[1,1024,128] --check --reference %S/Inputs/refs.py:flash_attention > %t.out 2> %t.err
# RUN: FileCheck %s --check-prefix=FAIL < %t.out
# RUN: FileCheck %s --check-prefix=FAILERR < %t.err
# CHECK: for %program0 = 0 to 2 step 1 parallel {
# CHECK: for %kb = 0 to 2 step 1 {
# CHECK: matmul %s[0 +: 128, 0 +: 512] <- %q_tile[0 +: 128, 0 +: 128], %k_blk[0 +: 128, 0 +: 512]
# CHECK: tensor_reduce max %blk_max[0 +: 128, 0 +: 1] <- %s[0 +: 128, 0 +: 512]
# CHECK: activation exp %p[0 +: 128, 0 +: 512] <- %s[0 +: 128, 0 +: 512] scale 0.125 bias %neg_m[0 +: 128, 0 +: 1] accumulate %blk_sum[0 +: 128, 0 +: 1]
# CHECK: matmul %pv[0 +: 128, 0 +: 128] <- %pT{{[0-9]*}}[0 +: 128, 0 +: 128], %v_blk[0 +: 128, 0 +: 128] reset(%c)
# PASS: check: PASSED
# PASS: reference: "{{.*}}refs.py:flash_attention{{(_causal)?}} (numpy, the kernel's math)"
# TIME: latency
# FAIL: check: FAILED
# FAILERR: error: check failed
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

NEG_LARGE = -3.0e38  # the running max before the first block (about fp32's lowest)
MASKED = -9984.0  # a masked score: exp of it times the scale, less the max, is 0


@nki.jit
def flash_fwd(q, k, v, softmax_scale=0.125, causal=False, rescale=True):
    heads, d, seq_q = q.shape
    seq_k = k.shape[2]
    out = nl.ndarray((heads, seq_q, d), dtype=q.dtype, buffer=nl.shared_hbm)
    h = nl.program_id(0)
    ip, jf = nl.mgrid[0:128, 0:512]
    for qi in nl.affine_range(seq_q // 128):
        q_tile = nl.load(q[h, :, nl.ds(qi * 128, 128)])
        m = nl.full((128, 1), NEG_LARGE, dtype=nl.float32, buffer=nl.sbuf)
        l = nl.zeros((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        o = nl.zeros((128, d), dtype=nl.float32, buffer=nl.sbuf)
        for kb in nl.sequential_range(seq_k // 512):
            k_blk = nl.load(k[h, :, nl.ds(kb * 512, 512)])
            s = nisa.nc_matmul(q_tile, k_blk)
            if causal:
                s = nisa.affine_select(pred=(qi * 128 + ip - (kb * 512 + jf) >= 0), on_true_tile=nl.copy(s),
                                       on_false_value=MASKED)
            blk_max = nl.max(s, axis=1)
            m_new = nl.maximum(m, nl.multiply(blk_max, softmax_scale))
            neg_m = nl.multiply(m_new, -1.0)
            blk_sum = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
            p = nisa.activation_reduce(op=nl.exp, data=s, scale=softmax_scale, bias=neg_m, reduce_op=nl.add,
                                       reduce_res=blk_sum, dtype=nl.bfloat16)
            alpha = nl.exp(nl.subtract(m, m_new))
            l[...] = nl.add(nl.multiply(l, alpha), blk_sum)
            pv = nl.ndarray((128, d), dtype=nl.float32, buffer=nl.psum)
            for c in nl.affine_range(4):
                pT = nl.copy(nisa.nc_transpose(p[:, nl.ds(c * 128, 128)]), dtype=v.dtype)
                v_blk = nl.load(v[h, nl.ds(kb * 512 + c * 128, 128), :])
                pv += nisa.nc_matmul(pT, v_blk)
            o[...] = nl.add(nl.multiply(o, alpha) if rescale else o, pv)
            m[...] = m_new
        nl.store(out[h, nl.ds(qi * 128, 128), :], value=nl.divide(o, l, dtype=q.dtype))
    return out


def flash(q, k, v, softmax_scale=0.125):
    return flash_fwd[q.shape[0]](q, k, v, softmax_scale)


def flash_causal(q, k, v, softmax_scale=0.125):
    return flash_fwd[q.shape[0]](q, k, v, softmax_scale, causal=True)


def flash_no_rescale(q, k, v, softmax_scale=0.125):
    """Wrong: o keeps the scale of the max it was computed with."""
    return flash_fwd[q.shape[0]](q, k, v, softmax_scale, rescale=False)

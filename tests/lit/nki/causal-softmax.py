# A causal mask with nisa.affine_select (the attention tutorial's masking stage): the score tile at
# rows t*128 + p, columns f keeps f <= t*128 + p, the rest is filled with a large negative value before
# the row softmax; the mask follows the row tile through its loop (offset t*128). The current API's
# form (pattern, offset, channel_multiplier, cmp_op) and the legacy predicate form trace to the same
# op. Checked against numpy; a wrong mask (the diagonal masked too) fails the reference.
# REQUIRES: numpy
# RUN: tessel compile %s -k causal_softmax --arg x=f32[256,256] | FileCheck %s
# RUN: tessel compile %s -k causal_softmax_pred --arg x=f32[256,256] | FileCheck %s
# RUN: tessel run %s -k causal_softmax --arg x=f32[256,256] --check --reference %S/Inputs/refs.py:causal_softmax | FileCheck %s --check-prefix=PASS
# RUN: tessel run %s -k causal_softmax_pred --arg x=bf16[256,256] --check --reference %S/Inputs/refs.py:causal_softmax | FileCheck %s --check-prefix=PASS
# RUN: tessel run %s -k causal_softmax --arg x=bf16[1024,1024] --target trn1 --timing-only | FileCheck %s --check-prefix=TIME
# RUN: tessel run %s -k causal_softmax --arg x=bf16[1024,1024] --target trn2 --timing-only | FileCheck %s --check-prefix=TIME
# RUN: not tessel run %s -k causal_softmax_wrong --arg x=f32[256,256] --check --reference %S/Inputs/refs.py:causal_softmax > %t.out 2>&1
# RUN: FileCheck %s --check-prefix=FAIL < %t.out
# CHECK: affine_select is_ge %{{.*}}[0 +: 128, 0 +: 256] <- %s[0 +: 128, 0 +: 256] offset %t*128 partition 1 free -1 fill -9984.0
# PASS: check: PASSED
# TIME: latency
# FAIL: check: FAILED
import nki
import nki.isa as nisa
import nki.language as nl


def _softmax_store(out, rows, masked):
    e = nl.exp(masked - nl.max(masked, axis=1, keepdims=True))
    nl.store(out[rows, :], value=e / nl.sum(e, axis=1, keepdims=True))


@nki.jit
def causal_softmax(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    n = x.shape[1]
    for t in nl.affine_range(x.shape[0] // 128):
        s = nl.load(x[nl.ds(t * 128, 128), :])
        m = nl.ndarray((128, n), dtype=x.dtype, buffer=nl.sbuf)
        nisa.affine_select(dst=m, pattern=[[-1, n]], offset=t * 128, channel_multiplier=1, on_true_tile=s,
                           on_false_value=-9984.0, cmp_op=nl.greater_equal)
        _softmax_store(out, nl.ds(t * 128, 128), m)
    return out


@nki.jit
def causal_softmax_pred(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    ip, jf = nl.mgrid[0:128, 0:x.shape[1]]
    for t in nl.affine_range(x.shape[0] // 128):
        s = nl.load(x[t * 128 + ip, jf])
        m = nisa.affine_select(pred=(t * 128 + ip - jf >= 0), on_true_tile=s, on_false_value=-9984.0)
        _softmax_store(out, nl.ds(t * 128, 128), m)
    return out


@nki.jit
def causal_softmax_wrong(x):
    """Wrong: `>` masks the diagonal too."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    ip, jf = nl.mgrid[0:128, 0:x.shape[1]]
    for t in nl.affine_range(x.shape[0] // 128):
        s = nl.load(x[t * 128 + ip, jf])
        m = nisa.affine_select(pred=(t * 128 + ip - jf > 0), on_true_tile=s, on_false_value=-9984.0)
        _softmax_store(out, nl.ds(t * 128, 128), m)
    return out

# nisa.bn_stats and nisa.bn_aggr in the current `nki` namespace, the destination first: two
# bn_stats of 384 columns each into one [P, 12] fp32 tile (dst= and positional), one bn_aggr into
# the [P, 2] mean and variance. Checked against numpy on trn1 and trn2.
# REQUIRES: numpy
# RUN: tessel compile %s --arg x=f32[128,768] | FileCheck %s
# RUN: tessel run %s --arg x=f32[128,768] --check --reference %S/Inputs/refs.py:mean_var --target trn1 | FileCheck %s --check-prefix=PASS
# RUN: tessel run %s --arg x=bf16[128,768] --check --reference %S/Inputs/refs.py:mean_var --target trn2 | FileCheck %s --check-prefix=PASS
# CHECK: bn_stats %stats[0 +: 128, 0 +: 6] <- %xt[0 +: 128, 0 +: 384]
# CHECK: bn_stats %stats[0 +: 128, 6 +: 6] <- %xt[0 +: 128, 384 +: 384]
# CHECK: bn_aggr %mv[0 +: 128, 0 +: 2] <- %stats[0 +: 128, 0 +: 12]
# PASS: check: PASSED
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def mean_var(x):
    out = nl.ndarray((x.shape[0], 2), dtype=nl.float32, buffer=nl.shared_hbm)
    xt = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=xt, src=x)
    stats = nl.ndarray((x.shape[0], 12), dtype=nl.float32, buffer=nl.sbuf)
    nisa.bn_stats(dst=stats[:, 0:6], data=xt[:, 0:384])
    nisa.bn_stats(stats[:, 6:12], xt[:, 384:768])
    mv = nl.ndarray((x.shape[0], 2), dtype=nl.float32, buffer=nl.sbuf)
    nisa.bn_aggr(dst=mv, data=stats)
    nisa.dma_copy(dst=out, src=mv)
    return out

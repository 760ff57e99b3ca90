# What nisa.bn_stats and nisa.bn_aggr do not take, each an error at the kernel's line: more than
# nl.tile_size.bn_stats_fmax (512) elements per partition in one bn_stats, a destination that is not
# [P, 6] / [P, 2], a bn_aggr source that is not (count, mean, variance * count) triples.
# RUN: not tessel compile %s -k too_wide --arg x=f32[128,1024] 2>&1 | FileCheck %s --check-prefix=WIDE
# RUN: not tessel compile %s -k wrong_dst --arg x=f32[128,512] 2>&1 | FileCheck %s --check-prefix=DST
# RUN: not tessel compile %s -k not_triples --arg x=f32[128,512] 2>&1 | FileCheck %s --check-prefix=TRIPLES
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def too_wide(x):
    y = nl.ndarray((128, 2), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    # WIDE: err-bn-stats.py:[[@LINE+1]]: error: nisa.bn_stats: the source has 1024 elements per partition; bn_stats reads at most 512 (nl.tile_size.bn_stats_fmax)
    s = nisa.bn_stats(t)
    nl.store(y, value=nisa.bn_aggr(s))
    return y


@nki.jit
def wrong_dst(x):
    y = nl.ndarray((128, 2), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    s = nl.ndarray((128, 4), dtype=nl.float32, buffer=nl.sbuf)
    # DST: err-bn-stats.py:[[@LINE+1]]: error: nisa.bn_stats: destination tile [128, 4] should be [128, 6]
    nisa.bn_stats(dst=s, data=t)
    nl.store(y, value=nisa.bn_aggr(s[0:128, 0:3]))
    return y


@nki.jit
def not_triples(x):
    y = nl.ndarray((128, 2), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    s = nl.ndarray((128, 6), dtype=nl.float32, buffer=nl.sbuf)
    nisa.bn_stats(s, t)
    m = nl.ndarray((128, 2), dtype=nl.float32, buffer=nl.sbuf)
    # TRIPLES: err-bn-stats.py:[[@LINE+1]]: error: nisa.bn_aggr: the source has 5 elements per partition, not (count, mean, variance * count) triples
    nisa.bn_aggr(m, s[0:128, 0:5])
    nl.store(y, value=m)
    return y

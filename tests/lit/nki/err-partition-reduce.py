# tensor_partition_reduce folds with add or max only (an error at the kernel's line otherwise), and
# into a [1, F] tile.
# RUN: not tessel compile %s -k minimum --arg x=f32[128,64] 2>&1 | FileCheck %s --check-prefix=MIN
# RUN: not tessel compile %s -k wrong_dst --arg x=f32[128,64] 2>&1 | FileCheck %s --check-prefix=DST
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def minimum(x):
    y = nl.ndarray((1, 64), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    # MIN: err-partition-reduce.py:[[@LINE+1]]: error: nisa.tensor_partition_reduce: a partition reduction folds with add or max, not min
    nl.store(y, value=nisa.tensor_partition_reduce(nl.minimum, t))
    return y


@nki.jit
def wrong_dst(x):
    y = nl.ndarray((2, 64), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    r = nl.ndarray((2, 64), dtype=x.dtype, buffer=nl.sbuf)
    # DST: err-partition-reduce.py:[[@LINE+1]]: error: nisa.tensor_partition_reduce: destination tile [2, 64] should be [1, 64]
    nisa.tensor_partition_reduce(r, nl.add, t)
    nl.store(y, value=r)
    return y

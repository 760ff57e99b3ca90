# A DMA of an access pattern costs its contiguous runs (the DMA model's per-run rule, as any strided
# transfer: docs/tile-ir.md, "Access patterns"): moving the same 128 x 1024 bf16 elements from
# a 128 x 2048 tensor, every other element (2-byte runs) is slower than blocks of 64 elements every
# 128 (128-byte runs), which is slower than one contiguous half (2 KiB rows). The store is the same.
# REQUIRES: numpy
# RUN: rm -rf %t && mkdir %t
# RUN: tessel run %s -k strided --arg x=bf16[128,2048] --target trn1 --check --reference %S/Inputs/refs.py:every_other_column --report=json > %t/trn1.strided.json
# RUN: tessel run %s -k blocks --arg x=bf16[128,2048] --target trn1 --timing-only --report=json > %t/trn1.blocks.json
# RUN: tessel run %s -k contiguous --arg x=bf16[128,2048] --target trn1 --timing-only --report=json > %t/trn1.contiguous.json
# RUN: %python %S/Inputs/latency_order.py %t/trn1.strided.json %t/trn1.blocks.json %t/trn1.contiguous.json | FileCheck %s
# RUN: tessel run %s -k strided --arg x=bf16[128,2048] --target trn2 --timing-only --report=json > %t/trn2.strided.json
# RUN: tessel run %s -k blocks --arg x=bf16[128,2048] --target trn2 --timing-only --report=json > %t/trn2.blocks.json
# RUN: tessel run %s -k contiguous --arg x=bf16[128,2048] --target trn2 --timing-only --report=json > %t/trn2.contiguous.json
# RUN: %python %S/Inputs/latency_order.py %t/trn2.strided.json %t/trn2.blocks.json %t/trn2.contiguous.json | FileCheck %s
# The comparison can fail: in the other order it does.
# RUN: not %python %S/Inputs/latency_order.py %t/trn1.contiguous.json %t/trn1.strided.json | FileCheck %s --check-prefix=NOT
# CHECK: strided.json: {{[0-9.]+}} us
# CHECK: blocks.json: {{[0-9.]+}} us
# CHECK: contiguous.json: {{[0-9.]+}} us
# CHECK: decreasing
# NOT: NOT decreasing
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def strided(x):
    out = nl.ndarray((128, 1024), dtype=x.dtype, buffer=nl.shared_hbm)
    i_p, i_f = nl.mgrid[0:128, 0:1024]
    t = nl.load(x[i_p, 2 * i_f])
    nl.store(out, value=t)
    return out


@nki.jit
def blocks(x):
    out = nl.ndarray((128, 16, 64), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 16, 64), dtype=x.dtype, buffer=nl.sbuf)
    i_p, i_b, i_e = nl.mgrid[0:128, 0:16, 0:64]
    t[...] = nl.load(x[i_p, 128 * i_b + i_e])
    nl.store(out, value=t)
    return out


@nki.jit
def contiguous(x):
    out = nl.ndarray((128, 1024), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x[:, 0:1024])
    nl.store(out, value=t)
    return out

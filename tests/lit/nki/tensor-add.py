# Tensor addition after the schedule of AWS's tensor-addition tutorial (128 x 512 tiles, here over a
# 2-D loop nest; spmd-tensor-add.py launches them on an SPMD grid), checked against numpy and timed
# on trn1 and trn2.
# REQUIRES: numpy
# RUN: tessel run %s --arg a=bf16[256,1024] --arg b=bf16[256,1024] --check --reference %S/Inputs/refs.py:tensor_add | FileCheck %s --check-prefix=PASS
# RUN: tessel run %s --arg a=bf16[2048,4096] --arg b=bf16[2048,4096] --target trn1 --timing-only | FileCheck %s --check-prefix=TIME
# RUN: tessel run %s --arg a=bf16[2048,4096] --arg b=bf16[2048,4096] --target trn2 --timing-only | FileCheck %s --check-prefix=TIME
# PASS: check: PASSED
# TIME: latency
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def tensor_add(a, b):
    c = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    rows, cols = a.shape
    ip, jf = nl.mgrid[0:128, 0:512]
    for i in nl.affine_range(rows // 128):
        for j in nl.affine_range(cols // 512):
            x = nl.load(a[i * 128 + ip, j * 512 + jf])
            y = nl.load(b[i * 128 + ip, j * 512 + jf])
            nl.store(c[i * 128 + ip, j * 512 + jf], value=x + y)
    return c

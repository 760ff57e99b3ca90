# What tessel's tensor_tensor_scan does not take, each an error at the kernel's line: swapped
# operands (reverse0/reverse1), an initial value that is not one per partition, tiles of more than
# two dimensions, both inputs in PSUM.
# RUN: not tessel compile %s -k reverse --arg x=f32[128,64] 2>&1 | FileCheck %s --check-prefix=REVERSE
# RUN: not tessel compile %s -k wide_initial --arg x=f32[128,64] 2>&1 | FileCheck %s --check-prefix=INITIAL
# RUN: not tessel compile %s -k three_d --arg x=f32[128,4,64] 2>&1 | FileCheck %s --check-prefix=THREED
# RUN: not tessel compile %s -k both_psum --arg x=f32[128,128] 2>&1 | FileCheck %s --check-prefix=PSUM
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def reverse(x):
    y = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    # REVERSE: err-scan.py:[[@LINE+1]]: error: nisa.tensor_tensor_scan: reverse0=True (the operands of an op swapped) is not supported by tessel's tensor_tensor_scan
    r = nisa.tensor_tensor_scan(t, t, initial=0.0, op0=np.multiply, op1=np.add, reverse0=True)
    nl.store(y, value=r)
    return y


@nki.jit
def wide_initial(x):
    y = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    # INITIAL: err-scan.py:[[@LINE+1]]: error: nisa.tensor_tensor_scan: the initial value 't' is a [128, 2] tile; a per-partition operand is [128, 1]
    r = nisa.tensor_tensor_scan(t, t, initial=t[0:128, 0:2], op0=np.multiply, op1=np.add)
    nl.store(y, value=r)
    return y


@nki.jit
def three_d(x):
    y = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    # THREED: err-scan.py:[[@LINE+1]]: error: {{.*}} is a 3-D tile; this operation takes 2-D tiles
    r = nisa.tensor_tensor_scan(t, t, initial=0.0, op0=np.multiply, op1=np.add)
    nl.store(y, value=r)
    return y


@nki.jit
def both_psum(x):
    y = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    p = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.psum)
    p[...] = nisa.nc_transpose(t)
    # PSUM: err-scan.py:[[@LINE+1]]: error: nisa.tensor_tensor_scan: data0 and data1 are both in PSUM; at most one may be
    r = nisa.tensor_tensor_scan(p, p, initial=0.0, op0=np.multiply, op1=np.add)
    nl.store(y, value=r)
    return y

# --check --reference holds a kernel to its math: a matmul that skips its last K tile passes the
# check without a reference (which re-executes the kernel's own trace, so only the lowering is
# checked, as the report says) and fails it against numpy's lhsT.T @ rhs.
# REQUIRES: numpy
# RUN: tessel run %s -k matmul --arg lhsT=bf16[512,128] --arg rhs=bf16[512,256] --check --reference %S/Inputs/refs.py:matmul | FileCheck %s --check-prefix=PASS
# RUN: tessel run %s -k matmul_skips_k --arg lhsT=bf16[512,128] --arg rhs=bf16[512,256] --check | FileCheck %s --check-prefix=LOWERING
# RUN: not tessel run %s -k matmul_skips_k --arg lhsT=bf16[512,128] --arg rhs=bf16[512,256] --check --reference %S/Inputs/refs.py:matmul > %t.out 2> %t.err
# RUN: FileCheck %s --check-prefix=FAIL < %t.out
# RUN: FileCheck %s --check-prefix=FAILERR < %t.err
# PASS: check: PASSED
# PASS: max_rel_err: {{[0-9.e-]+}}
# LOWERING: check: PASSED
# LOWERING: reference: "the kernel's own trace executed in Python: checks tessel's lowering and simulator, not the kernel's math
# FAIL: check: FAILED
# FAIL: reference: "{{.*}}refs.py:matmul (numpy, the kernel's math)"
# FAILERR: error: check failed: the outputs differ from the reference
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


def _matmul(lhsT, rhs, k_tiles):
    m, n = lhsT.shape[1], rhs.shape[1]
    out = nl.ndarray((m, n), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.zeros((m, n), nl.float32, buffer=nl.psum)
    for k in nl.affine_range(k_tiles):
        a = nl.load(lhsT[k * 128:(k + 1) * 128, 0:m])
        b = nl.load(rhs[k * 128:(k + 1) * 128, 0:n])
        acc += nisa.nc_matmul(a, b)
    nl.store(out, value=nl.copy(acc, dtype=nl.float32))
    return out


@nki.jit
def matmul(lhsT, rhs):
    return _matmul(lhsT, rhs, lhsT.shape[0] // 128)


@nki.jit
def matmul_skips_k(lhsT, rhs):
    return _matmul(lhsT, rhs, lhsT.shape[0] // 128 - 1)

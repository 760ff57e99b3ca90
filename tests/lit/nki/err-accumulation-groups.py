# Two accumulation loops into one PSUM tile would need an always-accumulate matmul, which the tile IR lacks.
# RUN: not tessel compile %s --arg a=bf16[256,128] --arg b=bf16[256,512] 2>&1 | FileCheck %s
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def k(a, b):
    y = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    p = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
    for i in nl.affine_range(2):
        p += nl.matmul(nl.load(a[i * 128:(i + 1) * 128, :]), nl.load(b[i * 128:(i + 1) * 128, :]), transpose_x=True)
    for j in nl.affine_range(2):
        # CHECK: err-accumulation-groups.py:[[@LINE+1]]: error: this matmul accumulates onto an earlier matmul's PSUM result outside a common loop
        p += nl.matmul(nl.load(a[j * 128:(j + 1) * 128, :]), nl.load(b[j * 128:(j + 1) * 128, :]), transpose_x=True)
    nl.store(y, value=nl.copy(p))
    return y

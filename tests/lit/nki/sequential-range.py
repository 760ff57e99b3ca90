# nl.sequential_range and Python's range are sequential IR loops (no `parallel`); nl.static_range unrolls.
# RUN: tessel compile %s --arg x=bf16[384,512] | FileCheck %s
# RUN: tessel run %s --arg x=bf16[384,512] --check | FileCheck %s --check-prefix=SIM
# CHECK: for %i = 0 to 3 step 1 {
# CHECK: for %j = 0 to 2 step 1 {
# CHECK: dma %t[0 +: 128, 0 +: 256] <- %x[%i*128 +: 128, %j*256 +: 256]
# CHECK: dma %y[%i*128 +: 128, %j*256 +: 256] <- %t[0 +: 128, 0 +: 256]
# CHECK: dma %y[0 +: 128, 0 +: 256] <- %u[0 +: 128, 0 +: 256]
# CHECK: dma %u1[0 +: 128, 0 +: 256] <- %x[0 +: 128, 256 +: 256]
# CHECK-NEXT: dma %y[0 +: 128, 256 +: 256] <- %u1[0 +: 128, 0 +: 256]
# SIM: check: PASSED
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def seq(x):
    y = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.sequential_range(x.shape[0] // 128):
        for j in range(2):
            t = nl.load(x[i * 128:(i + 1) * 128, j * 256:(j + 1) * 256])
            nl.store(y[i * 128:(i + 1) * 128, j * 256:(j + 1) * 256], value=t)
    for j in nl.static_range(2):
        u = nl.load(x[0:128, j * 256:(j + 1) * 256])
        nl.store(y[0:128, j * 256:(j + 1) * 256], value=u)
    return y

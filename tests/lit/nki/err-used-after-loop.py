# A tile created in a loop body exists once per iteration: using it after the loop is an error.
# RUN: not tessel compile %s --arg x=bf16[256,128] 2>&1 | FileCheck %s
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def k(x):
    y = nl.ndarray((128, 128), dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(2):
        t = nl.load(x[i * 128:(i + 1) * 128, :])
    # CHECK: err-used-after-loop.py:[[@LINE+1]]: error: 't' was allocated inside a loop ({{.*}}err-used-after-loop.py:11) and is used after it
    nl.store(y, value=t)
    return y

# A traced loop is recorded once as an IR loop: leaving it early (break) is an error at the loop.
# RUN: not tessel compile %s --arg x=bf16[256,128] 2>&1 | FileCheck %s
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def k(x):
    y = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    # CHECK: err-break.py:[[@LINE+1]]: error: a traced loop was left early (break, return or an exception)
    for i in nl.affine_range(2):
        t = nl.load(x[i * 128:(i + 1) * 128, :])
        nl.store(y[i * 128:(i + 1) * 128, :], value=t)
        break
    return y

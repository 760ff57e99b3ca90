# A mask that is false somewhere (here rows 64..127) over an nl.arange index that indexes none of the
# call's operands is an error, not silently dropped: tessel cannot tell which elements it masks.
# RUN: not tessel compile %s --arg x=bf16[128,128] 2>&1 | FileCheck %s
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def k(x):
    y = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    i = nl.arange(128)[:, None]
    # CHECK: err-unsupported-argument.py:[[@LINE+1]]: error: nl.load: mask= compares an nl.arange index that indexes none of the call's operands
    t = nl.load(x, mask=(i < 64))
    nl.store(y, value=t)
    return y

# nisa.activation's bias tile is one value per partition ([P, 1]); a [P, F] bias is an error.
# RUN: not tessel compile %s --arg x=bf16[128,128] --arg b=bf16[128,128] 2>&1 | FileCheck %s
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def k(x, b):
    y = nl.ndarray((128, 128), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    bias = nl.load(b)
    # CHECK: err-activation-bias.py:[[@LINE+1]]: error: nisa.activation: the bias 'bias' is a [128, 128] tile; a per-partition operand is [128, 1]
    u = nisa.activation(op=nl.exp, data=t, bias=bias)
    nl.store(y, value=u)
    return y

# An NKI kernel whose buffers exceed SBUF: the error is at the largest
# buffer's line and names it, and gives no --block advice (it said "use a
# smaller row strip (--block m=...)", an option .py kernels refuse, with no
# location).
# RUN: not tessel run %s --arg x=f32[128,128] --timing-only 2>&1 | FileCheck %s
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def k(x):
    y = nl.ndarray((128, 128), dtype=x.dtype, buffer=nl.shared_hbm)
    # CHECK: err-sbuf-overflow.py:[[@LINE+1]]: error: kernel 'k' needs {{[0-9]+}} bytes of SBUF per partition, but target 'trn1' has 196608; the largest buffer is %b (400000000 bytes per partition); use smaller or fewer buffers
    b = nl.ndarray((128, 100000000), dtype=nl.float32, buffer=nl.sbuf)
    nisa.memset(b, 0.0)
    nl.store(y, value=nl.load(x))
    return y

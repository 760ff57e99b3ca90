# -k selects one of several nki.jit kernels; without it the choice is an error listing them, and an
# unknown name is an error too. Shapes must come from --arg (or --input).
# RUN: tessel compile %s -k second --arg x=bf16[128,64] | FileCheck %s
# RUN: not tessel compile %s --arg x=bf16[128,64] 2>&1 | FileCheck %s --check-prefix=TWO
# RUN: not tessel compile %s -k third --arg x=bf16[128,64] 2>&1 | FileCheck %s --check-prefix=UNKNOWN
# RUN: not tessel compile %s -k first 2>&1 | FileCheck %s --check-prefix=NOARG
# RUN: not tessel compile %s -k first --arg x=bf16[128,64] --arg z=f32[1,1] 2>&1 | FileCheck %s --check-prefix=NOPARAM
# RUN: not tessel compile %s -k first --arg x=int8[128,64] 2>&1 | FileCheck %s --check-prefix=BADARG
# CHECK: kernel @second(%x: hbm<bf16,
# TWO: error: {{.*}}kernel-selection.py has 2 nki.jit kernels; choose one with -k (first, second)
# UNKNOWN: error: no nki.jit kernel or function 'third' in {{.*}}kernel-selection.py (kernels: first, second)
# NOARG: error: kernel argument 'x' needs a value: --arg x=bf16[D0,D1] (a tensor; or --input x=FILE.npy) or --arg x=VALUE
# NOPARAM: error: kernel first has no parameter 'z' (parameters: x)
# BADARG: error: malformed --arg 'x=int8[128,64]': a tensor is NAME=DTYPE[D0,D1,...] with DTYPE bf16 or f32
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def first(x):
    y = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(y, value=nl.load(x))
    return y


@nki.jit
def second(x):
    y = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(y, value=nl.load(x))
    return y

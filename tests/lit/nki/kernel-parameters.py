# Kernel parameters that are not tensors: --arg NAME=VALUE gives an int, float, tuple, dtype or None;
# parameters not given keep their defaults; the numpy reference gets the same values.
# REQUIRES: numpy
# RUN: tessel run %s --arg a=f32[128,256] --arg b=f32[128,256] --arg alpha=0.5 --arg "shape=(128, 256)" --arg out_dtype=nl.float32 --check --reference %S/Inputs/refs.py:scaled_add | FileCheck %s --check-prefix=PASS
# RUN: tessel compile %s --arg a=f32[128,256] --arg b=f32[128,256] --arg alpha=2 --arg "shape=(128,256)" --arg out_dtype=f32 --arg bias=1.5 | FileCheck %s
# RUN: tessel compile %s --arg a=f32[128,256] --arg b=f32[128,256] --arg "shape=(128,256)" --arg out_dtype=bf16 | FileCheck %s --check-prefix=DEFAULTS
# RUN: not tessel compile %s --arg a=f32[128,256] --arg "shape=(128,256)" 2>&1 | FileCheck %s --check-prefix=MISSING
# RUN: not tessel compile %s --arg a=f32[128,256] --arg b=f32[128,256] --arg "shape=(128,256)" --arg out_dtype=f32 --arg alpha=fast 2>&1 | FileCheck %s --check-prefix=BADVALUE
# RUN: not tessel compile %s --arg a=f32[128,256] --arg b=f32[128,256] --arg "shape=(128,256)" --arg out_dtype=int8 2>&1 | FileCheck %s --check-prefix=BADDTYPE
# PASS: check: PASSED
# CHECK: kernel @scaled_add(%a: hbm<f32, {{.*}}>, %b: hbm<f32, {{.*}}>) -> (%out: hbm<f32, [{{.*}}:128, {{.*}}:256]>)
# CHECK: tensor_scalar mul %{{.*}} <- %{{.*}}, 2.0
# CHECK: tensor_scalar add %{{.*}} <- %{{.*}}, 1.5
# DEFAULTS: -> (%out: hbm<bf16,
# DEFAULTS: tensor_scalar mul %{{.*}} <- %{{.*}}, 1.0
# DEFAULTS-NOT: tensor_scalar add
# MISSING: error: kernel argument 'b' needs a value: --arg b=bf16[D0,D1] (a tensor; or --input b=FILE.npy) or --arg b=VALUE
# BADVALUE: error: --arg 'alpha=fast': 'fast' is neither a Python literal
# BADDTYPE: kernel-parameters.py:[[@LINE+7]]: error: dtype int8 is not supported
import nki
import nki.language as nl


@nki.jit
def scaled_add(a, b, alpha=1.0, shape=None, out_dtype=nl.bfloat16, bias=None):
    out = nl.ndarray(shape, dtype=out_dtype, buffer=nl.shared_hbm)
    y = nl.add(nl.multiply(nl.load(a), alpha), nl.load(b), dtype=out_dtype)
    if bias is not None:
        y = y + bias
    nl.store(out, value=y)
    return out

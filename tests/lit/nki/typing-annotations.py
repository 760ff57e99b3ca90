# nki.typing annotations (the current API's nt.tensor[128, 512], nt.tensor[[P, F], dtype],
# nt.tensor[nt.mutable]; local variables annotated too) change nothing in the kernel; an argument
# annotated with a shape of integers must have that shape (an error naming both otherwise).
# REQUIRES: numpy
# RUN: tessel compile %s --arg x=f32[128,512] --arg y=f32[128,512] | FileCheck %s
# RUN: tessel run %s --arg x=f32[128,512] --arg y=f32[128,512] --check --reference %S/Inputs/refs.py:tensor_add_unused | FileCheck %s --check-prefix=PASS
# RUN: not tessel compile %s --arg x=f32[128,256] --arg y=f32[128,512] 2>&1 | FileCheck %s --check-prefix=SHAPE
# CHECK: dma %a[0 +: 128, 0 +: 512] <- %x[0 +: 128, 0 +: 512]
# PASS: check: PASSED
# SHAPE: error: kernel argument 'x' is annotated nt.tensor[128, 512], but --arg gives it the shape [128, 256]
import nki
import nki.language as nl
import nki.typing as nt
from nki.typing import tensor


@nki.jit
def add(x: nt.tensor[128, 512], y: tensor[[128, 512], nl.float32], scratch: nt.tensor[nt.mutable] = None):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    a: nt.tensor[128, 512] = nl.load(x)
    nl.store(out, value=a + nl.load(y))
    return out

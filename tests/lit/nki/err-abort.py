# A kernel whose code kills the tracer (a signal, here abort()) is reported as
# such, at once; it is not the tracing time limit (which the same status
# from the process API also reports).
# RUN: not tessel run %s --arg x=f32[128,128] --timing-only 2>&1 | FileCheck %s
# CHECK: error: the NKI tracer stopped while tracing {{.*}}err-abort.py: {{.+}}
# CHECK-NOT: took over
import os

import neuronxcc.nki as nki


@nki.jit
def k(x):
    os.abort()

# A kernel whose own code never returns is stopped after the tracing time
# limit ($TESSEL_NKI_TRACE_TIMEOUT, 600 s by default) with an error; tessel
# waited forever before.
# RUN: env TESSEL_NKI_TRACE_TIMEOUT=2 not tessel run %s --arg x=f32[128,128] --timing-only 2>&1 | FileCheck %s
# CHECK: error: tracing {{.*}}err-endless-loop.py took over 2 s and was stopped: does the kernel's code loop without end?
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def k(x):
    while True:
        pass

# A long nl.static_range unroll records its body once per iteration: once tracing has run
# for $TESSEL_NKI_PROGRESS_SECONDS (5 s by default; 0 here, so every 1024 operations), a line
# on stderr says how many operations are recorded and when the tracer is stopped. Tracing
# 10^7 iterations was silent for minutes before.
# RUN: env TESSEL_NKI_PROGRESS_SECONDS=0 TESSEL_NKI_TRACE_TIMEOUT=300 tessel compile %s --arg x=bf16[128,128] -o /dev/null 2>&1 | FileCheck %s
# CHECK: tessel: tracing {{.*}}long-unroll-progress.py: 1024 operations recorded in {{[0-9]+}} s (an unrolled loop records its body once per iteration; nl.affine_range or nl.sequential_range keeps it one loop); the tracer is stopped at 300 s ($TESSEL_NKI_TRACE_TIMEOUT)
# CHECK: tessel: tracing {{.*}}: 2048 operations recorded
# By default a short trace prints nothing.
# RUN: tessel compile %s --arg x=bf16[128,128] -o /dev/null 2>&1 | count 0
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def unrolled(x):
    y = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    for i in nl.static_range(1500):
        t = nl.add(t, 1.0)
    nl.store(y, value=t)
    return y

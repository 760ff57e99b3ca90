# posix._exit ends the tracer before it can report anything: the driver says so
# itself, for a non-zero status and for status 0 with no kernel printed (both
# exited 1 silently before).
# RUN: not tessel compile %s -k exit3 --arg x=bf16[128,128] 2>&1 | FileCheck %s --check-prefix=STATUS
# STATUS: error: the NKI tracer exited with status 3 on {{.*}}err-posix-exit.py without reporting an error
# RUN: not tessel compile %s -k exit0 --arg x=bf16[128,128] 2>&1 | FileCheck %s --check-prefix=ZERO
# ZERO: error: the NKI tracer printed no kernel for {{.*}}err-posix-exit.py
import posix

import neuronxcc.nki as nki


@nki.jit
def exit3(x):
    posix._exit(3)


@nki.jit
def exit0(x):
    posix._exit(0)

# sys.exit (or exit(), raise SystemExit) and os._exit in the kernel's code, in its body or at module
# level, are located errors with exit status 1: the tracer neither exits silently nor prints only the
# exit message.
# RUN: not tessel compile %s -k exits --arg x=bf16[128,128] 2>&1 | FileCheck %s --check-prefix=EXIT --implicit-check-not=Traceback
# RUN: not tessel compile %s -k exits_with_message --arg x=bf16[128,128] 2>&1 | FileCheck %s --check-prefix=MESSAGE --implicit-check-not=Traceback
# RUN: not tessel compile %s -k os_exit --arg x=bf16[128,128] 2>&1 | FileCheck %s --check-prefix=OSEXIT --implicit-check-not=Traceback
# RUN: env NKI_TEST_EXIT_IN_MODULE=1 not tessel compile %s -k exits --arg x=bf16[128,128] 2>&1 | FileCheck %s --check-prefix=MODULE --implicit-check-not=Traceback
import os
import sys

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

if os.environ.get("NKI_TEST_EXIT_IN_MODULE"):
    # MODULE: err-exit.py:[[@LINE+1]]: error: the kernel called sys.exit(0); a kernel cannot exit while tessel traces it
    sys.exit(0)


@nki.jit
def exits(x):
    y = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    # EXIT: err-exit.py:[[@LINE+1]]: error: the kernel called sys.exit(0); a kernel cannot exit while tessel traces it
    sys.exit(0)
    return y


@nki.jit
def exits_with_message(x):
    # MESSAGE: err-exit.py:[[@LINE+1]]: error: the kernel called sys.exit('bye')
    sys.exit("bye")


@nki.jit
def os_exit(x):
    # OSEXIT: err-exit.py:[[@LINE+1]]: error: the kernel called os._exit(3)
    os._exit(3)

# An exception that is not an Exception -- KeyboardInterrupt, GeneratorExit, a class derived directly
# from BaseException -- raised by the kernel's code (body or module) is reported at its line like any
# other error of the kernel's Python code, without a traceback of the tracer's own files.
# RUN: not tessel compile %s -k interrupted --arg x=bf16[128,128] 2>&1 | FileCheck %s --check-prefix=KI --implicit-check-not=Traceback
# RUN: not tessel compile %s -k generator_exit --arg x=bf16[128,128] 2>&1 | FileCheck %s --check-prefix=GE --implicit-check-not=Traceback
# RUN: not tessel compile %s -k custom --arg x=bf16[128,128] 2>&1 | FileCheck %s --check-prefix=CUSTOM --implicit-check-not=Traceback
# RUN: env NKI_TEST_RAISE_IN_MODULE=1 not tessel compile %s -k custom --arg x=bf16[128,128] 2>&1 | FileCheck %s --check-prefix=MODULE --implicit-check-not=Traceback
import os

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


class Abort(BaseException):
    pass


if os.environ.get("NKI_TEST_RAISE_IN_MODULE"):
    # MODULE: err-base-exception.py:[[@LINE+1]]: error: KeyboardInterrupt: at import{{$}}
    raise KeyboardInterrupt("at import")


@nki.jit
def interrupted(x):
    y = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    # KI: err-base-exception.py:[[@LINE+1]]: error: KeyboardInterrupt{{$}}
    raise KeyboardInterrupt


@nki.jit
def generator_exit(x):
    # GE: err-base-exception.py:[[@LINE+1]]: error: GeneratorExit: closed{{$}}
    raise GeneratorExit("closed")


@nki.jit
def custom(x):
    # CUSTOM: err-base-exception.py:[[@LINE+1]]: error: Abort: custom abort{{$}}
    raise Abort("custom abort")

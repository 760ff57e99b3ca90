# What the kernel's code writes to stdout -- print(), print(file=sys.stdout), sys.stdout.write,
# os.write(1, ...), at module level or in the body -- goes to stderr: stdout of the tracer is the
# traced tile IR only, so neither a parse error nor text that looks like tile IR gets into the trace.
# RUN: tessel compile %s --arg x=bf16[128,128] 2> %t.err | FileCheck %s --implicit-check-not=from
# RUN: FileCheck %s --check-prefix=ERR < %t.err
import os
import sys

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

# ERR: print from the module
print("print from the module")
# ERR-NEXT: kernel @from_module(%a: hbm<bf16, [P:128]>) -> (%a: hbm<bf16, [P:128]>) {
print("kernel @from_module(%a: hbm<bf16, [P:128]>) -> (%a: hbm<bf16, [P:128]>) {\n}")


# CHECK: kernel @k(
@nki.jit
def k(x):
    y = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    # ERR: print from the kernel
    print("print from the kernel")
    # ERR-NEXT: print to sys.stdout from the kernel
    print("print to sys.stdout from the kernel", file=sys.stdout)
    # ERR-NEXT: sys.stdout.write from the kernel
    sys.stdout.write("sys.stdout.write from the kernel\n")
    # ERR-NEXT: os.write to fd 1 from the kernel
    os.write(1, b"os.write to fd 1 from the kernel\n")
    nl.store(y, value=nl.load(x))
    return y

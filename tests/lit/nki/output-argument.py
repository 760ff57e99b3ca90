# A kernel that takes its result as a parameter and only writes it: that argument is an output.
# RUN: tessel compile %s --arg x=bf16[128,64] --arg out=bf16[128,64] | FileCheck %s
# CHECK: kernel @copy_kernel(%x: hbm<bf16, [{{.*}}]>) -> (%out: hbm<bf16, [{{.*}}]>) {
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def copy_kernel(x, out):
    nl.store(out, value=nl.load(x))

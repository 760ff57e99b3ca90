# nki.compiler hints change nothing (tessel runs the kernel as written: no middle-end transformations,
# no reordering, its own allocator): enable_stack_allocator, skip_middle_end_transformations, no_reorder
# and sbuf/psum.auto_alloc() (the plain nl.sbuf / nl.psum). Direct allocation other than
# ncc.sbuf.mod_alloc (mod-alloc.py) is an error at its line.
# REQUIRES: numpy
# RUN: tessel compile %s -k hinted --arg x=f32[128,128] | FileCheck %s
# RUN: tessel run %s -k hinted --arg x=f32[128,128] --check --reference %S/Inputs/refs.py:transpose | FileCheck %s --check-prefix=PASS
# RUN: not tessel compile %s -k placed --arg x=f32[128,128] 2>&1 | FileCheck %s --check-prefix=DIRECT
# CHECK: %t = alloc sbuf<f32, [{{.*}}:128, {{.*}}:128]>
# CHECK: %acc = alloc psum<f32, [{{.*}}:128, {{.*}}:128]>
# CHECK: dma %t[0 +: 128, 0 +: 128] <- %x[0 +: 128, 0 +: 128]
# CHECK: transpose %acc[0 +: 128, 0 +: 128] <- %t[0 +: 128, 0 +: 128]
# PASS: check: PASSED
import neuronxcc.nki as nki
import neuronxcc.nki.compiler as ncc
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.compiler.enable_stack_allocator()
@ncc.skip_middle_end_transformations
@nki.jit
def hinted(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=ncc.sbuf.auto_alloc())
    acc = nl.ndarray(x.shape, dtype=nl.float32, buffer=ncc.psum.auto_alloc())
    with ncc.no_reorder():
        t[...] = nl.load(x)
        acc[...] = nisa.nc_transpose(t)
    nl.store(out, value=nl.copy(acc, dtype=x.dtype))
    return out


@nki.jit
def placed(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    # DIRECT: compiler-hints.py:[[@LINE+1]]: error: ncc.psum.mod_alloc (direct allocation: the kernel places its buffers) is not supported; tessel allocates buffers itself (use nl.psum)
    t = nl.ndarray(x.shape, dtype=nl.float32, buffer=ncc.psum.mod_alloc(base_bank=0, num_free_tiles=(2,)))
    nl.store(out, value=t)
    return out

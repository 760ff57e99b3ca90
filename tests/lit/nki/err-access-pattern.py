# Access patterns outside what tessel's tile IR expresses are errors at their line, naming the
# tensor: a pattern as an operand of the tensor engine (2-D tiles only), one tile axis indexing two
# dimensions (a diagonal), an index running backwards, the partitions not the first axis,
# and an .ap() step that crosses dimensions. (Patterns themselves run: transpose2d.py, average-pool.py.)
# RUN: not tessel compile %s -k pattern_matmul --arg x=bf16[128,128] 2>&1 | FileCheck %s --check-prefix=MM
# RUN: not tessel compile %s -k diagonal --arg x=f32[128,4,4] 2>&1 | FileCheck %s --check-prefix=DIAG
# RUN: not tessel compile %s -k backwards --arg x=f32[128,4] 2>&1 | FileCheck %s --check-prefix=BACK
# RUN: not tessel compile %s -k partitions_second --arg x=f32[128,128] 2>&1 | FileCheck %s --check-prefix=PART
# RUN: not tessel compile %s -k ap_across --arg x=f32[128,4,6] 2>&1 | FileCheck %s --check-prefix=AP
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def pattern_matmul(x):
    out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x)
    ip, i1, i2 = nl.mgrid[0:128, 0:2, 0:64]
    # MM: err-access-pattern.py:[[@LINE+1]]: error: the moving operand of 't' is an access pattern (nl.mgrid / nl.arange indices combined, strided or over more than two axes); this operation takes a 2-D tile of two contiguous ranges
    p = nisa.nc_matmul(t[:, 0:128], t[ip, i2 * 2 + i1])
    nl.store(out, value=p)
    return out


@nki.jit
def diagonal(x):
    out = nl.ndarray((128, 4), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    ip, i1 = nl.mgrid[0:128, 0:4]
    # DIAG: err-access-pattern.py:[[@LINE+1]]: error: tile axis 1 indexes two dimensions of 't' (a diagonal)
    nl.store(out, value=nl.copy(t[ip, i1 * 1, i1 * 1]))
    return out


@nki.jit
def backwards(x):
    out = nl.ndarray((128, 4), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    ip, i1 = nl.mgrid[0:128, 0:4]
    # BACK: err-access-pattern.py:[[@LINE+1]]: error: index 1 of 't' runs backwards along a tile axis (coefficient -1); access patterns take positive steps
    nl.store(out, value=nl.copy(t[ip, 3 - i1]))
    return out


@nki.jit
def partitions_second(x):
    out = nl.ndarray((128, 128), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    i0, i1, i2 = nl.mgrid[0:2, 0:128, 0:64]
    # PART: err-access-pattern.py:[[@LINE+1]]: error: the access pattern of 't' must keep the partition dimension as the tile's first axis, one contiguous range
    nl.store(out, value=nl.copy(t[i1, i0 * 64 + i2]))
    return out


@nki.jit
def ap_across(x):
    out = nl.ndarray((128, 4), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 4, 6), dtype=x.dtype, buffer=nl.sbuf)
    t[...] = nl.load(x)
    # AP: err-access-pattern.py:[[@LINE+1]]: error: 't'.ap: [5, 4] steps across the tensor's dimensions [128, 4, 6]
    v = t.ap([[24, 128], [5, 4]])
    nl.store(out, value=nl.copy(v))
    return out

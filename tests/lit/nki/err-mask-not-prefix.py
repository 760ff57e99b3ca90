# NKI's masking runs a call on the elements where mask= holds. Tessel reads the masks that keep
# the leading indices of an nl.arange (a partial last tile: `m * 128 + i_p < rows`, tests/lit/nki/
# masked-partial-tile.py); a mask that keeps other elements (here rows 64..127) is an error at its
# call, not a silently different kernel.
# RUN: not tessel compile %s --arg x=bf16[128,128] 2>&1 | FileCheck %s
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def k(x):
    y = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(128)[None, :]
    # CHECK: err-mask-not-prefix.py:[[@LINE+1]]: error: nl.load: mask= keeps only leading elements of a tile (index < bound); this term keeps others
    t = nl.load(x[i_p, i_f], mask=(i_p >= 64))
    nl.store(y, value=t)
    return y

# NKI's masking (the legacy API's partial tiles): `mask=` runs a call on the elements where it
# holds. A mask keeping the leading indices of an nl.arange (`m * 128 + i_p < rows`) cuts every
# dimension that arange indexes -- in the call's operands and in the tile its result is assigned
# to -- to the tile IR's `min` extent, the same kernel `nl.ds(m * 128, min(128, rows - m * 128))`
# gives. 300 rows: two full row tiles and one of 44.
# RUN: tessel compile %s --arg a=bf16[300,512] --emit=tir | FileCheck %s
# RUN: tessel run %s --arg a=bf16[300,512] --check | FileCheck %s --check-prefix=SIM
# CHECK: dma %t[0 +: min(128, %m*-128 + 300), 0 +: 512] <- %a[%m*128 +: min(128, %m*-128 + 300), 0 +: 512]
# CHECK: activation exp %e[0 +: min(128, %m*-128 + 300), 0 +: 512] <- %t[0 +: min(128, %m*-128 + 300), 0 +: 512]
# CHECK: dma %out[%m*128 +: min(128, %m*-128 + 300), 0 +: 512] <- %e[0 +: min(128, %m*-128 + 300), 0 +: 512]
# SIM: max_abs_err: 0
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def rows_exp(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(512)[None, :]
    for m in nl.affine_range((a.shape[0] + 127) // 128):
        live = m * 128 + i_p < a.shape[0]
        t = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
        t[i_p, i_f] = nl.load(a[m * 128 + i_p, i_f], mask=live)
        e = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
        e[i_p, i_f] = nisa.activation(op=nl.exp, data=t[i_p, i_f], mask=live)
        nl.store(out[m * 128 + i_p, i_f], value=e[i_p, i_f], mask=live)
    return out

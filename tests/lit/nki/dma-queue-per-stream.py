# The DMA transfers of an NKI kernel run on one queue per stream, the
# transfers between one HBM tensor and the on-chip buffers in one direction
# (docs/nki.md, "DMA queues"), whatever statements issue them; tessel's own
# programs rotate a statement over four queues. Here the loads of a (two
# statements, one per half of a row), the loads of b and the stores of out
# are three streams on queues 0, 1, 2, none rotating, and the JSON report
# lists each queue with all of its stream's transfers.
# RUN: tessel compile %s --arg a=bf16[1024,512] --arg b=bf16[1024,512] --emit=tasm | FileCheck %s --check-prefix=TASM
# RUN: tessel run %s --arg a=bf16[1024,512] --arg b=bf16[1024,512] --timing-only --report=json | FileCheck %s --check-prefix=JSON
# TASM-NOT: queues=
# TASM: dma {{.*}} <- %a[{{.*}}, 0:256] queue=0 loc
# TASM: dma {{.*}} <- %a[{{.*}}, 256:256] queue=0 loc
# TASM: dma {{.*}} <- %b{{.*}} queue=1 loc
# TASM: dma %out{{.*}} queue=2 loc
# JSON: "dma_queues": [
# JSON: "queue": 0,
# JSON-NEXT: "transfers": 16
# JSON: "queue": 1,
# JSON-NEXT: "transfers": 8
# JSON: "queue": 2,
# JSON-NEXT: "transfers": 8
# JSON-NOT: "queue":
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def add_rows(a, b):
    out = nl.ndarray((1024, 512), dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(8):
        x = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
        x[:, 0:256] = nl.load(a[i * 128:(i + 1) * 128, 0:256])
        x[:, 256:512] = nl.load(a[i * 128:(i + 1) * 128, 256:512])
        y = nl.load(b[i * 128:(i + 1) * 128, :])
        nl.store(out[i * 128:(i + 1) * 128, :], value=nl.add(x, y))
    return out

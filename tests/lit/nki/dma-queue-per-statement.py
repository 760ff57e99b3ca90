# Each DMA statement of an NKI kernel runs its transfers on one queue of its
# own, in order (docs/nki.md), where tessel's own programs rotate a statement
# over four queues: the loads in the loop and the store take queues 0, 1, 2,
# none rotating, and the JSON report lists one queue per statement with all
# of its transfers.
# RUN: tessel compile %s --arg a=bf16[1024,512] --arg b=bf16[1024,512] --emit=tasm | FileCheck %s --check-prefix=TASM
# RUN: tessel run %s --arg a=bf16[1024,512] --arg b=bf16[1024,512] --timing-only --report=json | FileCheck %s --check-prefix=JSON
# TASM-NOT: queues=
# TASM: dma {{.*}} <- %a{{.*}} queue=0 loc
# TASM: dma {{.*}} <- %b{{.*}} queue=1 loc
# TASM: dma %out{{.*}} queue=2 loc
# JSON: "dma_queues": [
# JSON: "queue": 0,
# JSON-NEXT: "transfers": 8
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
        x = nl.load(a[i * 128:(i + 1) * 128, :])
        y = nl.load(b[i * 128:(i + 1) * 128, :])
        nl.store(out[i * 128:(i + 1) * 128, :], value=nl.add(x, y))
    return out

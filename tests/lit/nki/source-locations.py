# An NKI kernel's instructions are located by the line of the API call they
# were traced from: the hotspots, the per-source-line summary (one call may
# become several instructions: nl.matmul with x untransposed is a transpose,
# a copy and a matmul), the trace and the .tasm say kernel.py:LINE
# (issue 15, item 14).
# RUN: tessel run %s --arg x=bf16[128,128] --arg y=bf16[128,512] --timing-only --report=json | FileCheck %s --check-prefix=JSON
# RUN: tessel run %s --arg x=bf16[128,128] --arg y=bf16[128,512] --timing-only | FileCheck %s --check-prefix=TEXT
# RUN: tessel run %s --arg x=bf16[128,128] --arg y=bf16[128,512] --timing-only --trace=%t.json > /dev/null
# RUN: FileCheck %s --check-prefix=TRACE < %t.json
# RUN: tessel compile %s --arg x=bf16[128,128] --arg y=bf16[128,512] --emit=tasm | FileCheck %s --check-prefix=TASM
# JSON: "hotspots": [
# TEXT: source line (its instructions)
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def mmx(x, y):
    out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
    # JSON-DAG: "source": "{{[^"]*}}source-locations.py:[[#@LINE+2]]"
    # TEXT-DAG: 32.00 KiB 1 {{.*}}source-locations.py:[[#@LINE+1]] (dma)
    xt = nl.load(x)
    yt = nl.load(y)
    # TASM: transpose {{.*}} loc("{{[^"]*}}source-locations.py":[[#@LINE+5]])
    # TASM: copy {{.*}} loc("{{[^"]*}}source-locations.py":[[#@LINE+4]])
    # TASM: matmul {{.*}} loc("{{[^"]*}}source-locations.py":[[#@LINE+3]])
    # TEXT-DAG: 0 B 3 {{.*}}source-locations.py:[[#@LINE+2]] (transpose, copy, matmul)
    # TRACE: {"name":"matmul",{{[^{]*}}"args":{"line":0,"source":"{{[^"]*}}source-locations.py:[[#@LINE+1]]","value":"prod","tile":
    prod = nl.matmul(xt, yt)
    # JSON-DAG: "source": "{{[^"]*}}source-locations.py:[[#@LINE+1]]"
    nl.store(out, value=nl.copy(prod, dtype=x.dtype))
    return out

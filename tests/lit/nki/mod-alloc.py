# Direct allocation with ncc.sbuf.mod_alloc (docs/nki.md, "Buffers"): a tensor whose block
# dimension is indexed by the iteration count of the loops around it (t[i * 4 + j]) and placed
# by num_free_tiles=(N,) is the tile IR's buffer allocated in the innermost of those loops with
# `bufs N`, at base_addr; a tensor without a block dimension stays at its address (bufs 1).
# The count decides the timing: with 1 tile the next load waits for the store of the last.
# REQUIRES: numpy
# RUN: tessel compile %s -k rotate4 --arg x=bf16[1024,512] --target=trn1 | FileCheck %s
# RUN: tessel run %s -k rotate4 --arg x=bf16[1024,512] --target=trn1 --check --reference %S/Inputs/refs.py:doubled | FileCheck %s --check-prefix=PASS
# RUN: tessel run %s -k rotate1 --arg x=bf16[1024,512] --target=trn1 --timing-only --report=json > %t.one.json
# RUN: tessel run %s -k rotate4 --arg x=bf16[1024,512] --target=trn1 --timing-only --report=json > %t.four.json
# RUN: python3 -c "import json, sys; a, b = (json.load(open(p))['latency_us'] for p in sys.argv[1:]); print('faster' if b < 0.8 * a else 'not faster', a, b)" %t.one.json %t.four.json | FileCheck %s --check-prefix=TIME
# CHECK: for %i = 0 to 2 step 1
# CHECK-NEXT: for %j = 0 to 4 step 1
# CHECK-NEXT: %res = alloc sbuf<bf16, [{{.*}}:128, {{.*}}:512]> bufs 4 addr 4096
# CHECK-NEXT: %tiles = alloc sbuf<bf16, [{{.*}}:128, {{.*}}:512]> bufs 4 addr 0
# CHECK: dma %tiles[0 +: 128, 0 +: 512] <- %x[%i*512 + %j*128 +: 128, 0 +: 512]
# CHECK: tensor_scalar mul %res[0 +: 128, 0 +: 512] <- %tiles[0 +: 128, 0 +: 512], 2.0
# PASS: check: PASSED
# TIME: {{^}}faster
import neuronxcc.nki as nki
import neuronxcc.nki.compiler as ncc
import neuronxcc.nki.language as nl


def doubled_rows(x, n):
    out = nl.ndarray((1024, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    tiles = nl.ndarray((8, nl.par_dim(128), 512), dtype=nl.bfloat16,
                       buffer=ncc.sbuf.mod_alloc(base_addr=0, num_free_tiles=(n,)))
    res = nl.ndarray((8, nl.par_dim(128), 512), dtype=nl.bfloat16,
                     buffer=ncc.sbuf.mod_alloc(base_addr=4096, num_free_tiles=(n,)))
    for i in nl.affine_range(2):
        for j in nl.affine_range(4):
            tiles[i * 4 + j, :, :] = nl.load(x[(i * 4 + j) * 128:(i * 4 + j + 1) * 128, :])
            res[i * 4 + j, :, :] = nl.multiply(tiles[i * 4 + j, :, :], 2.0)
            nl.store(out[(i * 4 + j) * 128:(i * 4 + j + 1) * 128, :], value=res[i * 4 + j, :, :])
    return out


@nki.jit
def rotate4(x):
    return doubled_rows(x, 4)


@nki.jit
def rotate1(x):
    return doubled_rows(x, 1)

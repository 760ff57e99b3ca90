# nl.ndarray(address=(0, A)) places an SBUF tile at A (bufs 1); in a loop, address=(0, A +
# (count % N) * S), count the iteration count of the loops around it and S the tile's bytes,
# rotates N tiles the iterations take in turn (NKI 0.7+ unrolls loops, so count is an integer
# there): the tile IR's buffer with `bufs N` at A. Forms tessel does not read are located
# errors: an address stepping by other than the tile, one rotating with an outer loop's count
# only, a partition offset.
# RUN: tessel compile %s -k rotate4 --arg x=bf16[1024,512] --target=trn2 | FileCheck %s
# REQUIRES: numpy
# RUN: tessel run %s -k rotate4 --arg x=bf16[1024,512] --target=trn2 --check --reference %S/Inputs/refs.py:doubled | FileCheck %s --check-prefix=PASS
# RUN: not tessel compile %s -k wide_step --arg x=bf16[1024,512] --target=trn2 2>&1 | FileCheck %s --check-prefix=STEP
# RUN: not tessel compile %s -k outer_count --arg x=bf16[1024,512] --target=trn2 2>&1 | FileCheck %s --check-prefix=OUTER
# RUN: not tessel compile %s -k partition --arg x=bf16[1024,512] --target=trn2 2>&1 | FileCheck %s --check-prefix=PART
# CHECK: for %i = 0 to 2 step 1
# CHECK-NEXT: for %j = 0 to 4 step 1
# CHECK-NEXT: %t = alloc sbuf<bf16, [{{.*}}:128, {{.*}}:512]> bufs 4 addr 0
# CHECK-NEXT: %r = alloc sbuf<bf16, [{{.*}}:128, {{.*}}:512]> addr 8192
# PASS: check: PASSED
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def rotate4(x):
    out = nl.ndarray((1024, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    for i in nl.affine_range(2):
        for j in nl.affine_range(4):
            t = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf, address=(0, (i * 4 + j) % 4 * 1024))
            r = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf, address=(0, 8192))
            nisa.dma_copy(dst=t[0:128, 0:512], src=x[(i * 4 + j) * 128:(i * 4 + j + 1) * 128, 0:512])
            nisa.tensor_scalar(dst=r[0:128, 0:512], data=t[0:128, 0:512], op0=nl.multiply, operand0=2.0)
            nisa.dma_copy(dst=out[(i * 4 + j) * 128:(i * 4 + j + 1) * 128, 0:512], src=r[0:128, 0:512])
    return out


@nki.jit
def wide_step(x):
    out = nl.ndarray((1024, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    for i in nl.affine_range(8):
        # STEP: address.py:[[@LINE+1]]: error: address {{.*}} of 't' steps by 2048 bytes, not its tile's 1024
        t = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf, address=(0, i % 2 * 2048))
    return out


@nki.jit
def outer_count(x):
    out = nl.ndarray((1024, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    for i in nl.affine_range(2):
        for j in nl.affine_range(4):
            # OUTER: address.py:[[@LINE+1]]: error: address {{.*}} of 't' rotates with the count of an outer loop
            t = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf, address=(0, i % 2 * 1024))
    return out


@nki.jit
def partition(x):
    out = nl.ndarray((1024, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    # PART: address.py:[[@LINE+1]]: error: address=(64, 0): tessel reads (0, free_offset)
    t = nl.ndarray((64, 512), dtype=nl.bfloat16, buffer=nl.sbuf, address=(64, 0))
    return out

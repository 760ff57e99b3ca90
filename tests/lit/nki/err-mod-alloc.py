# Modulo allocation tessel does not read as a buffer count is an error at its line, naming why:
# a block index that is not the loops' iteration count, a count restarted by an outer loop at
# other than a multiple of the tiles, more iterations than blocks, two block dimensions,
# num_free_tiles without a block dimension, tiles past SBUF's end, and SBUF tensors allocated
# both directly and automatically in one kernel (NKI allocates them one way).
# RUN: not tessel compile %s -k offset --arg x=bf16[1024,512] --target=trn1 2>&1 | FileCheck %s --check-prefix=OFFSET
# RUN: not tessel compile %s -k restart --arg x=bf16[1024,512] --target=trn1 2>&1 | FileCheck %s --check-prefix=RESTART
# RUN: not tessel compile %s -k few_blocks --arg x=bf16[1024,512] --target=trn1 2>&1 | FileCheck %s --check-prefix=FEW
# RUN: not tessel compile %s -k two_dims --arg x=bf16[1024,512] --target=trn1 2>&1 | FileCheck %s --check-prefix=TWO
# RUN: not tessel compile %s -k no_block --arg x=bf16[1024,512] --target=trn1 2>&1 | FileCheck %s --check-prefix=NOBLOCK
# RUN: not tessel compile %s -k past_end --arg x=bf16[1024,512] --target=trn1 2>&1 | FileCheck %s --check-prefix=END
# RUN: not tessel compile %s -k mixed --arg x=bf16[1024,512] --target=trn1 2>&1 | FileCheck %s --check-prefix=MIXED
import neuronxcc.nki as nki
import neuronxcc.nki.compiler as ncc
import neuronxcc.nki.language as nl


def rows(n_blocks, n_tiles):
    return nl.ndarray((n_blocks, nl.par_dim(128), 512), dtype=nl.bfloat16,
                      buffer=ncc.sbuf.mod_alloc(base_addr=0, num_free_tiles=(n_tiles,)))


@nki.jit
def offset(x):
    out = nl.ndarray((1024, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    t = rows(8, 2)
    for i in nl.affine_range(7):
        # OFFSET: err-mod-alloc.py:[[@LINE+1]]: error: block index {{.*}} of modulo-allocated 't' is not the iteration count of the loops around it
        t[i + 1, :, :] = nl.load(x[i * 128:(i + 1) * 128, :])
        nl.store(out[i * 128:(i + 1) * 128, :], value=t[i + 1, :, :])
    return out


@nki.jit
def restart(x):
    out = nl.ndarray((1024, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    t = rows(4, 3)
    for i in nl.affine_range(2):
        for j in nl.affine_range(4):
            # RESTART: err-mod-alloc.py:[[@LINE+1]]: error: block index {{.*}} of modulo-allocated 't' restarts its count of 4 iterations, not a multiple of its 3 tiles
            t[j, :, :] = nl.load(x[(i * 4 + j) * 128:(i * 4 + j + 1) * 128, :])
            nl.store(out[(i * 4 + j) * 128:(i * 4 + j + 1) * 128, :], value=t[j, :, :])
    return out


@nki.jit
def few_blocks(x):
    out = nl.ndarray((1024, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    t = rows(4, 2)
    for i in nl.affine_range(8):
        # FEW: err-mod-alloc.py:[[@LINE+1]]: error: 't' has 4 blocks but its block index counts 8 iterations
        t[i, :, :] = nl.load(x[i * 128:(i + 1) * 128, :])
        nl.store(out[i * 128:(i + 1) * 128, :], value=t[i, :, :])
    return out


@nki.jit
def two_dims(x):
    out = nl.ndarray((1024, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    # TWO: err-mod-alloc.py:[[@LINE+1]]: error: 't': tessel reads modulo allocation over one block dimension (before nl.par_dim), not 2
    t = nl.ndarray((2, 4, nl.par_dim(128), 512), dtype=nl.bfloat16, buffer=ncc.sbuf.mod_alloc(base_addr=0))
    return out


@nki.jit
def no_block(x):
    out = nl.ndarray((1024, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    # NOBLOCK: err-mod-alloc.py:[[@LINE+1]]: error: num_free_tiles has 1 entries but 't' has 0 block dimensions (those before nl.par_dim)
    t = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=ncc.sbuf.mod_alloc(base_addr=0, num_free_tiles=(2,)))
    return out


@nki.jit
def past_end(x):
    out = nl.ndarray((1024, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    # END: err-mod-alloc.py:[[@LINE+1]]: error: 't' at address 196000 with 2 tiles of 1024 bytes ends at byte 198048 of a partition, past SBUF's 196608
    t = nl.ndarray((8, nl.par_dim(128), 512), dtype=nl.bfloat16, buffer=ncc.sbuf.mod_alloc(base_addr=196000, num_free_tiles=(2,)))
    return out


@nki.jit
def mixed(x):
    out = nl.ndarray((1024, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    a = rows(8, 2)
    # MIXED: err-mod-alloc.py:[[@LINE+1]]: error: this SBUF tensor is allocated automatically (nl.sbuf) but an earlier one directly
    b = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
    return out

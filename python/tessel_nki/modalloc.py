"""Modulo allocation (`ncc.sbuf.mod_alloc`, NKI's direct allocation) read as buffer counts.

NKI documents that a tensor's block dimensions (those before `nl.par_dim`) count logical tiles,
and that `mod_alloc(base_addr=A, num_free_tiles=(N,))` places logical block `i` in physical tile
`i % N` at `A + (i % N) * tile_bytes` (nki.compiler.sbuf.mod_alloc). A kernel that indexes the block
by the iteration count of the loops around its accesses, `t[i * J + j]` in `for i: for j:`, thus
rotates N tiles through those iterations: the tile IR's buffer allocated in the innermost of those
loops with `bufs N`, which is what this module makes of it. The base address is not used: tessel
allocates on-chip memory itself (docs/nki.md, "Buffers"). Other forms of modulo allocation (several
block dimensions, a block index that is not the iteration count, partition tiles) are errors.
"""
from .affine import Affine, Rotation
from .errors import NkiError
from .tracer import SBUF, Alloc, current


class ModAlloc:
    """The `buffer=` of a directly allocated SBUF tensor: its base address and physical tile count."""

    def __init__(self, address, slots, dims):
        self.address, self.slots, self.dims = address, slots, dims  # dims: len(num_free_tiles)
        self.space = SBUF


def sbuf_mod_alloc(*args, base_addr=None, base_partition=0, num_par_tiles=(), num_free_tiles=()):
    if args:
        raise NkiError("ncc.sbuf.mod_alloc takes keyword arguments only (base_addr=, num_free_tiles=)")
    if not isinstance(base_addr, int) or isinstance(base_addr, bool) or base_addr < 0:
        raise NkiError("ncc.sbuf.mod_alloc: base_addr must be a non-negative integer, got %r" % (base_addr,))
    if base_partition != 0 or tuple(num_par_tiles) not in ((), (1,)):
        raise NkiError("ncc.sbuf.mod_alloc: partition tiles (base_partition, num_par_tiles) are not supported; "
                       "tessel places a tile on partitions 0 and up")
    tiles = tuple(num_free_tiles)
    if len(tiles) > 1:
        raise NkiError("ncc.sbuf.mod_alloc: num_free_tiles=%r: tessel reads modulo allocation over one block "
                       "dimension" % (tiles,))
    for n in tiles:
        if not isinstance(n, int) or isinstance(n, bool) or n <= 0:
            raise NkiError("ncc.sbuf.mod_alloc: num_free_tiles must hold positive integers, got %r" % (tiles,))
    return ModAlloc(base_addr, tiles[0] if tiles else 1, len(tiles))


class ModTensor:
    """What a modulo-allocated tensor with a block dimension stands for: its per-iteration tile
    (created at its first access, in the loop whose iterations its block index counts)."""

    def __init__(self, alloc, block):
        self.slots, self.address, self.block = alloc.slots, alloc.address, block
        self.inner, self.loop = None, None


def declare(tr, tensor, alloc):
    """Marks `tensor` (block dimension first, if any) as placed by `alloc`; a tensor with a block
    dimension is allocated at its first access (resolve)."""
    if tensor.pdim not in (0, 1):
        raise NkiError("'%s': tessel reads modulo allocation over one block dimension (before nl.par_dim), "
                       "not %d" % (tensor.name, tensor.pdim))
    if alloc.dims > tensor.pdim:
        raise NkiError("num_free_tiles has %d entries but '%s' has %d block dimensions (those before nl.par_dim)"
                       % (alloc.dims, tensor.name, tensor.pdim))
    _check_fits(tr, tensor, alloc.address, alloc.slots)
    if tensor.pdim == 0:
        tensor.slots, tensor.address = 1, alloc.address
        return
    tensor.mod = ModTensor(alloc, tr.block)


def _tile_bytes(tr, tensor):
    tile = tensor.shape[tensor.pdim:]
    size = tensor.dtype.size * max(1, tile[0] // tr.geometry["partitions"])
    for s in tile[1:]:
        size *= s
    return size


def _check_fits(tr, tensor, address, slots):
    size, cap = _tile_bytes(tr, tensor), tr.geometry["sbuf_bytes"]
    end = address + slots * size
    if end > cap:
        raise NkiError("'%s' at address %d with %d tiles of %d bytes ends at byte %d of a partition, past "
                       "SBUF's %d" % (tensor.name, address, slots, size, end, cap))


def place(tr, tensor, address):
    """`nl.ndarray(..., address=(0, A))` or, in a loop, `address=(0, A + (count % N) * S)` with
    `count` the iteration count of the loops around it and S the tile's bytes: a tile at A, or N
    tiles from A the loop iterations take in turn (bufs N). NKI 0.7+ unrolls loops, so the count
    is an integer there; the tracer keeps it symbolic (affine.Rotation)."""
    if not isinstance(address, tuple) or len(address) != 2 or address[0] != 0:
        raise NkiError("address=%r: tessel reads (0, free_offset), a tile on partitions 0 and up" % (address,))
    if tensor.space != "sbuf" or tensor.pdim != 0:
        raise NkiError("address= places an SBUF tensor whose first dimension is its partition dimension")
    free = address[1]
    if isinstance(free, Affine) and free.is_const():
        free = free.const
    if isinstance(free, int) and not isinstance(free, bool) and free >= 0:
        _check_fits(tr, tensor, free, 1)
        tensor.slots, tensor.address = 1, free
        return
    if not isinstance(free, Rotation):
        raise NkiError("address=(0, %r): the free offset is an integer or A + (count %% N) * S" % (free,))
    loops = _loops_between(tr, tr.root)
    counting = _counting_loop(tensor, free.count, loops, free.slots)
    inner = loops.index(counting) + 1 if counting else 0
    if any(_trips(lp) > 1 for lp in loops[inner:]):
        raise NkiError("address %s of '%s' rotates with the count of an outer loop, not every iteration of "
                       "the loops around it" % (free.text(), tensor.name))
    if free.stride != _tile_bytes(tr, tensor):
        raise NkiError("address %s of '%s' steps by %d bytes, not its tile's %d: tessel reads adjacent tiles"
                       % (free.text(), tensor.name, free.stride, _tile_bytes(tr, tensor)))
    _check_fits(tr, tensor, free.offset, free.slots)
    tensor.slots, tensor.address = free.slots, free.offset


def _loops_between(tr, block):
    """The loops from `block` (exclusive) down to where the tracer is, outermost first."""
    loops = []
    b = tr.block
    while b is not block:
        if b.parent_loop is None:
            raise NkiError("a modulo-allocated tensor is accessed outside the block it was declared in")
        loops.append(b.parent_loop)
        b = b.parent_loop.parent
    return loops[::-1]


def _trips(loop):
    if not all(isinstance(x, int) for x in (loop.lo, loop.hi, loop.step)) or loop.lo != 0 or loop.step != 1:
        raise NkiError("a modulo-allocated tensor's block is counted by loops from 0 in steps of 1")
    return loop.hi


def _counting_loop(t, index, loops, slots, blocks=None):
    """The innermost loop whose iterations `index` counts (None: the declaring block's one
    execution), checking that `index` is that count. The count may start below the outer loops
    when their every iteration restarts it at a multiple of the slots (`t[j]` in `for i: for j:`
    with J a multiple of N rotates as `t[i * J + j]` would)."""
    counted = [d for d, lp in enumerate(loops) if lp.var in index.terms]
    depth = counted[-1] + 1 if counted else 0
    start = counted[0] if counted else 0
    stride, ok = 1, index.const == 0
    for lp in reversed(loops[start:depth]):
        n = _trips(lp)
        ok = ok and (index.terms.get(lp.var, 0) == stride or n == 1)
        stride *= n
    if not ok:
        raise NkiError("block index %s of modulo-allocated '%s' is not the iteration count of the loops around "
                       "it (i * J + j for `for i in range(I): for j in range(J):`), which is the form tessel "
                       "reads as a buffer count" % (index.text(), t.name))
    if blocks is not None and stride > blocks:
        raise NkiError("'%s' has %d blocks but its block index counts %d iterations" % (t.name, blocks, stride))
    if start > 0 and stride % slots and any(_trips(lp) > 1 for lp in loops[:start]):
        raise NkiError("block index %s of modulo-allocated '%s' restarts its count of %d iterations, not a "
                       "multiple of its %d tiles, at each iteration of an outer loop: tessel reads modulo "
                       "allocation that rotates through the loops' iterations" % (index.text(), t.name, stride, slots))
    return loops[depth - 1] if depth else None


def resolve(t, key):
    """(tensor, key) for the access `t[key]` of a modulo-allocated tensor: its per-iteration tile and
    the key without the block index."""
    tr = current()
    mod = t.mod
    if not isinstance(key, tuple):
        key = (key,)
    if not key or key[0] is Ellipsis:
        raise NkiError("modulo-allocated '%s' is indexed by its block first (t[i, ...])" % t.name)
    try:
        index = Affine.of(key[0])
    except NkiError:
        raise NkiError("the block index of modulo-allocated '%s' must be an integer or a loop variable's "
                       "affine expression" % t.name)
    loop = _counting_loop(t, index, _loops_between(tr, mod.block), mod.slots, blocks=t.shape[0])
    if mod.inner is None:
        inner = tr.new_tensor(t.shape[1:], t.dtype, t.space, t.name, 0, "buffer", t.loc)
        inner.name = t.name  # the declared tensor itself is never in the IR
        inner.slots, inner.address = mod.slots, mod.address
        inner.block = loop.body if loop else mod.block
        inner.block.ops.insert(0, Alloc(inner, t.loc))
        mod.inner, mod.loop = inner, loop
    elif mod.loop is not loop:
        raise NkiError("modulo-allocated '%s' is accessed with block indices that count different loops"
                       % t.name)
    return mod.inner, key[1:]

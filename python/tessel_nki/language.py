"""The stand-in for nki.language / neuronxcc.nki.language."""
import builtins

from . import isa, isa_scan, isa_vector, modalloc
from .affine import Affine
from .predicate import check_mask
from .spmd import nc, num_programs, program_id, program_ndim, spmd_dim  # noqa: F401 (nl's SPMD API)
from .errors import NkiError
from .tracer import (BF16, F32, HBM, PRIVATE_HBM, PSUM, SBUF, SHARED_HBM, UNSUPPORTED_DTYPES, IotaIndex, Lazy,
                     ParDim, Slice, Space, Tensor, Tracer, UnsupportedDType, View, as_dtype, current)

bfloat16 = BF16
float32 = F32
for _name in UNSUPPORTED_DTYPES:
    globals()[_name] = UnsupportedDType(_name)

shared_hbm, private_hbm, hbm, sbuf, psum = SHARED_HBM, PRIVATE_HBM, HBM, SBUF, PSUM


class _TileSize:
    """nl.tile_size: the target's tile limits (from the geometry the driver passes)."""

    @property
    def pmax(self):
        return current().geometry["partitions"]

    @property
    def gemm_stationary_fmax(self):
        return current().geometry["max_stationary"]

    @property
    def gemm_moving_fmax(self):
        return current().geometry["max_moving"]

    @property
    def psum_fmax(self):
        return current().geometry["psum_bank_bytes"] // 4

    @property
    def bn_stats_fmax(self):
        return isa_scan.BN_STATS_FMAX


tile_size = _TileSize()


def par_dim(size):
    return ParDim(size)


# ----------------------------------------------------------------------------
# Tensors


def _shape_and_pdim(shape):
    if isinstance(shape, int):
        shape = (shape,)
    dims, pdim = [], None
    for i, s in enumerate(shape):
        if isinstance(s, ParDim):
            if pdim is not None:
                raise NkiError("two nl.par_dim in one shape")
            pdim, s = i, s.size
        dims.append(s)
    return tuple(dims), pdim


def _space_of(buffer):
    if buffer is None:
        return SBUF
    if isinstance(buffer, Space):
        return buffer
    if isinstance(buffer, modalloc.ModAlloc):
        return buffer.space
    raise NkiError("buffer=%r is not supported (nl.shared_hbm, nl.private_hbm, nl.hbm, nl.sbuf, nl.psum)"
                   % (buffer,))


def ndarray(shape, dtype, buffer=None, name="", address=None, **kwargs):
    for k in kwargs:
        raise NkiError("nl.ndarray: argument '%s' is not supported" % k)
    space = _space_of(buffer)
    dims, pdim = _shape_and_pdim(shape)
    if pdim is not None and space.ir == "hbm":
        raise NkiError("nl.par_dim in an HBM tensor")
    dt = as_dtype(dtype)
    if space.ir == "psum":
        dt = F32  # tessel's PSUM holds f32 (docs/nki.md)
    tr = current()
    direct = isinstance(buffer, modalloc.ModAlloc)
    if space.ir == "sbuf":
        _one_allocation_kind(tr, direct)
    if direct and pdim:
        t = tr.new_tensor(dims, dt, space.ir, name or Tracer.assigned_name("t"), pdim)
        t.block = tr.block
        modalloc.declare(tr, t, buffer)
        return t
    t = tr.alloc(dims, dt, space.ir, name or Tracer.assigned_name("t"), pdim or 0)
    if direct:
        modalloc.declare(tr, t, buffer)
    if address is not None:
        if direct:
            raise NkiError("nl.ndarray: address= and a direct allocation (ncc.sbuf.mod_alloc) both place '%s'"
                           % t.name)
        modalloc.place(tr, t, address)
    return t


def _one_allocation_kind(tr, direct):
    """NKI: all SBUF tensors of a kernel are allocated directly, or all automatically
    (nki.compiler.sbuf.auto_alloc)."""
    kind = "direct" if direct else "auto"
    first = tr.sbuf_allocation = tr.sbuf_allocation or kind
    if first != kind:
        raise NkiError("this SBUF tensor is allocated %s but an earlier one %s: NKI allocates all SBUF tensors of "
                       "a kernel one way (ncc.sbuf.mod_alloc for every one, or nl.sbuf for every one)"
                       % ("directly (ncc.sbuf.mod_alloc)" if direct else "automatically (nl.sbuf)",
                          "directly" if first == "direct" else "automatically"))


def zeros(shape, dtype, buffer=None, name="", **kwargs):
    t = ndarray(shape, dtype, buffer, name or Tracer.assigned_name("zeros"), **kwargs)
    if t.space == "hbm":
        raise NkiError("nl.zeros in HBM is not supported (tessel's memset writes on-chip tiles)")
    _memset_whole(t, 0.0)
    return t


def _memset_whole(t, value):
    """One memset per 2-D tile of `t` (its leading non-partition dimensions become points)."""
    import itertools
    free = [d for d in t.ir_dims[1:]]
    keep = free[-1:]  # the innermost free dimension stays a range
    outer = [d for d in free if d not in keep]
    for point in itertools.product(*[range(t.shape[d]) for d in outer]):
        key = [slice(None)] * t.ndim
        for d, i in zip(outer, point):
            key[d] = i
        if t.ndim == 1:
            raise NkiError("a 1-D on-chip tensor is not a 2-D tile")
        isa.memset_access(t[tuple(key)].access, value, op="nl.zeros")


def ds(start, size):
    return Slice(start, size)


def arange(*args):
    step = 1
    if len(args) == 1:
        start, stop = 0, args[0]
    elif len(args) in (2, 3):
        start, stop = args[:2]
        step = args[2] if len(args) == 3 else 1
    else:
        raise NkiError("nl.arange takes (stop), (start, stop) or (start, stop, step)")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (start, stop, step)):
        raise NkiError("nl.arange bounds and step must be constant integers")
    if step < 1:
        raise NkiError("nl.arange: step %d is not supported (a positive step)" % step)
    return IotaIndex(builtins.max(0, -(-(stop - start) // step)), Affine.of(start), step=step)


class _MGridResult(tuple):
    @property
    def p(self):
        return self[0]

    @property
    def x(self):
        return self[1]


class _MGrid:
    def __getitem__(self, key):
        if not isinstance(key, tuple):
            key = (key,)
        out = []
        for i, k in enumerate(key):
            if not isinstance(k, slice) or not isinstance(k.stop, int) or \
                    not isinstance(k.step if k.step is not None else 1, int) or (k.step or 1) < 1:
                raise NkiError("nl.mgrid takes start:stop or start:stop:step slices of constant integers")
            start, step = k.start or 0, k.step or 1
            out.append(IotaIndex(builtins.max(0, -(-(k.stop - start) // step)), Affine.of(start), i, len(key),
                                 step=step))
        return _MGridResult(out)


mgrid = _MGrid()


# ----------------------------------------------------------------------------
# Loops


class _Range:
    def __init__(self, api, args, parallel):
        if len(args) == 1:
            lo, hi, step = 0, args[0], 1
        elif len(args) == 2:
            (lo, hi), step = args, 1
        elif len(args) == 3:
            lo, hi, step = args
        else:
            raise NkiError("%s takes 1 to 3 arguments" % api)
        for x in (lo, hi, step):
            if isinstance(x, Affine) and not x.is_const():
                raise NkiError("%s: loop bounds must be constants (a bound depending on a loop variable "
                               "is not supported)" % api)
        lo, hi, step = (x.const if isinstance(x, Affine) else x for x in (lo, hi, step))
        if not all(isinstance(x, int) for x in (lo, hi, step)) or step <= 0:
            raise NkiError("%s: bounds must be integers and the step positive" % api)
        self.lo, self.hi, self.step, self.parallel = lo, hi, step, parallel

    def __iter__(self):
        if self.hi <= self.lo:
            return
        tr = current()
        loop, var = tr.open_loop(self.lo, self.hi, self.step, self.parallel)
        completed = False
        try:
            yield var
            completed = True
        finally:
            tr.close_loop(loop, completed)


def affine_range(*args, **kwargs):
    return _Range("nl.affine_range", args, True)


def sequential_range(*args, **kwargs):
    return _Range("nl.sequential_range", args, False)


def traced_range(*args):
    """Python's `range` inside the kernel: an IR loop (NKI treats it as sequential_range)."""
    return _Range("range", args, False)


def static_range(*args):
    """Unrolled at trace time: the body runs once per iteration with a constant index."""
    import builtins
    return builtins.range(*args)


# ----------------------------------------------------------------------------
# Data movement


def _no_kwargs(api, mask, kwargs):
    check_mask(mask, api)
    for k in kwargs:
        raise NkiError("%s: argument '%s' is not supported" % (api, k))


def load(src, dtype=None, mask=None, **kwargs):
    _no_kwargs("nl.load", mask, kwargs)
    tr = current()
    tr.consume([src])
    s = tr.operand(src, "the source")
    if s.tensor.space != "hbm":
        raise NkiError("nl.load reads HBM; '%s' is in %s" % (s.tensor.name, s.tensor.space))
    if dtype is not None and as_dtype(dtype) is not s.tensor.dtype:
        raise NkiError("nl.load with dtype=%s from a %s tensor: tessel's DMA does not cast"
                       % (as_dtype(dtype).name, s.tensor.dtype.name))
    isa._tile(s, "the source", nd=True)
    return tr.lazy("load", "sbuf", s.tensor.dtype, s.shape,
                   lambda d, mode: isa.dma_access(d, s, op="nl.load"), Tracer.assigned_name("load"))


def load_transpose2d(src, dtype=None, mask=None):
    check_mask(mask, "nl.load_transpose2d")
    tr = current()
    tr.consume([src])
    s = tr.operand(src, "the source")
    if s.tensor.space != "hbm":
        raise NkiError("nl.load_transpose2d reads HBM; '%s' is in %s" % (s.tensor.name, s.tensor.space))
    p, f = isa._tile(s, "the source")
    return tr.lazy("load", "sbuf", s.tensor.dtype, (f, p),
                   lambda d, mode: isa.dma_access(d, s, op="nl.load_transpose2d", transpose=True),
                   Tracer.assigned_name("loadT"))


def store(dst, value, mask=None, **kwargs):
    _no_kwargs("nl.store", mask, kwargs)
    tr = current()
    tr.consume([dst, value])
    d = tr.operand(dst, "the destination")
    if d.tensor.space != "hbm":
        raise NkiError("nl.store writes HBM; '%s' is in %s" % (d.tensor.name, d.tensor.space))
    isa.dma_access(d, tr.operand(value, "the value"), op="nl.store")


# ----------------------------------------------------------------------------
# Compute


def matmul(x, y, transpose_x=False, mask=None, **kwargs):
    _no_kwargs("nl.matmul", mask, kwargs)
    tr = current()
    tr.consume([x, y])
    a, b = tr.operand(x, "x"), tr.operand(y, "y")
    if not transpose_x:
        # x is [M, K]: bring K to the partitions first (tensor-engine transpose, then to SBUF).
        m, k = isa._tile(a, "x")
        xt_psum = tr.alloc((k, m), F32, "psum", "xT_psum")
        isa.transpose_access(xt_psum.full(), a, op="nl.matmul")
        xt = tr.alloc((k, m), a.tensor.dtype, "sbuf", "xT")
        isa.copy_access(xt.full(), xt_psum.full(), op="nl.matmul")
        a = xt.full()
    n = isa._tile(b, "y")[1]
    m = isa._tile(a, "x")[1]

    def write(d, mode):
        isa.matmul_access(d, a, b, "infer" if mode == "iadd" else "reset", op="nl.matmul")
    return tr.lazy("matmul", "psum", F32, (m, n), write, Tracer.assigned_name("matmul"))


def copy(x, dtype=None, mask=None, **kwargs):
    _no_kwargs("nl.copy", mask, kwargs)
    return isa.tensor_copy(x, dtype=dtype)


def transpose(x, dtype=None, mask=None):
    check_mask(mask, "nl.transpose")
    return isa.nc_transpose(x)


def _is_number(x):
    import numbers
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def _result_dtype(dtype, *tiles):
    """dtype= if given, else the most precise of the operands' (NKI's rule)."""
    if dtype is not None:
        return as_dtype(dtype)
    return F32 if any(t.tensor.dtype is F32 for t in tiles) else tiles[0].tensor.dtype


def _elementwise(alu, a, b, dtype=None, mask=None, api=None):
    """`a alu b` of tiles and numbers; a [P, 1] tile broadcasts along the free dimension
    (tensor_scalar with a tile operand; `reverse` when it is the left operand)."""
    api = api or "nl." + alu
    check_mask(mask, api)
    tr = current()
    if _is_number(a) and _is_number(b):
        raise NkiError("an elementwise op of two scalars is not a tile op")
    if _is_number(a) or _is_number(b):
        reverse = _is_number(a)
        tile, scalar = (b, a) if reverse else (a, b)
        tr.consume([tile])
        src = tr.operand(tile)
        return tr.lazy(alu, "sbuf", _result_dtype(dtype, src), src.shape,
                       lambda d, mode: isa.tensor_scalar_access(d, src, alu, float(scalar), op=api, reverse=reverse),
                       Tracer.assigned_name(alu))
    tr.consume([a, b])
    x, y = tr.operand(a), tr.operand(b)
    dt = _result_dtype(dtype, x, y)
    if x.shape == y.shape:
        return tr.lazy(alu, "sbuf", dt, x.shape, lambda d, mode: isa.tensor_tensor_access(d, x, y, alu, op=api),
                       Tracer.assigned_name(alu))
    for tile, vec, reverse in ((x, y, False), (y, x, True)):
        if len(vec.shape) == 2 and len(tile.shape) == 2 and vec.shape[1] == 1 and vec.shape[0] == tile.shape[0]:
            return tr.lazy(alu, "sbuf", dt, tile.shape,
                           lambda d, mode, t=tile, v=vec, r=reverse: isa.tensor_scalar_access(d, t, alu, v, op=api,
                                                                                            reverse=r),
                           Tracer.assigned_name(alu))
    raise NkiError("elementwise %s of tiles %s and %s: only a [P, 1] tile broadcasts (along the free "
                   "dimension); broadcast a [1, F] tile over partitions with .broadcast_to((P, F))"
                   % (alu, list(x.shape), list(y.shape)))


def _binary(alu):
    def fn(x, y, dtype=None, mask=None, **kwargs):
        for k in kwargs:
            raise NkiError("nl.%s: argument '%s' is not supported" % (fn.__name__, k))
        return _elementwise(alu, x, y, dtype, mask, "nl." + fn.__name__)
    return fn


add, subtract, multiply, maximum, minimum = (_binary(a) for a in ("add", "sub", "mul", "max", "min"))
divide, power = _binary("divide"), _binary("pow")
equal, not_equal, greater, greater_equal, less, less_equal = (
    _binary(a) for a in ("is_equal", "not_equal", "is_gt", "is_ge", "is_lt", "is_le"))
for _fn, _name in ((add, "add"), (subtract, "subtract"), (multiply, "multiply"), (maximum, "maximum"),
                   (minimum, "minimum"), (divide, "divide"), (power, "power"), (equal, "equal"),
                   (not_equal, "not_equal"), (greater, "greater"), (greater_equal, "greater_equal"),
                   (less, "less"), (less_equal, "less_equal")):
    _fn.__name__ = _name


def _reduction(alu, api_name, mean=False):
    def fn(x, axis, dtype=None, mask=None, keepdims=False, **kwargs):
        api = "nl." + api_name
        for k in kwargs:
            raise NkiError("%s: argument '%s' is not supported" % (api, k))
        check_mask(mask, api)
        return isa_vector.reduce_tile(api, alu, x, dtype, mean=mean, axis=axis)
    fn.__name__ = api_name
    return fn


sum = _reduction("add", "sum")  # noqa: A001 (NKI's names)
max = _reduction("max", "max")  # noqa: A001
min = _reduction("min", "min")  # noqa: A001
mean = _reduction("add", "mean", mean=True)


def broadcast_to(x, shape):
    """A [1, F] tile over P partitions (a tensor-engine product with a ones column, chunks of the
    moving size), or a [P, 1] tile along F (memset and tensor_scalar add)."""
    tr = current()
    tr.consume([x])
    src = tr.operand(x, "the broadcast tile")
    p, f = isa._tile(src, "the broadcast tile")
    shape = tuple(shape)
    if (p, f) == shape:
        return x
    if len(shape) != 2 or not ((p == 1 and f == shape[1]) or (f == 1 and p == shape[0])):
        raise NkiError("broadcast_to %s of a [%s, %s] tile: a [1, F] tile broadcasts to [P, F], a [P, 1] "
                       "tile to [P, F]" % (list(shape), p, f))
    write = _broadcast_partitions(src, shape) if p == 1 else _broadcast_free(src)
    return tr.lazy("broadcast", "sbuf", src.tensor.dtype, shape, write, Tracer.assigned_name("bcast"))


def _broadcast_partitions(src, shape):
    def write(d, mode):
        tr = current()
        P, F = shape
        ones = tr.alloc((1, P), src.tensor.dtype, "sbuf", "ones")
        isa.memset_access(ones.full(), 1.0, op="broadcast_to")
        step = tr.geometry["max_moving"]
        # Two PSUM tiles taken in turn: the product of one chunk overlaps the copy of the
        # previous, and a wide row takes two banks, not one per chunk.
        ring = [tr.alloc((P, step), F32, "psum", "bcast_psum") for _ in range(builtins.min(2, -(-F // step)))]
        for i, c in enumerate(range(0, F, step)):
            n = builtins.min(step, F - c)
            ps = _free_slice(ring[i % len(ring)].full(), 0, n)
            isa.matmul_access(ps, ones.full(), _free_slice(src, c, n), "reset", op="broadcast_to")
            isa.copy_access(_free_slice(d, c, n), ps, op="broadcast_to")
    return write


def _broadcast_free(src):
    def write(d, mode):
        isa.memset_access(d, 0.0, op="broadcast_to")
        isa.tensor_scalar_access(d, d, "add", src, op="broadcast_to")
    return write


def _free_slice(acc, start, size):
    """Columns start +: size of a 2-D tile access."""
    from .tracer import Access
    fd = acc.range_dims()[1]
    idx = list(acc.idx)
    s0, _ = idx[fd]
    idx[fd] = (s0 + start, size)
    return Access(acc.tensor, idx)


def full(shape, fill_value, dtype, buffer=None, name="", **kwargs):
    t = ndarray(shape, dtype, buffer, name or Tracer.assigned_name("full"), **kwargs)
    if t.space == "hbm":
        raise NkiError("nl.full in HBM is not supported (tessel's memset writes on-chip tiles)")
    _memset_whole(t, float(fill_value))
    return t


def ones(shape, dtype, buffer=None, name="", **kwargs):
    return full(shape, 1.0, dtype, buffer, name or Tracer.assigned_name("ones"), **kwargs)


def _make_act(fn_name):
    def act(x, dtype=None, mask=None, **kwargs):
        _no_kwargs("nl." + fn_name, mask, kwargs)
        return isa.activation(op=act, data=x, dtype=dtype)
    act.__name__ = fn_name
    return act


exp = _make_act("exp")
rsqrt = _make_act("rsqrt")
reciprocal = _make_act("reciprocal")
log = _make_act("log")
abs = _make_act("abs")  # noqa: A001
silu = _make_act("silu")
gelu = _make_act("gelu")
relu = _make_act("relu")
sigmoid = _make_act("sigmoid")
tanh = _make_act("tanh")
square = _make_act("square")

isa.ALU_OPS.update({add: "add", subtract: "sub", multiply: "mul", maximum: "max", minimum: "min",
                    divide: "divide", power: "pow", equal: "is_equal", not_equal: "not_equal", greater: "is_gt",
                    greater_equal: "is_ge", less: "is_lt", less_equal: "is_le"})
isa.ACT_FNS.update({copy: "copy", exp: "exp", silu: "silu", gelu: "gelu", relu: "relu", sigmoid: "sigmoid",
                    tanh: "tanh", square: "square", rsqrt: "rsqrt", reciprocal: "reciprocal", log: "log",
                    abs: "abs"})
try:  # numpy's ufuncs as op= values (np.add, np.exp, ...), as NKI accepts them
    import numpy as _np
    isa.ALU_OPS.update({_np.add: "add", _np.subtract: "sub", _np.multiply: "mul", _np.maximum: "max",
                        _np.minimum: "min", _np.divide: "divide", _np.power: "pow", _np.equal: "is_equal",
                        _np.not_equal: "not_equal", _np.greater: "is_gt", _np.greater_equal: "is_ge",
                        _np.less: "is_lt", _np.less_equal: "is_le"})
    isa.ACT_FNS.update({_np.exp: "exp", _np.tanh: "tanh", _np.square: "square", _np.reciprocal: "reciprocal",
                        _np.log: "log", _np.abs: "abs"})
except ImportError:
    pass

__all__ = [n for n in dir() if not n.startswith("_")]
_ = (Lazy, Tensor, View)

"""The stand-in for nki.language / neuronxcc.nki.language."""
from . import isa
from .affine import Affine
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
    raise NkiError("buffer=%r is not supported (nl.shared_hbm, nl.private_hbm, nl.hbm, nl.sbuf, nl.psum)"
                   % (buffer,))


def ndarray(shape, dtype, buffer=None, name="", **kwargs):
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
    return tr.alloc(dims, dt, space.ir, name or Tracer.assigned_name("t"), pdim or 0)


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
    if len(args) == 1:
        start, stop = 0, args[0]
    elif len(args) == 2:
        start, stop = args
    else:
        raise NkiError("nl.arange with a step is not supported")
    if not isinstance(start, int) or not isinstance(stop, int):
        raise NkiError("nl.arange bounds must be constant integers")
    return IotaIndex(stop - start, Affine.of(start))


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
            if not isinstance(k, slice) or k.step not in (None, 1):
                raise NkiError("nl.mgrid takes start:stop slices")
            start = k.start or 0
            out.append(IotaIndex(k.stop - start, Affine.of(start), i, len(key)))
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


def load(src, dtype=None, mask=None, **kwargs):
    if mask is not None or kwargs:
        raise NkiError("nl.load: %s is not supported" % ("mask=" if mask is not None else ", ".join(kwargs)))
    tr = current()
    tr.consume([src])
    s = tr.operand(src, "the source")
    if s.tensor.space != "hbm":
        raise NkiError("nl.load reads HBM; '%s' is in %s" % (s.tensor.name, s.tensor.space))
    if dtype is not None and as_dtype(dtype) is not s.tensor.dtype:
        raise NkiError("nl.load with dtype=%s from a %s tensor: tessel's DMA does not cast"
                       % (as_dtype(dtype).name, s.tensor.dtype.name))
    isa._tile(s, "the source")
    return tr.lazy("load", "sbuf", s.tensor.dtype, s.shape,
                   lambda d, mode: isa.dma_access(d, s, op="nl.load"), Tracer.assigned_name("load"))


def load_transpose2d(src, dtype=None, mask=None):
    if mask is not None:
        raise NkiError("nl.load_transpose2d: mask= is not supported")
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
    if mask is not None or kwargs:
        raise NkiError("nl.store: %s is not supported" % ("mask=" if mask is not None else ", ".join(kwargs)))
    tr = current()
    tr.consume([dst, value])
    d = tr.operand(dst, "the destination")
    if d.tensor.space != "hbm":
        raise NkiError("nl.store writes HBM; '%s' is in %s" % (d.tensor.name, d.tensor.space))
    isa.dma_access(d, tr.operand(value, "the value"), op="nl.store")


# ----------------------------------------------------------------------------
# Compute


def matmul(x, y, transpose_x=False, mask=None, **kwargs):
    if mask is not None or kwargs:
        raise NkiError("nl.matmul: %s is not supported" % ("mask=" if mask is not None else ", ".join(kwargs)))
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
    if mask is not None or kwargs:
        raise NkiError("nl.copy: %s is not supported" % ("mask=" if mask is not None else ", ".join(kwargs)))
    return isa.tensor_copy(x, dtype=dtype)


def transpose(x, dtype=None, mask=None):
    if mask is not None:
        raise NkiError("nl.transpose: mask= is not supported")
    return isa.nc_transpose(x)


def _elementwise(alu, a, b, dtype=None):
    tr = current()
    scalar_a = isinstance(a, (int, float)) and not isinstance(a, bool)
    scalar_b = isinstance(b, (int, float)) and not isinstance(b, bool)
    if scalar_a and scalar_b:
        raise NkiError("an elementwise op of two scalars is not a tile op")
    if scalar_a or scalar_b:
        tile, scalar = (b, a) if scalar_a else (a, b)
        if scalar_a and alu == "sub":
            raise NkiError("scalar - tile is not supported (tensor_scalar computes tile op scalar)")
        tr.consume([tile])
        src = tr.operand(tile)
        dt = as_dtype(dtype) if dtype is not None else src.tensor.dtype
        return tr.lazy(alu, "sbuf", dt, src.shape,
                       lambda d, mode: isa.tensor_scalar_access(d, src, alu, scalar, op="nl." + alu),
                       Tracer.assigned_name(alu))
    tr.consume([a, b])
    x, y = tr.operand(a), tr.operand(b)
    if x.shape != y.shape:
        raise NkiError("elementwise %s of tiles %s and %s: broadcasting is not supported"
                       % (alu, list(x.shape), list(y.shape)))
    dt = as_dtype(dtype) if dtype is not None else x.tensor.dtype
    return tr.lazy(alu, "sbuf", dt, x.shape,
                   lambda d, mode: isa.tensor_tensor_access(d, x, y, alu, op="nl." + alu),
                   Tracer.assigned_name(alu))


def add(x, y, dtype=None, mask=None, **kwargs):
    return _elementwise("add", x, y, dtype)


def subtract(x, y, dtype=None, mask=None, **kwargs):
    return _elementwise("sub", x, y, dtype)


def multiply(x, y, dtype=None, mask=None, **kwargs):
    return _elementwise("mul", x, y, dtype)


def maximum(x, y, dtype=None, mask=None, **kwargs):
    return _elementwise("max", x, y, dtype)


def minimum(x, y, dtype=None, mask=None, **kwargs):
    return _elementwise("min", x, y, dtype)


def _make_act(fn_name):
    def act(x, dtype=None, mask=None, **kwargs):
        if mask is not None or kwargs:
            raise NkiError("nl.%s: %s is not supported" % (fn_name, "mask=" if mask is not None
                                                            else ", ".join(kwargs)))
        return isa.activation(op=act, data=x, dtype=dtype)
    act.__name__ = fn_name
    return act


exp = _make_act("exp")
silu = _make_act("silu")
gelu = _make_act("gelu")
relu = _make_act("relu")
sigmoid = _make_act("sigmoid")
tanh = _make_act("tanh")
square = _make_act("square")

isa.ALU_OPS.update({add: "add", subtract: "sub", multiply: "mul", maximum: "max", minimum: "min"})
isa.ACT_FNS.update({copy: "copy", exp: "exp", silu: "silu", gelu: "gelu", relu: "relu", sigmoid: "sigmoid",
                    tanh: "tanh", square: "square"})

__all__ = [n for n in dir() if not n.startswith("_")]
_ = (Lazy, Tensor, View)

"""The trace: tensors, accesses, lazily materialised tiles and the recorded op tree.

One Tracer is active while a kernel runs (`current()`). The language and isa
modules call into it; it appends ops to the innermost open block. A tile an
API returns (nl.exp(x), nl.load(a), nisa.nc_matmul(a, b)) is a Lazy: assigned
into a slice (`y[...] = nl.exp(x)`) it becomes one op writing there; used as
an operand it is first written into a fresh buffer of the current loop body.
Pending lazies are materialised, in creation order, before any other op is
recorded, so the trace keeps the kernel's program order.
"""
import re

from .affine import Affine, LoopVar, MinExpr, extent_bound, extent_text
from .errors import NkiError, location_override, user_loc, user_source_line


class DType:
    def __init__(self, name, ir, size):
        self.name, self.ir, self.size = name, ir, size

    def __repr__(self):
        return "nl." + self.name


BF16 = DType("bfloat16", "bf16", 2)
F32 = DType("float32", "f32", 4)
UNSUPPORTED_DTYPES = ("float16", "float8_e4m3", "float8_e5m2", "tfloat32", "int8", "int16", "int32",
                      "uint8", "uint16", "uint32", "bool_")


def as_dtype(d, what="dtype"):
    """An NKI or numpy dtype as BF16/F32; anything else is an error."""
    if isinstance(d, DType):
        return d
    if isinstance(d, UnsupportedDType):
        raise NkiError("%s %s is not supported: tessel's tile IR has bf16 and f32 (docs/nki.md)" % (what, d.name))
    name = getattr(d, "__name__", None) or getattr(d, "name", None) or str(d)
    if name in ("float32", "float32_"):
        return F32
    if name in ("bfloat16",):
        return BF16
    raise NkiError("%s %s is not supported: tessel's tile IR has bf16 and f32 (docs/nki.md)" % (what, name))


class UnsupportedDType:
    def __init__(self, name):
        self.name = name


class Space:
    def __init__(self, name, ir):
        self.name, self.ir = name, ir

    def __repr__(self):
        return "nl." + self.name


SHARED_HBM = Space("shared_hbm", "hbm")
PRIVATE_HBM = Space("private_hbm", "hbm")
HBM = Space("hbm", "hbm")
SBUF = Space("sbuf", "sbuf")
PSUM = Space("psum", "psum")


class ParDim:
    """nl.par_dim(n): marks the partition dimension of an on-chip tensor's shape."""

    def __init__(self, size):
        self.size = size


# ----------------------------------------------------------------------------
# The recorded tree


class Block:
    def __init__(self, parent_loop=None):
        self.ops = []
        self.parent_loop = parent_loop


class Loop:
    def __init__(self, var, lo, hi, step, parallel, loc, parent):
        self.var, self.lo, self.hi, self.step, self.parallel = var, lo, hi, step, parallel
        self.loc = loc
        self.parent = parent  # the enclosing Block
        self.body = Block(self)


class Alloc:
    def __init__(self, tensor, loc):
        self.tensor, self.loc = tensor, loc
        self.bufs = 1


class Op:
    """An instruction: kind in dma, dma_transpose, matmul, transpose, activation,
    tensor_tensor, tensor_scalar, copy, memset; dst and srcs are Accesses."""

    def __init__(self, kind, dst, srcs, loc, **attrs):
        self.kind, self.dst, self.srcs, self.loc, self.attrs = kind, dst, srcs, loc, attrs
        self.block = None


class Access:
    """A tensor sliced by one (start, extent) range or (start, None) point per dimension
    (in the tensor's logical order)."""

    def __init__(self, tensor, idx, iotas=None, pattern=None):
        self.tensor, self.idx = tensor, idx
        self.iotas = iotas or {}  # dimension -> (ident, axis) of the nl.arange indexing it (a mask's key)
        # An access pattern (nl.mgrid / nl.arange indices combined, strided or over more than two
        # axes, or .ap()): the tile's dimensions in order, each (tensor dimension, extent, step); idx
        # then holds each dimension's start and the span its ranges cover.
        self.pattern = pattern

    def ir_idx(self):
        return [self.idx[d] for d in self.tensor.ir_dims]

    def range_dims(self):
        """The tensor dimension of each dimension of the tile, in the tile's order (IR order, partitions
        first on chip, unless a pattern orders them)."""
        if self.pattern is not None:
            return [d for d, _, _ in self.pattern]
        return [d for d in self.tensor.ir_dims if self.idx[d][1] is not None]

    @property
    def shape(self):
        if self.pattern is not None:
            return tuple(e for _, e, _ in self.pattern)
        return tuple(self.idx[d][1] for d in self.range_dims())

    def permuted(self, perm):
        """The same elements with the tile's dimensions in the order `perm` (a pattern)."""
        pattern = self.pattern
        if pattern is None:
            pattern = [(d, self.idx[d][1], 1) for d in self.range_dims()]
        return Access(self.tensor, self.idx, self.iotas, [pattern[i] for i in perm])

    def _pattern_text(self):
        written = []  # (tile position, dimension, extent, step): ranges in the order the IR writes them
        for pos, (d, e, st) in enumerate(self.pattern):
            written.append((self.tensor.ir_dims.index(d), pos, e, st))
        written.sort()
        parts = []
        for d in self.tensor.ir_dims:
            start = self.idx[d][0].text()
            ranges = [" +: %d%s" % (e, "" if st == 1 else " step %d" % st) for dd, _, e, st in written
                      if self.tensor.ir_dims[dd] == d]
            parts.append(start + "".join(ranges))
        order = [0] * len(written)
        for i, (_, pos, _, _) in enumerate(written):
            order[pos] = i
        text = "%%%s[%s]" % (self.tensor.name, ", ".join(parts))
        if order != sorted(order):
            text += " order (%s)" % ", ".join(str(i) for i in order)
        return text

    def text(self):
        if self.pattern is not None:
            return self._pattern_text()
        t = self.tensor
        if t.banks:
            # A PSUM tensor over several banks is the tile IR's folded buffer:
            # partition p of bank group g is row g * P + p (docs/nki.md).
            (p0, pe), (g, ge), (f0, fe) = self.idx
            if ge is not None:
                raise NkiError("a tile of PSUM tensor '%s' spans its dimension 1 (%d banks); index it with a "
                               "point" % (t.name, t.shape[1]))
            row = g * t.shape[0] + p0
            return "%%%s[%s +: %s, %s]" % (t.name, row.text(), extent_text(pe),
                                          f0.text() if fe is None else "%s +: %s" % (f0.text(), extent_text(fe)))
        parts = []
        for start, ext in self.ir_idx():
            parts.append(start.text() if ext is None else "%s +: %s" % (start.text(), extent_text(ext)))
        return "%%%s[%s]" % (self.tensor.name, ", ".join(parts))


def restrict_access(acc, extents, used=None):
    """`acc` with each dimension an nl.arange of a mask's term indexes cut to the term's prefix:
    extents maps (ident, axis) to the number of leading indices the mask keeps (masking.py);
    the keys applied are added to `used`."""
    if not extents or not any(key in extents for key in acc.iotas.values()):
        return acc
    idx = list(acc.idx)
    for d, key in acc.iotas.items():
        if key in extents:
            if used is not None:
                used.add(key)
            start, ext = idx[d]
            keep = MinExpr([ext, extents[key]])
            idx[d] = (start, keep.args[0].const if len(keep.args) == 1 else keep)
    return Access(acc.tensor, idx, acc.iotas)


# ----------------------------------------------------------------------------
# Tensors, views and lazy tiles (the objects a kernel holds)


class TileLike:
    """Arithmetic on tiles: `a + b`, `a * 2.0` are nl.add / nl.multiply."""

    def _binop(self, other, op, reverse=False):
        from . import language
        return language._elementwise(op, other, self) if reverse else language._elementwise(op, self, other)

    def __add__(self, o):
        return self._binop(o, "add")

    def __radd__(self, o):
        return self._binop(o, "add", True)

    def __sub__(self, o):
        return self._binop(o, "sub")

    def __rsub__(self, o):
        return self._binop(o, "sub", True)

    def __mul__(self, o):
        return self._binop(o, "mul")

    def __rmul__(self, o):
        return self._binop(o, "mul", True)

    def __truediv__(self, o):
        return self._binop(o, "divide")

    def __rtruediv__(self, o):
        return self._binop(o, "divide", True)

    def __pow__(self, o):
        return self._binop(o, "pow")

    def __neg__(self):
        return self._binop(-1.0, "mul")

    def broadcast_to(self, shape):
        from . import language
        return language.broadcast_to(self, shape)

    def _tile_name(self):
        t = getattr(self, "tensor", None) or self
        return getattr(t, "name", None) or getattr(self, "name_hint", "tile")

    def reshape(self, *shape, **k):
        """A view of the tensor in another shape (row-major, sharing its elements) whose dimensions
        split the tensor's: `g.reshape((1, D))` of a [D] weight, [P, A * B] as [P, A, B]. Indexed with
        slices, nl.ds and points, it is an access pattern of the tensor (docs/nki.md)."""
        if k:
            raise NkiError("'%s'.reshape: argument '%s' is not supported" % (self._tile_name(), next(iter(k))))
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        t = self._tensor() if isinstance(self, Lazy) else self
        if not isinstance(t, Tensor):
            raise NkiError("'%s'.reshape of a slice is not supported; reshape the tensor, then index it"
                           % self._tile_name())
        return ReshapedView(t, shape)

    def view(self, *a, **k):
        raise NkiError("'%s'.view is not supported: tessel's tile IR accesses a tensor in its declared shape and "
                       "dtype" % self._tile_name())

    def ap(self, pattern, offset=0, **k):
        """NKI's access pattern `[[partition step, partitions], [step, count], ...]` in elements of the
        tensor, from element `offset`: each free [step, count] a range of the dimension whose stride
        divides step (the outermost that holds it), as the tile IR's access patterns (docs/nki.md)."""
        if k:
            raise NkiError("'%s'.ap: argument '%s' is not supported" % (self._tile_name(), next(iter(k))))
        t = self._tensor() if isinstance(self, Lazy) else self
        if not isinstance(t, Tensor):
            raise NkiError("'%s'.ap of a slice is not supported; call .ap on the tensor (with offset=)"
                           % self._tile_name())
        return View(ap_access(t, pattern, offset))


class Tensor(TileLike):
    def __init__(self, shape, dtype, space, name, loc, pdim=0, role="buffer"):
        self.shape = tuple(shape)
        self.dtype = dtype
        self.space = space  # "hbm", "sbuf", "psum"
        self.name = name
        self.loc = loc
        self.pdim = pdim
        self.role = role  # "input", "output", "scratch" (hbm alloc), "buffer" (on chip)
        self.block = None  # where it is allocated (None for arguments)
        self.written = False
        self.read = False
        n = len(self.shape)
        self.ir_dims = [pdim] + [d for d in range(n) if d != pdim] if space != "hbm" else list(range(n))
        self.banks = False  # a PSUM [P, G, F] tensor of G banks (Tracer.alloc)
        self.slots = None  # the buffer count a modulo allocation fixes (modalloc.py)
        self.address = None  # its base address (bytes per partition)
        self.mod = None  # modalloc.ModTensor: a modulo-allocated tensor's per-iteration tile

    @property
    def ndim(self):
        return len(self.shape)

    def full(self):
        if self.mod is not None:
            raise NkiError("modulo-allocated '%s' is indexed by its block first (t[i, ...])" % self.name)
        return Access(self, [(Affine({}, 0), s) for s in self.shape])

    def __getitem__(self, key):
        return View(index_access(self, key))

    def __setitem__(self, key, value):
        tr = current()
        tr.assign(tr.in_scope(index_access(self, key)), value)

    def __iadd__(self, other):
        current().update_inplace(self.full(), "add", other)
        return self

    def __imul__(self, other):
        current().update_inplace(self.full(), "mul", other)
        return self

    def __isub__(self, other):
        current().update_inplace(self.full(), "sub", other)
        return self


    def __repr__(self):
        return "<%s tensor %s %s %s>" % (self.space, self.name, self.dtype.ir, list(self.shape))


class View(TileLike):
    """A slice of a tensor (what `t[...]` returns)."""

    def __init__(self, access, applied=False):
        self.access = access
        self.applied = applied  # the result of an in-place `t[i] += x`, already recorded

    @property
    def shape(self):
        return self.access.shape

    @property
    def dtype(self):
        return self.access.tensor.dtype

    @property
    def tensor(self):
        return self.access.tensor

    def __getitem__(self, key):
        raise NkiError("indexing a slice again is not supported; index the tensor once")

    def __setitem__(self, key, value):
        raise NkiError("assigning into a slice of a slice is not supported; index the tensor once")

    def __iadd__(self, other):
        current().update_inplace(self.access, "add", other)
        return View(self.access, applied=True)

    def __imul__(self, other):
        current().update_inplace(self.access, "mul", other)
        return View(self.access, applied=True)

    def __isub__(self, other):
        current().update_inplace(self.access, "sub", other)
        return View(self.access, applied=True)


class ReshapedView(View):
    """`t.reshape(shape)`: indexing it gives an access pattern of `t`, each new dimension a range of
    the tensor dimension its group splits (steps: the sizes of the later dimensions of the group)."""

    def __init__(self, tensor, shape):
        if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in shape):
            raise NkiError("'%s'.reshape(%r): the shape must be positive integers" % (tensor.name, tuple(shape)))
        self.new_shape = tuple(shape)
        self.base = tensor
        self.group = _split_groups(tensor, self.new_shape)  # new dim -> (tensor dim, step)
        View.__init__(self, self._access((slice(None),) * len(shape)))

    @property
    def shape(self):
        return self.new_shape

    def __getitem__(self, key):
        return View(self._access(key))

    def _access(self, key):
        t, n = self.base, len(self.new_shape)
        if not isinstance(key, tuple):
            key = (key,)
        if Ellipsis in key:
            i = key.index(Ellipsis)
            key = key[:i] + (slice(None),) * (n - len(key) + 1) + key[i + 1:]
        if len(key) > n:
            raise NkiError("%d indices for '%s' reshaped to %s" % (len(key), t.name, list(self.new_shape)))
        key = key + (slice(None),) * (n - len(key))
        start = [Affine({}, 0) for _ in range(t.ndim)]
        pattern = []
        for j, k in enumerate(key):
            d, step = self.group[j]
            if isinstance(k, slice):
                if k.step not in (None, 1):
                    raise NkiError("a strided slice of a reshaped tensor is not supported")
                lo = Affine.of(0 if k.start is None else k.start)
                ext = Affine.of(self.new_shape[j] if k.stop is None else k.stop) - lo
                if not ext.is_const():
                    raise NkiError("slice of reshaped '%s' has no constant size" % t.name)
                start[d] = start[d] + lo * step
                pattern.append((d, ext.const, step))
            elif isinstance(k, Slice):
                size = k.size.const if isinstance(k.size, Affine) and k.size.is_const() else k.size
                if not isinstance(size, int) or isinstance(size, bool):
                    raise NkiError("nl.ds of a reshaped tensor needs a constant size")
                start[d] = start[d] + Affine.of(k.start) * step
                pattern.append((d, size, step))
            elif isinstance(k, (int, Affine)) and not isinstance(k, bool):
                start[d] = start[d] + Affine.of(k) * step
            else:
                raise NkiError("index a reshaped tensor with slices, nl.ds and points (not %s)" % type(k).__name__)
        idx = []
        for d in range(t.ndim):
            mine = [(e, st) for dd, e, st in pattern if dd == d]
            idx.append((start[d], sum((e - 1) * st for e, st in mine) + 1 if mine else None))
        _check_pattern(t, pattern)
        _check_static_bounds(t, idx)
        return Access(t, idx, {}, pattern)


def _split_groups(t, shape):
    """For each dimension of `shape`, the dimension of `t` it splits and its step in it; an error when
    the new shape merges dimensions (tessel's access patterns split them)."""
    groups, j = [], 0
    for d, size in enumerate(t.shape):
        members, prod = [], 1
        while j < len(shape) and (prod < size or (shape[j] == 1 and d == t.ndim - 1)):
            members.append(j)
            prod *= shape[j]
            j += 1
        if prod != size:
            raise NkiError("'%s'.reshape(%s): the new shape merges dimensions of %s; tessel's access patterns "
                           "only split a dimension into several" % (t.name, tuple(shape), list(t.shape)))
        step = 1
        for m in reversed(members):
            groups.append((m, d, step))
            step *= shape[m]
    if j != len(shape) or sorted(m for m, _, _ in groups) != list(range(len(shape))):
        raise NkiError("'%s'.reshape(%s): %d elements, the tensor has %s" % (t.name, tuple(shape), _prod(shape),
                                                                          list(t.shape)))
    return {m: (d, step) for m, d, step in groups}


def _prod(xs):
    out = 1
    for x in xs:
        out *= x
    return out


class Lazy(TileLike):
    """A tile an API returned, not yet written anywhere.

    `write(dst_access, mode)` records the op(s) producing it into dst; `space`,
    `dtype` and `shape` describe the fresh buffer it goes to when it is used
    as an operand."""

    def __init__(self, what, space, dtype, shape, write, name_hint):
        self.what, self.space, self.dtype, self.shape = what, space, dtype, tuple(shape)
        self._write = write
        self.name_hint = name_hint
        self.loc = user_loc()
        self.result = None  # the Access it was materialised into
        self.pending = True
        self.mask = None  # the prefix extents of the call's mask= (masking.py)
        self.mask_unused = set()  # those no operand of the call took: its assignment must
        self.mask_api = None  # the masked call (errors name it)

    def write(self, dst, mode=None):
        return self._write(dst, mode)

    def _tensor(self):
        """The buffer this tile was written to (written to a fresh one first if need be)."""
        acc = current().operand(self, "the indexed tile")
        if any(e is not None and e != acc.tensor.shape[d] for d, (_, e) in enumerate(acc.idx)) or \
                any(not s.is_const() or s.const for s, _ in acc.idx):
            raise NkiError("indexing a tile an API returned after it was written into a slice of '%s'; index "
                           "'%s' instead" % (acc.tensor.name, acc.tensor.name))
        return acc.tensor

    def __getitem__(self, key):
        return self._tensor()[key]

    def __setitem__(self, key, value):
        self._tensor()[key] = value


# ----------------------------------------------------------------------------
# Indexing


class Slice:
    """nl.ds(start, size)."""

    def __init__(self, start, size):
        self.start, self.size = start, size


class IotaIndex:
    """nl.arange(n) (+ an affine offset), broadcast to one axis of a tile with [:, None] / [None, :]."""

    def __init__(self, extent, offset=None, axis=None, ndim=1, ident=None, step=1):
        self.extent, self.offset = extent, offset if offset is not None else Affine({}, 0)
        self.axis, self.ndim = axis, ndim
        self.step = step  # nl.arange(start, stop, step)
        # Which nl.arange this is (kept through offsets): a mask's term restricts the
        # dimensions this index indexes (masking.py).
        self.ident = ident if ident is not None else object()

    def __getitem__(self, key):
        if not isinstance(key, tuple):
            key = (key,)
        full = [k for k in key if isinstance(k, slice)]
        if len(full) != 1 or any(k is not None and not isinstance(k, slice) for k in key) or \
                full[0] != slice(None):
            raise NkiError("nl.arange: only [:, None] and [None, :] broadcasts are supported")
        return IotaIndex(self.extent, self.offset, key.index(full[0]), len(key), self.ident, self.step)

    def as_index_expr(self):
        from .predicate import IndexExpr
        axis = 0 if self.axis is None else self.axis
        return IndexExpr({axis: self.step}, {axis: self.extent}, self.offset, self.ndim,
                         {axis: {(self.ident, axis)}})

    def _shift(self, other, sign=1):
        from .predicate import IndexExpr
        if isinstance(other, (IotaIndex, IndexExpr)):
            return self.as_index_expr()._combine(other, sign)
        return IotaIndex(self.extent, self.offset + sign * Affine.of(other), self.axis, self.ndim, self.ident,
                         self.step)

    def __add__(self, other):
        return self._shift(other)

    __radd__ = __add__

    def __sub__(self, other):
        return self._shift(other, -1)

    def __rsub__(self, other):
        return self.as_index_expr().__rsub__(other)

    def __neg__(self):
        return self.as_index_expr() * -1

    def __mul__(self, other):
        # Not an index any more (a strided one is refused where it indexes), but a mask's term.
        return self.as_index_expr() * other

    __rmul__ = __mul__

    def __lt__(self, other):
        return self.as_index_expr() < other

    def __le__(self, other):
        return self.as_index_expr() <= other

    def __gt__(self, other):
        return self.as_index_expr() > other

    def __ge__(self, other):
        return self.as_index_expr() >= other


def _norm_key(t, key):
    if not isinstance(key, tuple):
        key = (key,)
    if any(k is Ellipsis for k in key):
        i = key.index(Ellipsis)
        fill = t.ndim - (len(key) - 1)
        key = key[:i] + (slice(None),) * fill + key[i + 1:]
    if len(key) > t.ndim:
        raise NkiError("%d indices for tensor '%s' of rank %d" % (len(key), t.name, t.ndim))
    return key + (slice(None),) * (t.ndim - len(key))


def _partition_vector(idx):
    """A 1-D tile along the partitions (`A[c0:c0 + 128, i]`, `m[:, 0]`: NKI's [P] vectors, the
    per-partition operands and reduction results of the tutorials) is the [P, 1] tile the point after
    its range selects: the same elements, as a 2-D tile of the IR."""
    ranges = [d for d, (_, e) in enumerate(idx) if e is not None]
    if len(ranges) != 1:
        return
    later = [d for d in range(ranges[0] + 1, len(idx)) if idx[d][1] is None]
    if later:
        idx[later[0]] = (idx[later[0]][0], 1)


def _needs_pattern(key):
    """Whether indices combine, stride or span more than two tile axes (an access pattern)."""
    for k in key:
        if type(k).__name__ == "IndexExpr" and k.coefs:
            return True
        if isinstance(k, IotaIndex) and (k.ndim > 2 or k.step != 1):
            return True
    return False


def _pattern_access(t, key):
    """`t[key]` with nl.mgrid / nl.arange indices over any number of tile axes, each index an affine
    combination of them (`2 * i_h + i_kh`, `i_f2 * F1 + i_f1`): one tile dimension per axis, in the
    axes' order (docs/nki.md, "Access patterns")."""
    pieces, idx = {}, []
    for d, k in enumerate(key):
        if isinstance(k, IotaIndex):
            k = k.as_index_expr()
        if isinstance(k, (slice, Slice)):
            raise NkiError("index %d of '%s' is a slice among nl.arange/nl.mgrid indices; index every "
                           "dimension of an access pattern with them (or with a point)" % (d, t.name))
        if type(k).__name__ != "IndexExpr":
            if isinstance(k, bool) or not isinstance(k, (int, Affine)) and not hasattr(k, "__index__"):
                raise NkiError("index of type %s is not supported in an access pattern (nl.arange/nl.mgrid "
                               "indices, integers and loop variables)" % type(k).__name__)
            idx.append((Affine.of(k if isinstance(k, (int, Affine)) else int(k)), None))
            continue
        for a, c in sorted(k.coefs.items()):
            if c < 0:
                raise NkiError("index %d of '%s' runs backwards along a tile axis (coefficient %d); access "
                               "patterns take positive steps" % (d, t.name, c))
            if a in pieces:
                raise NkiError("tile axis %d indexes two dimensions of '%s' (a diagonal); an access pattern "
                               "gives each axis one dimension" % (a, t.name))
            pieces[a] = (d, k.extents[a], c)
        idx.append((k.offset, None))
    pattern = [pieces[a] for a in sorted(pieces)]
    for d in range(t.ndim):
        mine = [(e, st) for dd, e, st in pattern if dd == d]
        if mine:
            idx[d] = (idx[d][0], sum((e - 1) * st for e, st in mine) + 1)
    _check_pattern(t, pattern)
    return Access(t, idx, {}, pattern)


def _check_pattern(t, pattern):
    """On chip, the partitions are the tile's first axis, one contiguous range; 2 to 8 axes."""
    if t.space != "hbm":
        first = pattern[0] if pattern else None
        if not first or first[0] != t.pdim or first[2] != 1 or sum(1 for p in pattern if p[0] == t.pdim) != 1:
            raise NkiError("the access pattern of '%s' must keep the partition dimension as the tile's first "
                           "axis, one contiguous range" % t.name)
    if len(pattern) < 2 or len(pattern) > 8:
        raise NkiError("the access pattern of '%s' has %d tile axes; tessel takes 2 to 8" % (t.name, len(pattern)))


def ap_access(t, pattern, offset):
    """The Access of `t.ap(pattern, offset)`."""
    if not isinstance(pattern, (list, tuple)) or len(pattern) < 2 or \
            not all(isinstance(e, (list, tuple)) and len(e) == 2 and
                    all(isinstance(v, int) and not isinstance(v, bool) for v in e) for e in pattern):
        raise NkiError("'%s'.ap: the pattern must be a list of at least two [step, count] pairs of integers"
                       % t.name)
    if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
        raise NkiError("'%s'.ap: offset must be a non-negative integer" % t.name)
    dims = list(t.ir_dims)
    stride = {}
    st = 1
    for d in reversed(dims):
        stride[d] = st
        st *= t.shape[d]
    start = {}
    rest = offset
    for d in dims:
        start[d], rest = divmod(rest, stride[d])
    pieces = [(dims[0], pattern[0][1], 1)] if t.space != "hbm" else []
    for step, count in pattern[(1 if t.space != "hbm" else 0):]:
        if count < 1 or step < 0:
            raise NkiError("'%s'.ap: [%d, %d] needs a positive count and a non-negative step" % (t.name, step, count))
        fit = [d for d in dims[(1 if t.space != "hbm" else 0):] if step % stride[d] == 0 and
               (count - 1) * (step // stride[d]) < t.shape[d]]
        if count > 1 and (not fit or step == 0):
            raise NkiError("'%s'.ap: [%d, %d] steps across the tensor's dimensions %s; tessel's access patterns "
                           "step within one dimension" % (t.name, step, count, list(t.shape)))
        d = fit[0] if count > 1 else dims[-1]
        pieces.append((d, count, max(1, step // stride[d])))
    idx = []
    for d in range(t.ndim):
        mine = [(e, s) for dd, e, s in pieces if dd == d]
        span = sum((e - 1) * s for e, s in mine) + 1
        if start[d] + span > t.shape[d]:
            raise NkiError("'%s'.ap: the pattern leaves dimension %d (size %d) from offset %d" % (t.name, d,
                                                                                               t.shape[d], offset))
        idx.append((Affine({}, start[d]), span if mine else None))
    acc = Access(t, idx, {}, pieces)
    if t.space != "hbm" and pieces[0][1] > t.shape[dims[0]]:
        raise NkiError("'%s'.ap: %d partitions, the tensor has %d" % (t.name, pieces[0][1], t.shape[dims[0]]))
    return acc


def index_access(t, key):
    """The Access `t[key]`: ranges from slices, nl.ds and nl.arange; points from integers
    and loop variables."""
    if t.mod is not None:
        from . import modalloc
        t, key = modalloc.resolve(t, key)
    key = _norm_key(t, key)
    if _needs_pattern(key):
        acc = _pattern_access(t, key)
        _check_static_bounds(t, acc.idx)
        return acc
    idx = []
    iota_axes = []
    iotas = {}
    for d, k in enumerate(key):
        size = t.shape[d]
        if isinstance(k, slice):
            if k.step not in (None, 1):
                raise NkiError("a strided slice is not supported (tiles are contiguous)")
            start = Affine.of(0 if k.start is None else k.start)
            stop = Affine.of(size if k.stop is None else k.stop)
            ext = stop - start
            if not ext.is_const():
                raise NkiError("slice %s:%s of '%s' has no constant size" % (start.text(), stop.text(), t.name))
            idx.append((start, ext.const))
        elif isinstance(k, Slice):
            size = k.size.const if isinstance(k.size, Affine) and k.size.is_const() else k.size
            if not isinstance(size, (int, MinExpr)) or isinstance(size, bool):
                raise NkiError("nl.ds size must be a constant integer or min() of one and loop variables")
            idx.append((Affine.of(k.start), size))
        elif isinstance(k, IotaIndex):
            idx.append((k.offset, k.extent))
            iota_axes.append((d, k.axis))
            iotas[d] = (k.ident, 0 if k.axis is None else k.axis)
        elif isinstance(k, (int, Affine)) and not isinstance(k, bool):
            idx.append((Affine.of(k), None))
        else:
            try:
                import numpy as np
                if isinstance(k, np.integer):
                    idx.append((Affine.of(int(k)), None))
                    continue
            except ImportError:
                pass
            raise NkiError("index of type %s is not supported (slices, nl.ds, nl.arange, integers and "
                           "loop variables)" % type(k).__name__)
    _partition_vector(idx)
    axes = [a for _, a in iota_axes if a is not None]
    if axes != sorted(axes):
        raise NkiError("nl.arange indices in transposed order are not supported (a tile's partition "
                       "index comes first)")
    acc = Access(t, idx, iotas)
    _check_static_bounds(t, idx)
    return acc


def _check_static_bounds(t, idx):
    for d, (start, ext) in enumerate(idx):
        if start.is_const():
            end = start.const + (extent_bound(ext) if ext is not None else 1)
            if start.const < 0 or end > t.shape[d]:
                raise NkiError("index out of bounds: dimension %d of '%s' has size %d, the access covers "
                               "[%d, %d)" % (d, t.name, t.shape[d], start.const, end))


# ----------------------------------------------------------------------------
# Layout labels: each dimension of each tensor is a node; ops unify the tile
# dimensions they relate. Each class becomes one label of the tile IR.


class Labels:
    def __init__(self):
        self.parent = {}
        self.members = {}
        self.dims = {}  # root -> {id(tensor): its dimension in the class} (one per tensor)
        self.hint = {}

    def find(self, n):
        if n not in self.parent:
            self.parent[n] = n
            self.members[n] = [n]
            self.dims[n] = {id(n[0]): n[1]}
        while self.parent[n] != n:
            self.parent[n] = self.parent[self.parent[n]]
            n = self.parent[n]
        return n

    def union(self, a, b, hint=None):
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            if len(self.members[ra]) < len(self.members[rb]):
                ra, rb = rb, ra
            tensors = self.dims[ra]
            for t, d in self.members[rb]:
                if id(t) in tensors and tensors[id(t)] != d:
                    raise NkiError(
                        "tessel's tile IR gives each dimension a layout label, and this op would make "
                        "dimensions %d and %d of '%s' the same logical dimension (a buffer used in two "
                        "roles, or a square transpose back into its source); use separate buffers"
                        % (tensors[id(t)], d, t.name))
            self.parent[rb] = ra
            self.members[ra].extend(self.members.pop(rb))
            tensors.update(self.dims.pop(rb))
            h = self.hint.pop(rb, None)
            if ra not in self.hint and h:
                self.hint[ra] = h
        if hint and ra not in self.hint:
            self.hint[ra] = hint


# ----------------------------------------------------------------------------
# The tracer


_current = None


def current():
    if _current is None:
        raise NkiError("an NKI API was called outside a traced kernel")
    return _current


_NAME_RE = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?::[^=]*)?(\[[^=]*\])?\s*(\+|-|\*)?=[^=]")
_FOR_RE = re.compile(r"^\s*for\s+([A-Za-z_]\w*)\s+in\b")


class Tracer:
    def __init__(self, geometry, progress=None):
        self.geometry = geometry
        self.progress = progress
        self.root = Block()
        self.block = self.root
        self.tensors = []
        self.args = []
        self.pending = []
        self.labels = Labels()
        self.names = set()
        self.next_suffix = {}
        self.deferred_errors = []
        self.loops_open = 0
        self.sbuf_allocation = None  # "direct" or "auto": how the kernel's SBUF tensors are allocated
        self.loc_override = None  # the line that created the lazy tile being written
        self.writing_lazy = 0  # > 0 while a lazy tile's ops are recorded
        self.mask = None  # the prefix extents of the mask= of the call being traced (masking.py)
        self.mask_used = set()  # the keys of self.mask some operand's dimension took
        # The SPMD launch (spmd.py): the grid, its loops' variables, the body of the innermost grid
        # loop (the kernel's top level), the first grid loop, --grid, the launcher run with -k (if
        # any) and where it launched the kernel.
        self.grid, self.grid_ids, self.top, self.grid_first = None, [], None, None
        self.cli_grid, self.launcher, self.launched = (), None, None
        self.in_kernel = False  # while the kernel runs (an nki.jit function it calls is a sub-kernel)

    # -- activation ----------------------------------------------------------
    def __enter__(self):
        global _current
        _current = self
        return self

    def __exit__(self, *exc):
        global _current
        _current = None

    # -- names ---------------------------------------------------------------
    def unique(self, hint):
        hint = re.sub(r"[^A-Za-z0-9_.]", "_", hint) or "t"
        if hint[0].isdigit():
            hint = "t" + hint
        # Suffixes below the last one a hint got are taken (names are never
        # released): start from there, not from 1, or n tiles of one name cost n^2.
        name, i = hint, self.next_suffix.get(hint, 1)
        if i > 1:
            name = "%s%d" % (hint, i - 1)
        while name in self.names:
            name = "%s%d" % (hint, i)
            i += 1
        self.next_suffix[hint] = i
        self.names.add(name)
        return name

    @staticmethod
    def assigned_name(default):
        """The variable the current source line assigns to (`x = nl.load(...)`), else default."""
        m = _NAME_RE.match(user_source_line())
        return m.group(1) if m and not m.group(2) and not m.group(3) else default

    # -- tensors -------------------------------------------------------------
    def new_tensor(self, shape, dtype, space, name_hint, pdim=0, role="buffer", loc=None):
        if len(shape) == 0:
            raise NkiError("a tensor needs at least one dimension")
        for s in shape:
            if not isinstance(s, int) or isinstance(s, bool) or s <= 0:
                raise NkiError("tensor dimensions must be positive integers, got %r" % (s,))
        t = Tensor(shape, dtype, space, self.unique(name_hint), loc or self.loc_override or user_loc(), pdim, role)
        self.tensors.append(t)
        if role == "input":
            self.args.append(t)
        return t

    def alloc(self, shape, dtype, space, name_hint, pdim=0, loc=None):
        """A buffer allocated where the kernel is now (a fresh one per loop iteration)."""
        top = space == "hbm" and self.block is self.top
        if space == "hbm":
            role = "output" if self.block is self.root or top else "scratch"
        else:
            role = "buffer"
        t = self.new_tensor(shape, dtype, space, name_hint, pdim, role, loc)
        if top:
            # nl.shared_hbm at an SPMD kernel's top level: one tensor for every instance (spmd.py).
            t.block = self.root
            self.root.ops.insert(self.root.ops.index(self.grid_first), Alloc(t, t.loc))
            return t
        if space != "hbm":
            p = t.shape[pdim]
            P = self.geometry["partitions"]
            if p > P and p % P:
                raise NkiError("partition dimension %d of '%s' is larger than %d partitions and not a multiple "
                               "of it" % (p, t.name, P))
        g = self.geometry
        if space == "psum" and len(t.shape) == 3 and pdim == 0 and t.shape[0] == g["partitions"] and \
                t.shape[2] * 4 <= g["psum_bank_bytes"] < t.shape[1] * t.shape[2] * 4:
            t.banks = True
        t.block = self.block
        self.append(Alloc(t, t.loc))
        return t

    # -- lazies --------------------------------------------------------------
    def lazy(self, *a, **k):
        z = Lazy(*a, **k)
        self.pending.append(z)
        return z

    def consume(self, values):
        """Takes the lazies among `values` off the pending list (the caller uses them),
        then materialises the other pending ones."""
        for v in values:
            if isinstance(v, Lazy) and v.pending:
                v.pending = False
                self.pending.remove(v)
        self.flush()

    def flush(self):
        while self.pending:
            z = self.pending.pop(0)
            z.pending = False
            self.materialise(z)

    def materialise(self, z):
        if z.result is None:
            t = self.alloc(z.shape, z.dtype, z.space, z.name_hint, loc=z.loc)
            z.result = t.full()
            self.write_lazy(z, z.result, None)
        return z.result

    def write_lazy(self, z, dst, mode):
        # The lazies still pending were created after z and do not read it (reading it would have
        # materialised it): they are recorded after z's ops, in program order, not while z is written.
        saved, self.loc_override = self.loc_override, z.loc
        location_override[0] = z.loc
        self.writing_lazy += 1
        if z.mask:
            # The call's mask= holds for its result's assignment too (masking.py).
            used = set()
            z.result = dst = restrict_access(dst, z.mask, used)
            if z.mask_unused - used:
                from .masking import unused_mask
                unused_mask(z.mask_api)
        try:
            z.write(dst, mode)
        finally:
            self.writing_lazy -= 1
            self.loc_override = saved
            location_override[0] = saved

    # -- operands ------------------------------------------------------------
    def operand(self, x, what="operand"):
        """The Access an API operand denotes (materialising a lazy tile)."""
        if isinstance(x, Tensor):
            return self.in_scope(x.full())
        if isinstance(x, View):
            return self.in_scope(restrict_access(x.access, self.mask, self.mask_used))
        if isinstance(x, Lazy):
            if x.pending:
                self.consume([x])
            return self.in_scope(self.materialise(x))
        raise NkiError("%s must be a tile (a tensor, a slice of one, or an NKI op's result), got %s"
                       % (what, type(x).__name__))

    def in_scope(self, acc):
        """`acc`, if its tensor is visible here: a buffer allocated in a loop body
        exists only in that body (one per iteration)."""
        t = acc.tensor
        if t.block is None:
            return acc
        b = self.block
        while b is not None and b is not t.block:
            b = b.parent_loop.parent if b.parent_loop else None
        if b is None:
            raise NkiError("'%s' was allocated inside a loop (%s:%d) and is used after it; tessel's tile IR "
                           "has one '%s' per iteration, so allocate it before the loop"
                           % (t.name, t.loc[0], t.loc[1], t.name))
        return acc

    # -- recording -----------------------------------------------------------
    def record(self, kind, dst, srcs, loc=None, **attrs):
        if not self.writing_lazy:
            self.flush()
        op = Op(kind, dst, srcs, loc or self.loc_override or user_loc(), **attrs)
        op.block = self.block
        if not dst.tensor.written:
            dst.tensor.written = op.loc
        for s in srcs:
            s.tensor.read = True
        self.append(op)
        return op

    def append(self, op):
        self.block.ops.append(op)
        if self.progress:
            self.progress.recorded()

    def unify(self, a, da, b, db, hint=None):
        self.labels.union((a.tensor, da), (b.tensor, db), hint)

    def unify_tiles(self, dst, src, swap=False):
        rd, rs = dst.range_dims(), src.range_dims()
        if swap:
            rs = rs[::-1]
        for x, y in zip(rd, rs):
            # A dimension an access pattern splits into several tile dimensions is reshaped: its
            # label relates to none of them alone (docs/tile-ir.md, rule 15).
            if rd.count(x) == 1 and rs.count(y) == 1:
                self.unify(dst, x, src, y)

    # -- loops ---------------------------------------------------------------
    def open_loop(self, lo, hi, step, parallel):
        self.flush()
        m = _FOR_RE.match(user_source_line())
        var = LoopVar(self.unique(m.group(1) if m else "i"))
        var.lo, var.hi, var.step = lo, hi, step  # a mask's range (predicate.py)
        loop = Loop(var, lo, hi, step, parallel, user_loc(), self.block)
        self.append(loop)
        self.block = loop.body
        self.loops_open += 1
        return loop, Affine({var: 1}, 0)

    def close_loop(self, loop, completed):
        self.flush()
        if self.block is not loop.body:
            return
        self.block = loop.parent
        self.loops_open -= 1
        if not completed:
            self.deferred_errors.append(NkiError(
                "a traced loop was left early (break, return or an exception); tessel traces the body "
                "once as an IR loop", loop.loc))

    # -- assignment ----------------------------------------------------------
    def assign(self, dst, value):
        """`dst[...] = value`."""
        if isinstance(value, View) and value.applied and value.access.tensor is dst.tensor:
            return  # `t[i] += x` was recorded by View.__iadd__
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            self.consume([])
            from . import isa
            isa.memset_access(dst, float(value))
            return
        if isinstance(value, Lazy) and value.pending and value.space == dst.tensor.space:
            self.consume([value])
            value.result = dst
            self.write_lazy(value, dst, "assign")
            return
        src = self.operand(value, "the assigned value")
        from . import isa
        isa.copy_access(dst, src)

    def update_inplace(self, dst, op, value):
        """`dst op= value`: a matmul result accumulates into PSUM; otherwise a vector op."""
        if isinstance(value, Lazy) and value.pending and value.what == "matmul" and op == "add" and \
                dst.tensor.space == "psum":
            self.consume([value])
            value.result = dst
            self.write_lazy(value, dst, "iadd")
            return
        from . import isa
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            self.consume([])
            isa.tensor_scalar_access(dst, dst, op, float(value))
            return
        self.consume([value])
        src = self.operand(value)
        isa.tensor_tensor_access(dst, dst, src, op)

"""nki.isa's reductions and index-pattern ops: tensor_reduce, tensor_partition_reduce, iota,
affine_select (docs/ops.md, "Reductions, per-partition operands and masks"). Both API generations: the legacy one returns the
tile (`r = nisa.tensor_reduce(nl.max, x, axis=1)`), the current one writes `dst` given first."""
import math

from .affine import Affine, extent_bound
from .errors import NkiError
from .isa import (_bind, _check_space, _dst_or_lazy, _is_tile, _reject, _same_shape, _split_dst, _tile,
                  alu_name, per_partition)
from .predicate import IndexExpr, Predicate
from .tracer import Tracer, as_dtype, current

_COMPARISONS = ("is_equal", "not_equal", "is_gt", "is_ge", "is_lt", "is_le")


def reduce_axis(api, axis, ndim=2):
    """The reduced axes of a tile of `ndim` dimensions, sorted: the free axis of a 2-D tile (1, -1, [1],
    (1,)), or free axes of a larger one (`axis=[3, 4]`); a partition reduction is an error."""
    axes = list(axis) if isinstance(axis, (list, tuple)) else [axis]
    if not axes or not all(isinstance(a, int) and not isinstance(a, bool) for a in axes):
        raise NkiError("%s: axis=%r is not supported (integers naming free axes)" % (api, axis))
    axes = sorted(set(a + ndim if a < 0 else a for a in axes))
    if 0 in axes:
        raise NkiError("%s: axis=%r is not supported: tessel reduces along the free axis of a 2-D tile "
                       "(axis=1); a reduction over partitions is a matmul against a ones vector or "
                       "nisa.tensor_partition_reduce" % (api, axis))
    if axes[-1] >= ndim:
        raise NkiError("%s: axis=%r is outside a %d-D tile" % (api, axis, ndim))
    return axes


def tensor_reduce_access(dst, src, alu, op="tensor_reduce"):
    """dst[p, 0] = fold(alu, src[p, :]), in fp32; a destination of more dimensions folds the source's
    trailing dimensions (dst[p, i, j] = fold(src[p, i, j, :, :]))."""
    if alu not in ("add", "max", "min"):
        raise NkiError("%s: a reduction folds with add, max or min, not %s" % (op, alu))
    _check_space(dst, ("sbuf",), op, "the destination")
    _check_space(src, ("sbuf", "psum"), op, "the source")
    ss, ds = _tile(src, "the source", nd=True), _tile(dst, "the destination", nd=True)
    if len(ds) == 2 and ds[1] == 1:
        per_partition(dst, dst, op, "the destination")
        kept = 1
    elif len(ds) < len(ss) and tuple(ds) == tuple(ss[:len(ds)]):
        kept = len(ds)
    else:
        raise NkiError("%s: destination tile %s: the reduction of a %s tile is [P, 1] or its leading "
                       "dimensions" % (op, list(ds), list(ss)))
    if ss[0] != ds[0]:
        raise NkiError("%s: source partitions %s differ from the destination's %s" % (op, ss[0], ds[0]))
    tr = current()
    tr.record("tensor_reduce", dst, [src], alu=alu)
    for x, y in zip(dst.range_dims()[:kept], src.range_dims()[:kept]):
        tr.unify(dst, x, src, y)


def reduce_tile(api, alu, x, dtype=None, mean=False, dst=None, axis=1):
    """The lazy reduction of tile `x` along `axis` (or its write into `dst`): [P, 1] for a 2-D tile, the
    kept axes of a larger one (the reduced ones moved last); a mean divides the sum by their size."""
    tr = current()
    tr.consume([x, dst])
    src = tr.operand(x, "data")
    shape = _tile(src, "data", nd=True)
    axes = reduce_axis(api, axis, len(shape))
    kept = [i for i in range(len(shape)) if i not in axes]
    if kept + axes != list(range(len(shape))):
        src = src.permuted(kept + axes)
    count = 1
    for a in axes:
        count *= extent_bound(shape[a])
    out = (shape[0], 1) if kept == [0] else tuple(shape[i] for i in kept)
    dt = as_dtype(dtype) if dtype is not None else src.tensor.dtype

    def write(d, mode):
        tensor_reduce_access(d, src, alu, op=api)
        if mean:
            from .isa import tensor_scalar_access
            tensor_scalar_access(d, d, "divide", float(count), op=api)
    return _dst_or_lazy(api, dst, alu, "sbuf", dt, out, write)


def tensor_reduce(*args, **kwargs):
    api = "nisa.tensor_reduce"
    dst, rest = _split_dst(api, args, kwargs, 0)  # the current API: dst first
    v = _bind(api, rest, kwargs, ["op", "data", "axis", "mask", "dtype", "negate", "keepdims"],
              ["op", "data", "axis"])
    if v.get("negate"):
        raise NkiError("%s: negate=True is not supported by tessel's tensor_reduce" % api)
    v.pop("keepdims", None)  # the result is [P, 1] either way (docs/nki.md)
    _reject(api, v, ("op", "data", "axis", "dtype"))
    return reduce_tile(api, alu_name(v["op"], api), v["data"], v.get("dtype"), dst=dst, axis=v["axis"])


def tensor_partition_reduce_access(dst, src, alu, op="tensor_partition_reduce"):
    """dst[0, f] = fold(alu, src[:, f]) in fp32, on the GpSimd engine (SBUF only)."""
    if alu not in ("add", "max"):
        raise NkiError("%s: a partition reduction folds with add or max, not %s" % (op, alu))
    _check_space(dst, ("sbuf",), op, "the destination")
    _check_space(src, ("sbuf",), op, "the source")
    (dp, df), (sp, sf) = _tile(dst, "the destination"), _tile(src, "the source")
    if dp != 1 or df != sf:
        raise NkiError("%s: destination tile %s should be [1, %s] (the source's columns folded over its "
                       "partitions)" % (op, [dp, df], sf))
    tr = current()
    tr.record("tensor_partition_reduce", dst, [src], alu=alu)
    tr.unify(dst, dst.range_dims()[1], src, src.range_dims()[1])


def tensor_partition_reduce(*args, **kwargs):
    api = "nisa.tensor_partition_reduce"
    dst, rest = _split_dst(api, args, kwargs, 0)  # the current API: dst first
    v = _bind(api, rest, kwargs, ["op", "data", "mask", "dtype"], ["op", "data"])
    _reject(api, v, ("op", "data", "dtype"))
    alu = alu_name(v["op"], api)
    tr = current()
    tr.consume([v["data"], dst])
    src = tr.operand(v["data"], "data")
    _tile(src, "data")
    dtype = as_dtype(v["dtype"]) if v.get("dtype") is not None else src.tensor.dtype
    return _dst_or_lazy(api, dst, alu, "sbuf", dtype, (1, src.shape[1]),
                        lambda d, mode: tensor_partition_reduce_access(d, src, alu, op=api))


# ----------------------------------------------------------------------------
# iota and affine_select: offset + cp * p + cf * f over a 2-D tile


def _pattern(api, pattern, dst_free):
    """The free coefficient of a current-API pattern [[step, count]] (one free dimension)."""
    try:
        (step, count), = pattern
    except (TypeError, ValueError):
        raise NkiError("%s: pattern=%r is not supported (one free dimension: [[step, count]])" % (api, pattern))
    if count != dst_free:
        raise NkiError("%s: pattern count %r differs from the destination's free size %r" % (api, count, dst_free))
    return step


def _offset(v):
    """The current API's offset= (an index expression of loop variables; 0 when absent)."""
    return Affine.of(0 if v.get("offset") is None else v["offset"])


def iota_access(dst, offset, cp, cf, op="iota"):
    _check_space(dst, ("sbuf",), op, "the destination")
    _tile(dst, "the destination")
    current().record("iota", dst, [], offset=Affine.of(offset), partition=int(cp), free=int(cf))


def affine_select_access(dst, src, offset, cp, cf, cmp, fill, op="affine_select"):
    if cmp not in _COMPARISONS:
        raise NkiError("%s: cmp_op must be a comparison (nl.equal, nl.greater_equal, ...), got %s" % (op, cmp))
    _check_space(dst, ("sbuf",), op, "the destination")
    _check_space(src, ("sbuf",), op, "on_true_tile")
    _same_shape(op, dst, src)
    if isinstance(fill, bool) or not isinstance(fill, (int, float)) or math.isnan(fill):
        raise NkiError("%s: on_false_value must be a number, got %r" % (op, fill))
    tr = current()
    tr.record("affine_select", dst, [src], offset=Affine.of(offset), partition=int(cp), free=int(cf),
              cmp=cmp, fill=float(fill))
    tr.unify_tiles(dst, src)


def _expr_tile(api, expr):
    """(shape, offset, cp, cf) of an index expression over a 2-D tile (the legacy iota's argument)."""
    e = IndexExpr.of(expr)
    if e.ndim != 2 or any(a not in (0, 1) for a in e.coefs) or set(e.extents) != {0, 1}:
        raise NkiError("%s: the expression must span a 2-D tile's partition and free indices "
                       "(nl.mgrid[0:P, 0:F] or nl.arange(P)[:, None] with nl.arange(F)[None, :])" % api)
    return (e.extents[0], e.extents[1]), e.offset, e.coefs.get(0, 0), e.coefs.get(1, 0)


def iota(*args, **kwargs):
    api = "nisa.iota"
    tr = current()
    if "dst" in kwargs or (args and _is_tile(args[0])):
        v = _bind(api, args, kwargs, ["dst", "pattern", "offset", "channel_multiplier"], ["dst", "pattern"])
        d = tr.operand(v["dst"], "dst")
        cf = _pattern(api, v["pattern"], _tile(d, "dst")[1])
        iota_access(d, _offset(v), v.get("channel_multiplier") or 0, cf, op=api)
        return None
    v = _bind(api, args, kwargs, ["expr", "dtype", "mask"], ["expr", "dtype"])
    _reject(api, v, ("expr", "dtype"))
    shape, offset, cp, cf = _expr_tile(api, v["expr"])
    return tr.lazy("iota", "sbuf", as_dtype(v["dtype"]), shape,
                   lambda d, mode: iota_access(d, offset, cp, cf, op=api), Tracer.assigned_name("iota"))


def affine_select(*args, **kwargs):
    api = "nisa.affine_select"
    tr = current()
    if "pred" in kwargs or (args and isinstance(args[0], Predicate)):
        v = _bind(api, args, kwargs, ["pred", "on_true_tile", "on_false_value", "mask", "dtype"],
                  ["pred", "on_true_tile", "on_false_value"])
        _reject(api, v, ("pred", "on_true_tile", "on_false_value", "dtype"))
        if not isinstance(v["pred"], Predicate):
            raise NkiError("%s: pred must be a comparison of tile indices" % api)
        offset, cp, cf, cmp = v["pred"].select_form()
        dst = None
    else:
        dst, rest = (kwargs.pop("dst"), list(args)) if "dst" in kwargs else \
            ((args[0], list(args[1:])) if args and _is_tile(args[0]) else (None, args))
        if dst is None:
            raise NkiError("%s: give a predicate (pred=) or, in the current API, dst= with pattern=" % api)
        v = _bind(api, rest, kwargs, ["pattern", "offset", "channel_multiplier", "on_true_tile", "on_false_value",
                                      "cmp_op", "mask", "dtype"],
                  ["pattern", "on_true_tile", "on_false_value"])
        _reject(api, v, ("pattern", "offset", "channel_multiplier", "on_true_tile", "on_false_value", "cmp_op",
                         "dtype"))
        cmp = alu_name(v["cmp_op"], api) if v.get("cmp_op") is not None else "is_equal"  # NKI's default
        offset, cp = _offset(v), v.get("channel_multiplier") or 0
        cf = None
    tr.consume([v["on_true_tile"], dst])
    src = tr.operand(v["on_true_tile"], "on_true_tile")
    if cf is None:
        cf = _pattern(api, v["pattern"], _tile(src, "on_true_tile")[1])
    fill = v["on_false_value"]
    dtype = as_dtype(v["dtype"]) if v.get("dtype") is not None else src.tensor.dtype
    return _dst_or_lazy(api, dst, "select", "sbuf", dtype, src.shape,
                        lambda d, mode: affine_select_access(d, src, offset, cp, cf, cmp, fill, op=api))

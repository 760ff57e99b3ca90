"""nki.isa's per-partition recurrences on the vector engine: tensor_tensor_scan, bn_stats and bn_aggr
(docs/ops.md). Both API generations: the legacy one returns the tile, the current one writes `dst`
given first."""
from .errors import NkiError
from .isa import (_bind, _check_space, _dst_or_lazy, _leading_tiles, _reject, _same_shape, _space,
                  _split_dst, _tile, _tile_or_number, _unify_partitions, alu_name, per_partition)
from .tracer import as_dtype, current

# nl.tile_size.bn_stats_fmax: the most elements per partition one bn_stats reads (nki.isa.bn_stats).
BN_STATS_FMAX = 512


def tensor_tensor_scan_access(dst, a, b, op0, op1, initial, op="tensor_tensor_scan"):
    """dst[p, f] = op1(op0(a[p, f], dst[p, f - 1]), b[p, f]), dst[p, -1] = initial (a number or a
    [P, 1] tile)."""
    for t, what in ((dst, "the destination"), (a, "data0"), (b, "data1")):
        _tile(t, what)
    _check_space(dst, ("sbuf",), op, "the destination")
    for s, what in ((a, "data0"), (b, "data1")):
        _check_space(s, ("sbuf", "psum"), op, what)
        _same_shape(op, dst, s)
    if _space(a) == "psum" and _space(b) == "psum":
        raise NkiError("%s: data0 and data1 are both in PSUM; at most one may be" % op)
    initial = per_partition(dst, initial, op, "the initial value")
    tiles = [initial] if hasattr(initial, "tensor") else []
    tr = current()
    tr.record("tensor_tensor_scan", dst, [a, b] + tiles, op0=op0, op1=op1,
              initial=initial if tiles else float(initial))
    tr.unify_tiles(dst, a)
    tr.unify_tiles(dst, b)
    _unify_partitions(dst, tiles)


def _scan_dst(args, kwargs):
    """(dst or None, the other positional arguments): the current API passes `dst` first. Three
    leading tiles are dst, data0, data1 when a number or `initial=` follows, else the legacy
    data0, data1 and a tile initial value."""
    if "dst" in kwargs:
        return kwargs.pop("dst"), list(args)
    tiles = _leading_tiles(args)
    current_api = tiles >= 4 or (tiles == 3 and ("initial" in kwargs or (
        len(args) > 3 and isinstance(args[3], (int, float)) and not isinstance(args[3], bool))))
    return (args[0], list(args[1:])) if current_api else (None, list(args))


def tensor_tensor_scan(*args, **kwargs):
    api = "nisa.tensor_tensor_scan"
    dst, rest = _scan_dst(args, kwargs)
    v = _bind(api, rest, kwargs, ["data0", "data1", "initial", "op0", "op1", "reverse0", "reverse1", "dtype",
                                  "mask"], ["data0", "data1", "initial", "op0", "op1"])
    for r in ("reverse0", "reverse1"):
        if v.get(r):
            raise NkiError("%s: %s=True (the operands of an op swapped) is not supported by tessel's "
                           "tensor_tensor_scan" % (api, r))
    _reject(api, v, ("data0", "data1", "initial", "op0", "op1", "reverse0", "reverse1", "dtype"))
    op0, op1 = alu_name(v["op0"], api), alu_name(v["op1"], api)
    tr = current()
    tr.consume([v["data0"], v["data1"], v["initial"]])
    a, b = tr.operand(v["data0"], "data0"), tr.operand(v["data1"], "data1")
    initial = _tile_or_number(api, "initial", v["initial"])
    dtype = as_dtype(v["dtype"]) if v.get("dtype") is not None else a.tensor.dtype
    return _dst_or_lazy(api, dst, "scan", "sbuf", dtype, a.shape,
                        lambda d, mode: tensor_tensor_scan_access(d, a, b, op0, op1, initial, op=api))


def bn_access(kind, dst, src, op):
    """bn_stats: dst[P, 6] from src[P, F <= 512]; bn_aggr: dst[P, 2] from src[P, 3k]."""
    ds, ss = _tile(dst, "the destination"), _tile(src, "the source")
    _check_space(dst, ("sbuf",), op, "the destination")
    _check_space(src, ("sbuf", "psum"), op, "the source")
    want = 6 if kind == "bn_stats" else 2
    if ds[0] != ss[0] or ds[1] != want:
        raise NkiError("%s: destination tile %s should be [%s, %d] (the source's partitions, %s)"
                       % (op, list(ds), ss[0], want, "count, mean and variance * count of the even and the "
                          "odd elements" if want == 6 else "mean and variance"))
    if kind == "bn_stats" and ss[1] > BN_STATS_FMAX:
        raise NkiError("%s: the source has %s elements per partition; bn_stats reads at most %d "
                       "(nl.tile_size.bn_stats_fmax): call it per %d-element slice and aggregate the "
                       "results with one bn_aggr" % (op, ss[1], BN_STATS_FMAX, BN_STATS_FMAX))
    if kind == "bn_aggr" and isinstance(ss[1], int) and ss[1] % 3:
        raise NkiError("%s: the source has %s elements per partition, not (count, mean, variance * count) "
                       "triples (a multiple of 3)" % (op, ss[1]))
    tr = current()
    tr.record(kind, dst, [src])
    tr.unify(dst, dst.range_dims()[0], src, src.range_dims()[0])


def _bn_call(kind, args, kwargs):
    api = "nisa." + kind
    dst, rest = _split_dst(api, args, kwargs, 1)
    v = _bind(api, rest, kwargs, ["data", "mask", "dtype"], ["data"])
    _reject(api, v, ("data", "dtype"))
    tr = current()
    tr.consume([v["data"]])
    src = tr.operand(v["data"], "data")
    dtype = as_dtype(v["dtype"]) if v.get("dtype") is not None else src.tensor.dtype
    shape = (src.shape[0], 6 if kind == "bn_stats" else 2)
    return _dst_or_lazy(api, dst, kind, "sbuf", dtype, shape, lambda d, mode: bn_access(kind, d, src, api))


def bn_stats(*args, **kwargs):
    return _bn_call("bn_stats", args, kwargs)


def bn_aggr(*args, **kwargs):
    return _bn_call("bn_aggr", args, kwargs)


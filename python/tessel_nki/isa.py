"""The stand-in for nki.isa / neuronxcc.nki.isa.

Both API generations are accepted: the legacy one returns a new tile
(`t = nisa.nc_matmul(a, b)`), the current one writes a destination given
first (`nisa.nc_matmul(dst, a, b)`). The *_access functions check an op
against tessel's tile IR (docs/tile-ir.md) and record it.
"""
from .affine import extent_bound
from .errors import NkiError
from .predicate import check_mask
from .tracer import F32, Lazy, Tensor, Tracer, View, as_dtype, current

# ----------------------------------------------------------------------------
# Checks shared by the ops


def _space(a):
    return a.tensor.space


def _tile(a, what, nd=False):
    """The shape of tile `a`: 2-D, or with `nd` (DMA, copies and the vector and scalar engines'
    elementwise ops and reductions) 2-D to 8-D and possibly an access pattern."""
    r = a.range_dims()
    if nd and len(r) < 2:
        raise NkiError("%s of '%s' is a %d-D tile; tessel's tile IR takes tiles of 2 or more dimensions (a "
                       "partition range and a free one)" % (what, a.tensor.name, len(r)))
    if not nd and a.pattern is not None:
        raise NkiError("%s of '%s' is an access pattern (nl.mgrid / nl.arange indices combined, strided or "
                       "over more than two axes); this operation takes a 2-D tile of two contiguous ranges"
                       % (what, a.tensor.name))
    if not nd and len(r) != 2:
        raise NkiError("%s of '%s' is a %d-D tile; this operation takes 2-D tiles (exactly two sliced "
                       "dimensions; index the others with a point)" % (what, a.tensor.name, len(r)))
    if a.tensor.space != "hbm" and r[0] != a.tensor.pdim:
        raise NkiError("%s of '%s' indexes its partition dimension with a point; an on-chip tile keeps "
                       "the partition dimension" % (what, a.tensor.name))
    return a.shape


def _check_space(a, allowed, op, what):
    if _space(a) not in allowed:
        raise NkiError("%s: %s '%s' is in %s; it must be in %s" % (op, what, a.tensor.name, _space(a),
                                                                    " or ".join(allowed)))


def _same_shape(op, dst, src, swap=False):
    ds, ss = _tile(dst, "the destination", nd=not swap), _tile(src, "the source", nd=not swap)
    want = ss[::-1] if swap else ss
    if ds != want:
        raise NkiError("%s: destination tile %s and source tile %s%s differ in shape"
                       % (op, list(ds), list(ss), " (transposed)" if swap else ""))


def _record_elementwise(kind, dst, srcs, op, **attrs):
    tr = current()
    _check_space(dst, ("sbuf",), op, "the destination")
    for s in srcs:
        _check_space(s, ("sbuf", "psum"), op, "a source")
        _same_shape(op, dst, s)
    tr.record(kind, dst, srcs, **attrs)
    for s in srcs:
        tr.unify_tiles(dst, s)


# ----------------------------------------------------------------------------
# Recording one op into a destination access


def dma_access(dst, src, op="dma_copy", transpose=False):
    tr = current()
    spaces = (_space(dst), _space(src))
    if sorted(spaces) != ["hbm", "sbuf"]:
        raise NkiError("%s from %s to %s: tessel's DMA moves tiles between HBM and SBUF"
                       % (op, spaces[1], spaces[0]))
    if dst.tensor.dtype is not src.tensor.dtype:
        raise NkiError("%s: source dtype %s differs from destination dtype %s; tessel's DMA does not cast "
                       "(cast on chip with nl.copy(x, dtype=...))" % (op, src.tensor.dtype.name,
                                                                     dst.tensor.dtype.name))
    _same_shape(op, dst, src, transpose)
    tr.record("dma", dst, [src], transpose=transpose)
    tr.unify_tiles(dst, src, swap=transpose)


def matmul_access(dst, stationary, moving, mode, op="nc_matmul"):
    tr = current()
    g = tr.geometry
    _check_space(dst, ("psum",), op, "the result")
    _check_space(stationary, ("sbuf",), op, "the stationary operand")
    _check_space(moving, ("sbuf",), op, "the moving operand")
    (k, m), (k2, n) = _tile(stationary, "the stationary operand"), _tile(moving, "the moving operand")
    if stationary.tensor.dtype is not moving.tensor.dtype:
        raise NkiError("%s: the operands' dtypes differ (%s and %s)" % (op, stationary.tensor.dtype.name,
                                                                      moving.tensor.dtype.name))
    if k != k2:
        raise NkiError("%s: stationary [%d, %d] and moving [%d, %d] differ in the contraction (partition) "
                       "dimension" % (op, k, m, k2, n))
    if extent_bound(k) > g["max_contraction"] or extent_bound(m) > g["max_stationary"] or \
            extent_bound(n) > g["max_moving"]:
        raise NkiError("%s: stationary [%d, %d] x moving [%d, %d] exceeds the tensor engine's limits "
                       "(K <= %d, stationary free <= %d, moving free <= %d)"
                       % (op, k, m, k2, n, g["max_contraction"], g["max_stationary"], g["max_moving"]))
    if _tile(dst, "the result") != (m, n):
        raise NkiError("%s: result tile %s should be [%d, %d] (stationary free x moving free)"
                       % (op, list(dst.shape), m, n))
    tr.record("matmul", dst, [stationary, moving], mode=mode)
    (sk, sm), (mk, mn), (dm, dn) = stationary.range_dims(), moving.range_dims(), dst.range_dims()
    tr.unify(stationary, sk, moving, mk, "K")
    tr.unify(dst, dm, stationary, sm, "M")
    tr.unify(dst, dn, moving, mn, "N")


def transpose_access(dst, src, op="nc_transpose"):
    tr = current()
    _check_space(dst, ("psum",), op, "the result")
    _check_space(src, ("sbuf",), op, "the source")
    _same_shape(op, dst, src, swap=True)
    p, f = src.shape
    if extent_bound(f) > tr.geometry["partitions"]:
        raise NkiError("%s: the source's free size %d exceeds %d (it becomes the partitions)"
                       % (op, f, tr.geometry["partitions"]))
    tr.record("transpose", dst, [src])
    tr.unify_tiles(dst, src, swap=True)


def copy_access(dst, src, op="tensor_copy"):
    _record_elementwise("copy", dst, [src], op)


def per_partition(dst, t, op, what):
    """Checks `t` as a [P, 1] operand of `dst`'s partitions (a number passes unchanged)."""
    if not hasattr(t, "tensor"):
        return t
    _check_space(t, ("sbuf", "psum"), op, what)
    p, f = _tile(t, what)
    if f != 1 or p != _tile(dst, "the destination", nd=True)[0]:
        raise NkiError("%s: %s '%s' is a [%s, %s] tile; a per-partition operand is [%s, 1] (one value per "
                       "partition of the destination)" % (op, what, t.tensor.name, p, f, dst.shape[0]))
    return t


def _unify_partitions(dst, tiles):
    tr = current()
    for t in tiles:
        if hasattr(t, "tensor"):
            tr.unify(dst, dst.range_dims()[0], t, t.range_dims()[0])


def activation_access(dst, src, fn, scale=1.0, op="activation", bias=0.0, accumulate=None):
    """dst = fn(src * scale + bias); scale and bias numbers or [P, 1] tiles; `accumulate` a [P, 1]
    tile that also gets each partition's sum of the results (NKI reduce_res)."""
    scale, bias = per_partition(dst, scale, op, "the scale"), per_partition(dst, bias, op, "the bias")
    tiles = [t for t in (bias, scale) if hasattr(t, "tensor")]
    if accumulate is not None:
        per_partition(dst, accumulate, op, "reduce_res")
        _check_space(accumulate, ("sbuf",), op, "reduce_res")
    _check_space(dst, ("sbuf",), op, "the destination")
    _check_space(src, ("sbuf", "psum"), op, "the source")
    _same_shape(op, dst, src)
    tr = current()
    tr.record("activation", dst, [src] + tiles, fn=fn, scale=scale, bias=bias, accumulate=accumulate)
    if accumulate is not None and not accumulate.tensor.written:
        accumulate.tensor.written = tr.block.ops[-1].loc
    tr.unify_tiles(dst, src)
    _unify_partitions(dst, tiles + ([accumulate] if accumulate is not None else []))


def tensor_tensor_access(dst, a, b, alu, op="tensor_tensor"):
    if _space(a) == "psum" and _space(b) == "psum":
        raise NkiError("%s: both inputs are in PSUM; at most one may be" % op)
    _record_elementwise("tensor_tensor", dst, [a, b], op, alu=alu)


def tensor_scalar_access(dst, src, alu, scalar, op="tensor_scalar", reverse=False):
    """dst = src alu scalar (reverse: scalar alu src); the scalar a number or a [P, 1] tile."""
    scalar = per_partition(dst, scalar, op, "the scalar operand")
    tiles = [scalar] if hasattr(scalar, "tensor") else []
    _check_space(dst, ("sbuf",), op, "the destination")
    _check_space(src, ("sbuf", "psum"), op, "the source")
    _same_shape(op, dst, src)
    tr = current()
    tr.record("tensor_scalar", dst, [src] + tiles, alu=alu, scalar=scalar if tiles else float(scalar),
              reverse=reverse)
    tr.unify_tiles(dst, src)
    _unify_partitions(dst, tiles)


def memset_access(dst, value, op="memset"):
    tr = current()
    _check_space(dst, ("sbuf", "psum"), op, "the destination")
    _tile(dst, "the destination", nd=True)
    tr.record("memset", dst, [], value=float(value))


# ----------------------------------------------------------------------------
# Operation tables: nl.add / nl.exp ... are both functions and `op=` values.

ALU_OPS = {}   # function -> IR alu name
ACT_FNS = {}   # function -> IR activation name


def alu_name(fn, api):
    if fn in ALU_OPS:
        return ALU_OPS[fn]
    raise NkiError("%s: op %s is not supported (add, subtract, multiply, maximum, minimum, divide, power, "
                   "equal, not_equal, greater, greater_equal, less, less_equal)" % (api, getattr(fn, "__name__", fn)))


def act_name(fn, api):
    if fn in ACT_FNS:
        return ACT_FNS[fn]
    raise NkiError("%s: activation %s is not supported (copy, exp, silu, gelu, relu, sigmoid, tanh, square, "
                   "rsqrt, reciprocal, log, abs)" % (api, getattr(fn, "__name__", fn)))


# ----------------------------------------------------------------------------
# API helpers


def _is_tile(x):
    return isinstance(x, (Tensor, View, Lazy))


def _leading_tiles(args):
    """How many of the positional arguments, from the first, are tiles."""
    tiles = 0
    for a in args:
        if not _is_tile(a):
            break
        tiles += 1
    return tiles


def _split_dst(api, args, kwargs, n_tiles):
    """(dst or None, remaining args): the current API passes the destination first, so more than
    `n_tiles` leading tiles (the call's tile operands) start with it."""
    if "dst" in kwargs:
        return kwargs.pop("dst"), list(args)
    if _leading_tiles(args) > n_tiles:
        return args[0], list(args[1:])
    return None, list(args)


def _bind(api, args, kwargs, names, required):
    vals = dict(zip(names, args))
    if len(args) > len(names):
        raise NkiError("%s: too many positional arguments" % api)
    for k, v in kwargs.items():
        if k in vals:
            raise NkiError("%s: argument '%s' given twice" % (api, k))
        vals[k] = v
    for r in required:
        if r not in vals:
            raise NkiError("%s: missing argument '%s'" % (api, r))
    return vals


_IGNORED = object()


def _reject(api, vals, allowed):
    """Arguments tessel does not model must be absent or at their default."""
    for k, v in vals.items():
        if k in allowed:
            continue
        if k == "mask":
            check_mask(v, api)
            continue
        if v is None or v is False or (k == "engine" and v in (unknown_engine,)) or \
                (k in ("dge_mode", "oob_mode", "priority", "name", "mask_inactive")):
            continue
        raise NkiError("%s: argument %s=%r is not supported by tessel (docs/nki.md)" % (api, k, v))


def _dst_or_lazy(api, dst, what, space, dtype, shape, write):
    tr = current()
    if dst is not None:
        tr.consume([dst])
        d = tr.operand(dst, "the destination")
        write(d, "dst")
        return None
    return tr.lazy(what, space, dtype, shape, write, Tracer.assigned_name(what))


# ----------------------------------------------------------------------------
# nki.isa API

class _Engine:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "nisa." + self.name


tensor_engine = _Engine("tensor_engine")
vector_engine = _Engine("vector_engine")
scalar_engine = _Engine("scalar_engine")
gpsimd_engine = _Engine("gpsimd_engine")
unknown_engine = _Engine("unknown_engine")


def nc_matmul(*args, **kwargs):
    api = "nisa.nc_matmul"
    dst, rest = _split_dst(api, args, kwargs, 2)
    v = _bind(api, rest, kwargs, ["stationary", "moving", "is_stationary_onezero", "is_moving_onezero",
                                  "mask", "is_transpose"], ["stationary", "moving"])
    accumulate = v.pop("accumulate", None)
    _reject(api, v, ("stationary", "moving", "is_transpose"))
    tr = current()
    tr.consume([v["stationary"], v["moving"]])
    st, mv = tr.operand(v["stationary"], "stationary"), tr.operand(v["moving"], "moving")
    m, n = st.shape[-1], mv.shape[-1]

    def write(d, mode):
        if mode == "dst":
            mode = {None: "infer", True: "accumulate", False: "reset"}.get(accumulate)
            if mode is None:
                raise NkiError("%s: accumulate must be None, True or False" % api)
        else:
            mode = {"iadd": "infer"}.get(mode, "reset")
        matmul_access(d, st, mv, mode, op=api)
    return _dst_or_lazy(api, dst, "matmul", "psum", F32, (m, n), write)


def nc_transpose(*args, **kwargs):
    api = "nisa.nc_transpose"
    dst, rest = _split_dst(api, args, kwargs, 1)
    v = _bind(api, rest, kwargs, ["data", "mask", "dtype", "engine"], ["data"])
    if v.get("engine") is vector_engine:
        raise NkiError("%s: engine=nisa.vector_engine is not supported (tessel's transpose runs on the "
                       "tensor engine)" % api)
    _reject(api, v, ("data", "engine", "dtype"))
    tr = current()
    tr.consume([v["data"]])
    src = tr.operand(v["data"], "data")
    p, f = _tile(src, "the source")
    return _dst_or_lazy(api, dst, "transpose", "psum", F32, (f, p),
                        lambda d, mode: transpose_access(d, src))


def dma_copy(*args, **kwargs):
    api = "nisa.dma_copy"
    v = _bind(api, args, kwargs, ["dst", "src", "mask", "dst_rmw_op", "oob_mode", "dge_mode"], ["dst", "src"])
    _reject(api, v, ("dst", "src"))
    tr = current()
    tr.consume([v["dst"], v["src"]])
    dma_access(tr.operand(v["dst"], "dst"), tr.operand(v["src"], "src"), op=api)


def dma_transpose(*args, **kwargs):
    api = "nisa.dma_transpose"
    dst, rest = _split_dst(api, args, kwargs, 1)
    v = _bind(api, rest, kwargs, ["src", "axes", "mask", "dtype"], ["src"])
    if v.get("axes") not in (None, (1, 0), [1, 0]):
        raise NkiError("%s: axes=%r is not supported (2-D transpose only)" % (api, v["axes"]))
    _reject(api, v, ("src", "axes"))
    tr = current()
    tr.consume([v["src"]])
    src = tr.operand(v["src"], "src")
    _tile(src, "the source")
    p, f = src.shape
    return _dst_or_lazy(api, dst, "load_transpose", "sbuf", src.tensor.dtype, (f, p),
                        lambda d, mode: dma_access(d, src, op=api, transpose=True))


def tensor_copy(*args, **kwargs):
    api = "nisa.tensor_copy"
    dst, rest = _split_dst(api, args, kwargs, 1)
    v = _bind(api, rest, kwargs, ["src", "mask", "dtype", "engine"], ["src"])
    _reject(api, v, ("src", "dtype", "engine"))
    tr = current()
    tr.consume([v["src"]])
    src = tr.operand(v["src"], "src")
    dtype = as_dtype(v["dtype"]) if v.get("dtype") is not None else src.tensor.dtype
    return _dst_or_lazy(api, dst, "copy", "sbuf", dtype, src.shape,
                        lambda d, mode: copy_access(d, src, op=api))


def tensor_tensor(*args, **kwargs):
    api = "nisa.tensor_tensor"
    dst, rest = _split_dst(api, args, kwargs, 2)
    v = _bind(api, rest, kwargs, ["data1", "data2", "op", "mask", "dtype", "engine"], ["data1", "data2", "op"])
    _reject(api, v, ("data1", "data2", "op", "dtype", "engine"))
    alu = alu_name(v["op"], api)
    tr = current()
    tr.consume([v["data1"], v["data2"]])
    a, b = tr.operand(v["data1"], "data1"), tr.operand(v["data2"], "data2")
    dtype = as_dtype(v["dtype"]) if v.get("dtype") is not None else a.tensor.dtype
    return _dst_or_lazy(api, dst, alu, "sbuf", dtype, a.shape,
                        lambda d, mode: tensor_tensor_access(d, a, b, alu, op=api))


def _tile_or_number(api, what, x):
    """A scalar operand: a Python number stays a number; a tile is its Access (a [P, 1] operand)."""
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return float(x)
    if _is_tile(x):
        return current().operand(x, what)
    raise NkiError("%s: %s must be a number or a [P, 1] tile, got %s" % (api, what, type(x).__name__))


def tensor_scalar(*args, **kwargs):
    api = "nisa.tensor_scalar"
    dst, rest = _split_dst(api, args, kwargs, 1)
    v = _bind(api, rest, kwargs, ["data", "op0", "operand0", "reverse0", "op1", "operand1", "reverse1",
                                  "dtype", "mask", "engine"], ["data", "op0", "operand0"])
    if v.get("op1") is not None:
        raise NkiError("%s: op1/operand1 (a second ALU op in the same instruction) is not supported by "
                       "tessel's tile IR; write a second nisa.tensor_scalar" % api)
    check_mask(v.pop("mask", None), api)
    _reject(api, v, ("data", "op0", "operand0", "reverse0", "dtype", "engine"))
    alu = alu_name(v["op0"], api)
    reverse = bool(v.get("reverse0"))
    tr = current()
    tr.consume([v["data"], v["operand0"]])
    src = tr.operand(v["data"], "data")
    scalar = _tile_or_number(api, "operand0", v["operand0"])
    dtype = as_dtype(v["dtype"]) if v.get("dtype") is not None else src.tensor.dtype
    return _dst_or_lazy(api, dst, alu, "sbuf", dtype, src.shape,
                        lambda d, mode: tensor_scalar_access(d, src, alu, scalar, op=api, reverse=reverse))


def activation(*args, **kwargs):
    return activation_call("nisa.activation", args, kwargs)


def activation_reduce(*args, **kwargs):
    """The legacy API's activation with a reduction (`reduce_op`, `reduce_res` required)."""
    return activation_call("nisa.activation_reduce", args, kwargs, reduce_required=True)


def activation_call(api, args, kwargs, reduce_required=False):
    dst = None
    if "dst" in kwargs:
        dst = kwargs.pop("dst")
    elif args and _is_tile(args[0]):
        dst, args = args[0], args[1:]
    names = ["op", "data", "reduce_op", "reduce_res", "bias", "scale", "mask", "dtype"] if reduce_required \
        else ["op", "data", "bias", "scale", "mask", "dtype", "reduce_op", "reduce_res", "reduce_cmd"]
    v = _bind(api, args, kwargs, names, ["op", "data"] + (["reduce_op", "reduce_res"] if reduce_required else []))
    check_mask(v.pop("mask", None), api)
    scale, bias, res = v.pop("scale", None), v.pop("bias", None), v.pop("reduce_res", None)
    reduce_op = v.pop("reduce_op", None)
    if res is not None and reduce_op is not None and alu_name(reduce_op, api) != "add":
        raise NkiError("%s: reduce_op must be nl.add (tessel's activation accumulates sums)" % api)
    if res is not None and reduce_op is None:
        raise NkiError("%s: reduce_res needs reduce_op=nl.add" % api)
    _reject(api, v, ("op", "data", "dtype"))
    fn = act_name(v["op"], api)
    tr = current()
    tr.consume([v["data"], scale, bias, res])
    src = tr.operand(v["data"], "data")
    scale = 1.0 if scale is None else _tile_or_number(api, "scale", scale)
    bias = 0.0 if bias is None else _tile_or_number(api, "bias", bias)
    acc = None if res is None else tr.operand(res, "reduce_res")
    dtype = as_dtype(v["dtype"]) if v.get("dtype") is not None else src.tensor.dtype
    return _dst_or_lazy(api, dst, fn, "sbuf", dtype, src.shape,
                        lambda d, mode: activation_access(d, src, fn, scale, op=api, bias=bias, accumulate=acc))


def memset(*args, **kwargs):
    api = "nisa.memset"
    if "dst" in kwargs or (args and _is_tile(args[0])):
        v = _bind(api, args, kwargs, ["dst", "value", "engine"], ["dst", "value"])
        _reject(api, v, ("dst", "value", "engine"))
        tr = current()
        tr.consume([v["dst"]])
        memset_access(tr.operand(v["dst"], "dst"), v["value"], op=api)
        return None
    v = _bind(api, args, kwargs, ["shape", "value", "dtype", "mask", "engine"], ["shape", "value", "dtype"])
    _reject(api, v, ("shape", "value", "dtype", "engine"))
    value = v["value"]
    return current().lazy("memset", "sbuf", as_dtype(v["dtype"]), tuple(v["shape"]),
                          lambda d, mode: memset_access(d, value, op=api), Tracer.assigned_name("memset"))

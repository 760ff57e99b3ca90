"""The reference of `tessel run kernel.py --check`: the trace executed in plain Python.

Every op of the recorded trace runs on host tensors, loop by loop, with the
semantics of docs/tile-ir.md: arithmetic in double precision, values stored
to bf16 buffers rounded to nearest even. It shares the trace with the
simulated program but not the lowering, the program format or the simulator,
which are what it checks. Plain Python (no numpy, which tessel does not
require), so it is meant for the small shapes of tests: about 0.2 s per
128 x 128 x 512 matmul.
"""
import array
import math
import operator
import os
import struct

from .affine import extent_value
from .tracer import Alloc, Loop

_ACT = {
    "copy": lambda x: x,
    "silu": lambda x: x / (1.0 + math.exp(-x)) if x > -700 else 0.0,
    "gelu": lambda x: 0.5 * x * (1.0 + math.erf(x / math.sqrt(2.0))),
    "relu": lambda x: x if x > 0 else 0.0,
    "exp": lambda x: math.exp(x) if x < 700 else math.inf,
    "sigmoid": lambda x: 1.0 / (1.0 + math.exp(-x)) if x > -700 else 0.0,
    "tanh": math.tanh,
    "square": lambda x: x * x,
    "rsqrt": lambda x: 1.0 / math.sqrt(x) if x > 0 else (math.inf if x == 0 else math.nan),
    "reciprocal": lambda x: _div(1.0, x),
    "log": lambda x: math.log(x) if x > 0 else (-math.inf if x == 0 else math.nan),
    "abs": abs,
}


def _div(a, b):
    if b != 0:
        return a / b
    return math.nan if a == 0 or a != a else math.copysign(math.inf, a) * math.copysign(1.0, b)


def _pow(a, b):
    try:
        r = a ** b
        return r if isinstance(r, float) else math.nan
    except (OverflowError, ZeroDivisionError):
        return math.inf
_ALU = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
        "max": lambda a, b: a if a > b else b, "min": lambda a, b: a if a < b else b, "divide": _div,
        "pow": _pow, "is_equal": lambda a, b: float(a == b), "not_equal": lambda a, b: float(a != b),
        "is_gt": lambda a, b: float(a > b), "is_ge": lambda a, b: float(a >= b),
        "is_lt": lambda a, b: float(a < b), "is_le": lambda a, b: float(a <= b)}


def round_f32(values):
    return array.array("f", values).tolist()


def round_bf16(values):
    """To bf16 (round to nearest even), back as floats."""
    bits = array.array("I")
    bits.frombytes(array.array("f", values).tobytes())
    out = array.array("I", [((b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000) if (b & 0x7F800000) != 0x7F800000
                             else (b & 0xFFFF0000) | (0x00400000 if b & 0x007FFFFF else 0) for b in bits])
    res = array.array("f")
    res.frombytes(out.tobytes())
    return res.tolist()


# ----------------------------------------------------------------------------
# .npy (float32, C order, v1.0), as runtime/Npy.cpp writes them


def read_npy(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        raise ValueError("%s is not an npy file" % path)
    hlen = struct.unpack("<H", data[8:10])[0] if data[6] == 1 else struct.unpack("<I", data[8:12])[0]
    start = 10 + hlen if data[6] == 1 else 12 + hlen
    header = data[start - hlen:start].decode("latin1")
    d = eval(header, {"__builtins__": {}}, {"True": True, "False": False})  # a Python dict literal
    if d["descr"] != "<f4" or d["fortran_order"]:
        raise ValueError("%s: expected little-endian float32 in C order" % path)
    vals = array.array("f")
    vals.frombytes(data[start:])
    return list(d["shape"]), vals.tolist()


class HostTensor:
    def __init__(self, shape, data=None):
        self.shape = list(shape)
        n = 1
        for s in shape:
            n *= s
        self.data = data if data is not None else [0.0] * n
        self.strides = []
        st = 1
        for s in reversed(self.shape):
            self.strides.insert(0, st)
            st *= s


class _Machine:
    def __init__(self, store, first):
        self.store, self.first = store, first  # Tensor -> HostTensor; loop var -> first value
        self.env = {}

    def _geometry(self, acc):
        """(host tensor, base offset, partition stride and extent, the free elements' offsets in the
        tile's row-major order)."""
        h = self.store[acc.tensor]
        base = 0
        for d, (s, e) in enumerate(acc.idx):
            base += s.eval(self.env) * h.strides[d]
        if acc.pattern is not None:
            dims = [(h.strides[d] * st, e) for d, e, st in acc.pattern]
        else:
            dims = [(h.strides[d], extent_value(acc.idx[d][1], self.env)) for d in acc.range_dims()]
        free = [0]
        for stride, n in dims[1:]:
            free = [f + j * stride for f in free for j in range(n)]
        return h, base, dims[0], free

    def read(self, acc):
        h, base, (s0, e0), free = self._geometry(acc)
        d = h.data
        return [[d[base + i * s0 + f] for f in free] for i in range(e0)]

    def write(self, acc, rows):
        h, base, (s0, e0), free = self._geometry(acc)
        bf16 = acc.tensor.dtype.ir == "bf16"
        d = h.data
        for i in range(e0):
            row = round_bf16(rows[i]) if bf16 else round_f32(rows[i])
            off = base + i * s0
            for j, f in enumerate(free):
                d[off + f] = row[j]

    def run(self, block):
        for item in block.ops:
            if isinstance(item, Alloc):
                t = item.tensor
                if t.role != "output":
                    self.store[t] = HostTensor(t.shape)
            elif isinstance(item, Loop):
                for i in range(item.lo, item.hi, item.step):
                    self.env[item.var] = i
                    self.run(item.body)
                self.env.pop(item.var, None)
            else:
                self.op(item)

    def activation(self, op, data):
        a = op.attrs
        f, n = _ACT[a["fn"]], len(data)
        scale, bias = self._per_partition(a["scale"], n), self._per_partition(a["bias"], n)
        out = [[f(x * scale[i] + bias[i]) for x in row] for i, row in enumerate(data)]
        self.write(op.dst, out)
        if a.get("accumulate") is not None:
            self.write(a["accumulate"], [[math.fsum(round_f32(row))] for row in out])


    def row_op(self, op, src):
        """The rows of a per-partition recurrence (docs/ops.md), in fp32."""
        a = op.attrs
        if op.kind == "tensor_tensor_scan":
            f0, f1, init = _ALU[a["op0"]], _ALU[a["op1"]], self._per_partition(a["initial"], len(src[0]))
            out = []
            for i, (r, q) in enumerate(zip(src[0], src[1])):
                prev, row = init[i], []
                for x, y in zip(round_f32(r), round_f32(q)):
                    prev = round_f32([f1(round_f32([f0(x, prev)])[0], y)])[0]
                    row.append(prev)
                out.append(row)
            return out
        if op.kind == "bn_stats":
            return [_half_stats(row[0::2]) + _half_stats(row[1::2]) for row in src[0]]
        out = []
        for row in src[0]:
            parts = [row[i:i + 3] for i in range(0, len(row) - 2, 3)]
            n = math.fsum(p[0] for p in parts)
            mean = math.fsum(p[0] * p[1] for p in parts) / n if n else 0.0
            m2 = math.fsum(p[2] + p[0] * (p[1] - mean) ** 2 for p in parts)
            out.append([mean, m2 / n if n else 0.0])
        return out

    def _per_partition(self, v, n):
        """A scalar operand as one value per partition: a number repeated, or a [P, 1] tile's column."""
        if hasattr(v, "tensor"):
            return [row[0] for row in self.read(v)]
        return [float(v)] * n

    def op(self, op):
        k, a = op.kind, op.attrs
        src = [self.read(s) for s in op.srcs]
        if k == "dma":
            self.write(op.dst, _t(src[0]) if a.get("transpose") else src[0])
        elif k == "matmul":
            st, mv = src  # [K, M], [K, N]
            columns = list(zip(*mv))
            out = [[sum(map(operator.mul, s, c)) for c in columns] for s in zip(*st)]
            reset = a["mode"] == "reset" or (a["mode"] == "infer" and
                                             all(self.env[v] == self.first[v] for v in a["reset_on"]))
            if not reset:
                out = [[o + p for o, p in zip(orow, prow)] for orow, prow in zip(out, self.read(op.dst))]
            self.write(op.dst, out)
        elif k == "transpose":
            self.write(op.dst, _t(src[0]))
        elif k == "activation":
            self.activation(op, src[0])
        elif k == "tensor_tensor":
            f = _ALU[a["alu"]]
            self.write(op.dst, [[f(x, y) for x, y in zip(r, q)] for r, q in zip(src[0], src[1])])
        elif k == "tensor_scalar":
            f, c = _ALU[a["alu"]], self._per_partition(a["scalar"], len(src[0]))
            if a.get("reverse"):
                self.write(op.dst, [[f(c[i], x) for x in row] for i, row in enumerate(src[0])])
            else:
                self.write(op.dst, [[f(x, c[i]) for x in row] for i, row in enumerate(src[0])])
        elif k == "tensor_reduce":
            # Runs of the source's free elements, one per destination element (docs/tile-ir.md).
            f = _ALU[a["alu"]]
            n = len(self._geometry(op.dst)[3])
            out = []
            for row in src[0]:
                r = len(row) // n
                folded = []
                for k in range(n):
                    acc = row[k * r]
                    for x in round_f32(row[k * r + 1:(k + 1) * r]):
                        acc = round_f32([f(acc, x)])[0]
                    folded.append(acc)
                out.append(folded)
            self.write(op.dst, out)
        elif k == "tensor_partition_reduce":
            f, acc = _ALU[a["alu"]], round_f32(src[0][0])
            for row in src[0][1:]:
                acc = round_f32([f(x, y) for x, y in zip(acc, row)])
            self.write(op.dst, [acc])
        elif k in ("tensor_tensor_scan", "bn_stats", "bn_aggr"):
            self.write(op.dst, self.row_op(op, src))
        elif k in ("iota", "affine_select"):
            e0, e1 = (extent_value(e, self.env) for e in op.dst.shape)
            off, cp, cf = a["offset"].eval(self.env), a["partition"], a["free"]
            vals = [[float(off + cp * p + cf * f) for f in range(e1)] for p in range(e0)]
            if k == "affine_select":
                cmp = _ALU[a["cmp"]]
                vals = [[x if cmp(v, 0) else a["fill"] for v, x in zip(vr, xr)] for vr, xr in zip(vals, src[0])]
            self.write(op.dst, vals)
        elif k == "copy":
            self.write(op.dst, src[0])
        elif k == "memset":
            _, _, (_, e0), free = self._geometry(op.dst)
            self.write(op.dst, [[a["value"]] * len(free) for _ in range(e0)])
        else:
            raise AssertionError(k)


def _half_stats(xs):
    """(count, mean, variance * count) of a partition's even or odd elements (bn_stats)."""
    n = len(xs)
    mean = math.fsum(xs) / n if n else 0.0
    return [float(n), mean, math.fsum((x - mean) ** 2 for x in xs)]


def _t(rows):
    return [list(c) for c in zip(*rows)]


def _first_values(block, out):
    for item in block.ops:
        if isinstance(item, Loop):
            out[item.var] = item.lo
            _first_values(item.body, out)
    return out


def check(tr, outputs, directory, tolerance):
    """Runs the trace on DIR/in/<input>.npy and compares with DIR/out/<output>.npy."""
    store = {}
    for t in tr.args:
        if t.role == "input":
            shape, data = read_npy(os.path.join(directory, "in", t.name + ".npy"))
            store[t] = HostTensor(shape, data)
    for t in outputs:
        store[t] = HostTensor(t.shape)
    _Machine(store, _first_values(tr.root, {})).run(tr.root)
    max_abs = max_ref = 0.0
    finite = True
    for t in outputs:
        shape, sim = read_npy(os.path.join(directory, "out", t.name + ".npy"))
        ref = store[t].data
        if shape != list(t.shape):
            return {"passed": False, "tolerance": tolerance,
                    "error": "output %s has shape %s, the reference %s" % (t.name, shape, list(t.shape))}
        finite = finite and all(math.isfinite(x) for x in sim)
        max_abs = max([max_abs] + [abs(x - y) for x, y in zip(sim, ref)])
        max_ref = max([max_ref] + [abs(y) for y in ref])
    rel = max_abs / max_ref if max_ref > 0 else max_abs
    return {"reference": "the kernel's own trace executed in Python: checks tessel's lowering and simulator, "
                         "not the kernel's math (give --reference ref.py:FUNC for that)", "tolerance": tolerance, "max_abs_err": max_abs,
            "max_rel_err": rel, "max_abs_reference": max_ref, "passed": finite and rel <= tolerance}

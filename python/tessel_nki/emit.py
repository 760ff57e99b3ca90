"""From a finished trace to .tir text: kernel roles, matmul accumulation
groups, buffer counts, layout labels, then printing (docs/tile-ir.md)."""
from .errors import NkiError
from .tracer import Alloc, Loop, Op


def walk(block, fn):
    for item in block.ops:
        fn(item)
        if isinstance(item, Loop):
            walk(item.body, fn)


def _ops(item, before=None):
    """The ops of `item` (an op, or a loop's body recursively), in program order;
    those before op `before` only, when it is given."""
    out = []

    def visit(x):
        if isinstance(x, Op):
            out.append(x)
    visit(item) if not isinstance(item, Loop) else walk(item.body, visit)
    return out[:out.index(before)] if before in out else out


def _touches(item, tensor, ignore_matmul_writes):
    """Whether `item` reads or writes `tensor`, other than by a matmul writing it
    when ignore_matmul_writes."""
    return any((x.dst.tensor is tensor and not (ignore_matmul_writes and x.kind == "matmul"))
               or any(s.tensor is tensor for s in x.srcs) for x in _ops(item))


def _matmul_writes(item, tensor, before=None):
    """Whether a matmul writing `tensor` occurs in `item` (before op `before`, when given)."""
    return any(x.kind == "matmul" and x.dst.tensor is tensor for x in _ops(item, before))


def resolve_accumulation(tr):
    """Gives each matmul whose accumulation NKI infers (`+=`, accumulate=None) its
    reset loops: the enclosing loops, innermost first, inside the result buffer's
    scope, whose bodies touch the buffer only by matmuls into it (the accumulation
    group: the first of its iterations overwrites, the others accumulate), or
    `accumulate` when it continues an earlier matmul's accumulation."""
    ops = []
    walk(tr.root, lambda x: ops.append(x) if isinstance(x, Op) and x.kind == "matmul" else None)
    for op in ops:
        mode = op.attrs["mode"]
        op.attrs["reset_on"] = []
        if mode != "infer":
            continue
        tensor = op.dst.tensor
        # A loop that moves the matmul to another PSUM location (its variable
        # indexes the result) starts a new group at each iteration, not a
        # continuation: NKI infers accumulation per location.
        located = set()
        for start, _ in op.dst.idx:
            located |= start.vars()
        loops = []
        block = op.block
        while block is not tensor.block and block.parent_loop is not None:
            loop = block.parent_loop
            if _touches(loop, tensor, True):
                break
            if loop.var not in located:
                loops.append(loop)
            block = loop.parent
        # The first matmul of a group overwrites; one that continues an earlier matmul's
        # accumulation (before it in the group's loops, or the last op on the buffer before
        # the group) always accumulates.
        first_item = loops[-1] if loops else op
        container = loops[-1].parent if loops else op.block
        earlier = bool(loops) and _matmul_writes(loops[-1], tensor, before=op)
        if not earlier:
            for item in reversed(container.ops[:container.ops.index(first_item)]):
                if _touches(item, tensor, False):
                    earlier = _matmul_writes(item, tensor)
                    break
        if earlier:
            op.attrs["mode"] = "accumulate"  # it continues an earlier matmul's accumulation
        else:
            op.attrs["reset_on"] = [l.var for l in loops]


def _copy_bytes(t, g):
    P = g["partitions"]
    free = 1
    for d in t.ir_dims[1:]:
        free *= t.shape[d]
    folds = max(1, t.shape[t.pdim] // P) if t.shape[t.pdim] > P else 1
    b = free * t.dtype.size * folds
    if t.space == "sbuf":
        a = g["sbuf_align_bytes"]
        return -(-b // a) * a
    return b


def _peak(block, space, g):
    top = peak = 0
    for item in block.ops:
        if isinstance(item, Alloc) and item.tensor.space == space:
            top += _copy_bytes(item.tensor, g) * item.bufs
            peak = max(peak, top)
        elif isinstance(item, Loop):
            peak = max(peak, top + _peak(item.body, space, g))
    return peak


def choose_bufs(tr):
    """Double-buffers every on-chip buffer allocated in a loop (as the NKI compiler
    pipelines loop iterations), then single-buffers the largest until each space fits; a
    modulo allocation's count (modalloc.py) is kept as written."""
    g = tr.geometry
    allocs = []
    walk(tr.root, lambda x: allocs.append(x) if isinstance(x, Alloc) and x.tensor.space != "hbm" else None)
    for a in allocs:
        a.bufs = a.tensor.slots or (2 if a.tensor.block is not tr.root else 1)
    for space, cap in (("sbuf", g["sbuf_bytes"]), ("psum", g["psum_bytes"])):
        doubled = sorted((a for a in allocs if a.tensor.space == space and a.bufs == 2 and not a.tensor.slots),
                         key=lambda a: -_copy_bytes(a.tensor, g))
        for a in doubled:
            if _peak(tr.root, space, g) <= cap:
                break
            a.bufs = 1


def label_names(tr):
    names = {}
    used = set()
    lab = tr.labels

    def name(t, d):
        root = lab.find((t, d))
        if root not in names:
            hint = lab.hint.get(root, "D")
            n, i = hint, 1
            while n in used:
                n = "%s%d" % (hint, i)
                i += 1
            used.add(n)
            names[root] = n
        return names[root]
    return name


def _num(x):
    r = repr(float(x))
    if r in ("inf", "-inf", "nan"):
        raise NkiError("a non-finite constant %s is not supported" % r)
    return r


def _operand_text(key, v, default):
    """` scale X` / ` bias Y`: a number (omitted at its default) or a [P, 1] tile."""
    if hasattr(v, "text"):
        return key + v.text()
    return "" if float(v) == default else key + _num(v)


def _affine_text(a):
    return "offset %s partition %d free %d" % (a["offset"].text(), a["partition"], a["free"])


def _fill(v):
    return ("-inf" if v < 0 else "inf") if v in (float("inf"), float("-inf")) else _num(v)


def emit(tr, kernel_name, outputs):
    label = label_names(tr)

    def ty(t):
        if t.banks:  # [P, G, F] over G PSUM banks: the folded [G*P, F] (Access.text)
            dims = "%s:%d, %s:%d" % (label(t, 0), t.shape[0] * t.shape[1], label(t, 2), t.shape[2])
            return "%s<%s, [%s]>" % (t.space, t.dtype.ir, dims)
        dims = ", ".join("%s:%d" % (label(t, d), t.shape[d]) for d in t.ir_dims)
        return "%s<%s, [%s]>" % (t.space, t.dtype.ir, dims)

    lines = []
    ins = ", ".join("%%%s: %s" % (t.name, ty(t)) for t in tr.args if t.role == "input")
    outs = ", ".join("%%%s: %s" % (t.name, ty(t)) for t in outputs)
    lines.append("kernel @%s(%s) -> (%s) {" % (kernel_name, ins, outs))

    def loc(x):
        return "  // %s:%d" % x.loc if x.loc else ""

    def block(b, depth):
        ind = "  " * depth
        for item in b.ops:
            if isinstance(item, Alloc):
                t = item.tensor
                if t.role == "output":
                    continue
                bufs = " bufs %d" % item.bufs if item.bufs > 1 else ""
                addr = " addr %d" % t.address if t.address is not None else ""
                lines.append("%s%%%s = alloc %s%s%s%s" % (ind, t.name, ty(t), bufs, addr, loc(item)))
            elif isinstance(item, Loop):
                lines.append("%sfor %%%s = %d to %d step %d%s {%s" % (
                    ind, item.var.name, item.lo, item.hi, item.step, " parallel" if item.parallel else "",
                    loc(item)))
                block(item.body, depth + 1)
                lines.append(ind + "}")
            else:
                try:
                    lines.append(ind + op_text(item) + loc(item))
                except NkiError as e:
                    # Raised while emitting, after tracing: the op's own source line.
                    raise NkiError(e.msg, loc=item.loc or e.loc)
    block(tr.root, 1)
    lines.append("}")
    return "\n".join(lines) + "\n"


def op_text(op):
    d = op.dst.text()
    s = [x.text() for x in op.srcs]
    a = op.attrs
    if op.kind == "dma":
        return "dma %s%s <- %s" % ("transpose " if a.get("transpose") else "", d, s[0])
    if op.kind == "matmul":
        reset = a.get("reset_on") or []
        tail = " reset(%s)" % ", ".join("%" + v.name for v in reset) if reset else ""
        if a["mode"] == "accumulate":
            tail = " accumulate"
        return "matmul %s <- %s, %s%s" % (d, s[0], s[1], tail)
    if op.kind == "transpose":
        return "transpose %s <- %s" % (d, s[0])
    if op.kind == "activation":
        tail = _operand_text(" scale ", a["scale"], 1.0) + _operand_text(" bias ", a["bias"], 0.0)
        if a.get("accumulate") is not None:
            tail += " accumulate " + a["accumulate"].text()
        return "activation %s %s <- %s%s" % (a["fn"], d, s[0], tail)
    if op.kind == "tensor_tensor":
        return "tensor_tensor %s %s <- %s, %s" % (a["alu"], d, s[0], s[1])
    if op.kind == "tensor_scalar":
        scalar = a["scalar"].text() if hasattr(a["scalar"], "text") else _num(a["scalar"])
        return "tensor_scalar %s %s <- %s, %s%s" % (a["alu"], d, s[0], scalar, " reverse" if a.get("reverse") else "")
    if op.kind in ("tensor_reduce", "tensor_partition_reduce"):
        return "%s %s %s <- %s" % (op.kind, a["alu"], d, s[0])
    if op.kind == "tensor_tensor_scan":
        init = a["initial"].text() if hasattr(a["initial"], "text") else _num(a["initial"])
        return "tensor_tensor_scan %s %s %s <- %s, %s initial %s" % (a["op0"], a["op1"], d, s[0], s[1], init)
    if op.kind in ("bn_stats", "bn_aggr"):
        return "%s %s <- %s" % (op.kind, d, s[0])
    if op.kind == "iota":
        return "iota %s %s" % (d, _affine_text(a))
    if op.kind == "affine_select":
        return "affine_select %s %s <- %s %s fill %s" % (a["cmp"], d, s[0], _affine_text(a), _fill(a["fill"]))
    if op.kind == "copy":
        return "copy %s <- %s" % (d, s[0])
    if op.kind == "memset":
        return "memset %s, %s" % (d, _num(a["value"]))
    raise AssertionError(op.kind)

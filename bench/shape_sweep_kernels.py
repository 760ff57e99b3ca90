"""The kernels of bench/shape_sweep.py: a seeded generator of valid .tsl kernels.

Kernel i of seed s depends only on (s, i): `generate(s, n)` lists the first n,
so a longer sweep extends a shorter one. Each kernel is a dict with its
parameters, statements, shapes, FLOPs (the matmuls as written) and minimal HBM
traffic (every input read once, the output written once, bf16).
"""
import random
import re

# (model, hidden, intermediate, MLP kind): public configs. Several sizes are not
# multiples of 128 (576, 896, 960, 1600, 2880, 4544, 4864, 9728, 13824, 18944, 29568).
FAMILIES = [
    ("SmolLM-135M", 576, 1536, "swiglu"),
    ("Qwen2.5-0.5B", 896, 4864, "swiglu"),
    ("SmolLM-360M", 960, 2560, "swiglu"),
    ("BERT-base", 768, 3072, "gelu"),
    ("ViT-L", 1024, 4096, "gelu"),
    ("Whisper-large", 1280, 5120, "gelu"),
    ("GPT-2-XL", 1600, 6400, "gelu"),
    ("Llama-3.2-1B", 2048, 8192, "swiglu"),
    ("Qwen3-1.7B", 2048, 6144, "swiglu"),
    ("Gemma-2-2B", 2304, 9216, "geglu"),
    ("Qwen3-4B", 2560, 9728, "swiglu"),
    ("Phi-2", 2560, 10240, "gelu"),
    ("GPT-OSS-20B", 2880, 2880, "swiglu"),
    ("Llama-3.2-3B", 3072, 8192, "swiglu"),
    ("Qwen2.5-7B", 3584, 18944, "swiglu"),
    ("Llama-3.1-8B", 4096, 14336, "swiglu"),
    ("GPT-J-6B", 4096, 16384, "gelu"),
    ("Falcon-7B", 4544, 18176, "gelu"),
    ("Gemma-2-27B", 4608, 36864, "geglu"),
    ("Qwen2.5-14B", 5120, 13824, "swiglu"),
    ("Qwen2.5-32B", 5120, 27648, "swiglu"),
    ("Mixtral-8x22B", 6144, 16384, "swiglu"),
    ("DeepSeek-V3", 7168, 18432, "swiglu"),
    ("Llama-3.1-70B", 8192, 28672, "swiglu"),
    ("Qwen2.5-72B", 8192, 29568, "swiglu"),
    ("Llama-3.1-405B", 16384, 53248, "swiglu"),
]
RANKS = [64, 96, 128, 192, 256, 320, 384, 512, 640, 768, 1024, 1280, 1536, 2048, 2560, 3072, 4096]
DECODE_M = [1, 1, 2, 4, 7, 8, 16, 32, 64, 100, 128]
TARGETS = ["trn1", "trn2"]
ACTS = {"swiglu": "silu", "geglu": "gelu", "gelu": "gelu"}


class Node:
    """An expression: its text (how tightly it binds: 3 a name, call or .T, 2 @, 1 *), shape, matmul FLOPs."""

    def __init__(self, text, tight, shape, flops):
        self.text, self.tight, self.shape, self.flops = text, tight, shape, flops

    def at(self, tight):
        return self.text if self.tight >= tight else f"({self.text})"


def t(a):
    return Node(f"{a.at(3)}.T", 3, (a.shape[1], a.shape[0]), a.flops)


def matmul(a, b):
    assert a.shape[1] == b.shape[0], (a.text, a.shape, b.text, b.shape)
    flops = a.flops + b.flops + 2 * a.shape[0] * a.shape[1] * b.shape[1]
    return Node(f"{a.at(2)} @ {b.at(3)}", 2, (a.shape[0], b.shape[1]), flops)


def act(fn, a):
    return Node(f"{fn}({a.text})", 3, a.shape, a.flops)


def emul(a, b):
    assert a.shape == b.shape
    return Node(f"{a.at(3)} * {b.at(3)}", 1, a.shape, a.flops + b.flops)


class Builder:
    """Collects a kernel's parameters; a weight [k, n] may be stored transposed ([n, k], used as W.T)."""

    def __init__(self):
        self.params = []  # (name, stored shape)
        self.stored_t = {}
        self.m_axis = 0  # the axis of X that is M

    def weight(self, name, k, n, stored_t=False):
        """The operand [k, n] named `name`; a name seen before is the same parameter, used the same way."""
        if name not in self.stored_t:
            self.params.append((name, (n, k) if stored_t else (k, n)))
            self.stored_t[name] = stored_t
        node = Node(name, 3, dict(self.params)[name], 0)
        return t(node) if self.stored_t[name] else node

    def input(self, m, k, stored_t):
        self.m_axis = 1 if stored_t else 0
        return self.weight("X", m, k, stored_t)


def draw_m(rng):
    if rng.random() < 0.35:
        return rng.choice(DECODE_M)
    m = int(round(2 ** rng.uniform(7, 15)))
    return min(32768, -(-m // 128) * 128) if rng.random() < 0.6 else m


def draw_rank(rng, h, i):
    """A rank 64-4096 below the smaller dimension where possible."""
    fits = [r for r in RANKS if r < min(h, i)] or RANKS[:1]
    return rng.choice(fits)


def gen_chain(rng, fam, m, tags):
    """X @ W1 @ ... @ Wn (n 1-6) over the family's sizes and ranks; maybe a mid-chain activation
    (assigned to h), a square weight used twice, weights stored transposed."""
    _, h, i, kind = fam
    n = rng.choice([1, 1, 2, 2, 2, 3, 3, 4, 5, 6])
    tags.append(f"chain of {n}")
    b = Builder()
    torch_layout = rng.random() < 0.2
    x = b.input(m, h, rng.random() < 0.15)
    pool = [h, i, draw_rank(rng, h, i), draw_rank(rng, h, i)]
    dims = [h]
    while len(dims) < n + 1:
        dims.append(rng.choice([d for d in pool if d != dims[-1]]))
    twice = rng.randint(0, n - 2) if n >= 2 and rng.random() < 0.3 else None
    if twice is not None:  # links twice and twice + 1 are one square weight [d, d]
        d = h if twice == 0 else rng.choice([h, pool[2]])
        dims[twice:twice + 3] = [d, d, d]
        tags.append("a weight used twice")
    mid = rng.randint(1, n - 1) if n >= 2 and rng.random() < 0.3 else None
    stmts, cur = [], x
    for j in range(n):
        k, nn = dims[j], dims[j + 1]
        name = f"W{j}" if twice is not None and j == twice + 1 else f"W{j + 1}"
        w = b.weight(name, k, nn, torch_layout or rng.random() < 0.1)
        cur = matmul(cur, w)
        if mid == j + 1:
            fn = ACTS[kind]
            stmts.append(("h", act(fn, cur)))
            cur = Node("h", 3, cur.shape, cur.flops)
            tags.append("activation mid-chain")
    return b, stmts, cur, torch_layout


def gen_tied(rng, fam, m, tags):
    """X @ E @ E.T: a projection onto a rank-R subspace with one tied factor E [h, R]."""
    _, h, i, _ = fam
    r = draw_rank(rng, h, i)
    tags += ["tied factors (E, E.T)", "a weight used twice"]
    b = Builder()
    x = b.input(m, h, rng.random() < 0.15)
    e = b.weight("E", h, r)
    return b, [], matmul(matmul(x, e), t(e)), False


def projection(b, x, name, k, n, rank, torch_layout):
    """x @ W (dense) or x @ U @ V (rank `rank`)."""
    if rank is None:
        return matmul(x, b.weight("W" + name, k, n, torch_layout))
    u = b.weight("U" + name, k, rank, torch_layout)
    return matmul(matmul(x, u), b.weight("V" + name, rank, n, torch_layout))


def gen_mlp(rng, fam, m, tags):
    """A SwiGLU / GeGLU / GELU MLP block, dense or factorised (ranks maybe uneven)."""
    _, h, i, kind = fam
    b = Builder()
    torch_layout = rng.random() < 0.25
    x = b.input(m, h, rng.random() < 0.1)
    if rng.random() < 0.5:
        ranks = [None] * 3
        tags.append(f"{kind} MLP, dense")
    else:
        r = draw_rank(rng, h, i)
        ranks = [r] * 3 if rng.random() < 0.7 else [draw_rank(rng, h, i) for _ in range(3)]
        tags.append(f"{kind} MLP, factorised")
        tags.append("MLP, uneven ranks" if len(set(ranks)) > 1 else f"MLP, rank {rank_band(r)}")
    fn = ACTS[kind]
    if kind == "gelu":
        hid = act(fn, projection(b, x, "1", h, i, ranks[0], torch_layout))
        down = ("2", ranks[1])
    else:
        gate = act(fn, projection(b, x, "g", h, i, ranks[0], torch_layout))
        hid = emul(gate, projection(b, x, "u", h, i, ranks[1], torch_layout))
        down = ("d", ranks[2])
    hnode = Node("h", 3, hid.shape, hid.flops)
    out = projection(b, hnode, down[0], i, h, down[1], torch_layout)
    return b, [("h", hid)], out, torch_layout


def rank_band(r):
    return "< 512" if r < 512 else ("512-1024" if r <= 1024 else "> 1024")


def m_band(m):
    return "M <= 8" if m <= 8 else ("M 9-128" if m <= 128 else ("M 129-2048" if m <= 2048 else "M > 2048"))


def build(rng, fam, m):
    """One kernel over family `fam` at M = m: (tags, Builder, statements, return node)."""
    tags = []
    u = rng.random()
    gen = gen_mlp if u < 0.45 else (gen_tied if u < 0.52 else gen_chain)
    b, stmts, out, torch_layout = gen(rng, fam, m, tags)
    if torch_layout:
        tags.append("nn.Linear layout (every weight W.T)")
    out_m_axis = 0
    if rng.random() < 0.12:
        out, out_m_axis = t(out), 1
        tags.append("transposed result")
    return tags, b, stmts, out, out_m_axis


def feature_tags(b, m, text):
    """Tags read off the kernel (`text`: its statements and return): M's band, a transposed input or
    weight, sizes not multiples of 128, no transpose at all."""
    tags = [m_band(m)]
    if re.search(r"\bX\.T\b", text):
        tags.append("transposed input (X.T)")
    if any(re.search(rf"\b{name}\.T\b", text) for name, _ in b.params if name != "X"):
        tags.append("a weight used as W.T")
    sizes = [d for name, shape in b.params for axis, d in enumerate(shape) if name != "X" or axis != b.m_axis]
    if any(d % 128 for d in sizes):
        tags.append("a K or N not a multiple of 128")
    if ".T" not in text:
        tags.append("no transpose anywhere")
    return tags


def detail(b, m_axis):
    """The kernel's sizes in one line: each parameter's shape, M written as M."""
    return ", ".join(f"{n}[{shape_text(s, m_axis if n == 'X' else None)}]" for n, s in b.params)


def one_kernel(seed, index, max_flops):
    rng = random.Random(f"shape_sweep:{seed}:{index}")
    fam = rng.choice(FAMILIES)
    target = rng.choice(TARGETS)
    m_drawn = m = draw_m(rng)
    state = rng.getstate()
    while True:  # the same draws at a smaller M: halve M until the FLOPs fit
        rng.setstate(state)
        tags, b, stmts, out, out_m_axis = build(rng, fam, m)
        if out.flops <= max_flops or m == 1:
            break
        m = max(1, m // 2)
    tags = tags + feature_tags(b, m, " ".join([e.text for _, e in stmts] + [out.text]))
    numel = sum(s[0] * s[1] for _, s in b.params) + out.shape[0] * out.shape[1]
    name = f"k{index:03d}"
    return {"index": index, "name": name, "file": f"{name}.tsl", "family": fam[0], "target": target,
            "detail": detail(b, b.m_axis),
            "M": m, "M_drawn": m_drawn, "tags": tags, "params": b.params, "x_m_axis": b.m_axis,
            "stmts": [(n, e.text) for n, e in stmts], "ret": out.text, "out_shape": out.shape,
            "out_m_axis": out_m_axis, "flops": out.flops, "min_bytes": 2 * numel, "tuned": False,
            "ranked": False}


def generate(seed, count, tune, max_flops, rank=0):
    """The first `count` kernels of `seed`; `tune` of them (chosen by the seed) marked tuned, and
    `rank` others (chosen by the seed) marked ranked."""
    kernels = [one_kernel(seed, i, max_flops) for i in range(count)]
    for i in random.Random(f"shape_sweep:{seed}:tune").sample(range(count), min(tune, count)):
        kernels[i]["tuned"] = True
    rest = [k["index"] for k in kernels if not k["tuned"]]
    for i in random.Random(f"shape_sweep:{seed}:rank").sample(rest, min(rank, len(rest))):
        kernels[i]["ranked"] = True
    return kernels


def shape_text(shape, m_axis):
    return ", ".join("M" if axis == m_axis else str(d) for axis, d in enumerate(shape))


def kernel_source(k):
    """The .tsl text of kernel k (M a `const` of the file)."""
    params = ",\n    ".join(f"{n}: bf16[{shape_text(s, k['x_m_axis'] if n == 'X' else None)}]"
                           for n, s in k["params"])
    out = shape_text(k["out_shape"], k["out_m_axis"])
    body = [f"  {n} = {e}" for n, e in k["stmts"]] + [f"  return {k['ret']}"]
    return (f"const M = {k['M']}\n\nkernel {k['name']}(\n    {params}) -> bf16[{out}] {{\n"
            + "\n".join(body) + "\n}\n")

"""trn2 GEMM scoreboard: MetaGEMM as listed (docs/measurements.md §4).

Published schedule (awslabs/nki-autotune autotune/gemm/trn2-scoreboard.md,
"LHS_T x RHS Kernel Results": loop order and "tile sizes per block dimension"
of the best tuned MetaGEMM per square shape, min over iterations):
    | Shape (M, K, N)    | Loop Order | K Tiles | M Tiles | N Tiles | Min (ms) |
    | (512, 512, 512)    | KNM        | 4       | 1       | 1       | 0.054    |
    | (1024, 1024, 1024) | NMK        | 4       | 2       | 1       | 0.076    |
    | (1536, 1536, 1536) | NMK        | 12      | 1       | 1       | 0.141    |
    | (2048, 2048, 2048) | MNK        | 2       | 4       | 2       | 0.269    |
    | (2560, 2560, 2560) | MNK        | 4       | 5       | 1       | 0.483    |
    | (3072, 3072, 3072) | NMK        | 12      | 2       | 2       | 0.795    |
    | (3584, 3584, 3584) | MNK        | 14      | 7       | 1       | 1.247    |
    | (4608, 4608, 4608) | MNK        | 12      | 4       | 3       | 2.573    |
    | (4096, 4096, 4096) | MNK        | 4       | 4       | 2       | 1.823    |
    | (5120, 5120, 5120) | NMK        | 20      | 5       | 2       | 3.504    |
and the MetaGEMM template it tunes (autotune/gemm/kernels.py, config.py,
autotune/core/tensor.py): three loops over blocks in the listed order (tiles
of 128 K x 128 M x 512 N; a loop runs over its blocks only when an operation
nested deeper depends on its axis, else once); an operand block is zeroed in
SBUF and then loaded one tile per `nl.load`; the result block is zeroed in
SBUF at the K loop's position and stored tile by tile after it; the innermost
level multiplies every overlapping (M tile, N tile) over the K tiles present
into a PSUM tile and adds it into the SBUF result block.

Not published, chosen here: the scoreboard does not list where each operand
is loaded (MetaGEMM's relative position 0, 1 or 2 within its two axes, nine
combinations per loop order); this kernel loads both at position 1, between
their two axes: the block of the outer axis, whole along the inner one. That
keeps every operand within SBUF for every listed shape and never loads a
whole operand; the template's own docstring prefers each operand outside the
other operand's free-axis loop "if possible". The "K/M/N Tiles" columns are
read as tiles per block (the scoreboard's "tile sizes per block dimension").
Its LHS x RHS table lists 6 M tiles at M = 512, which is 4 tiles in all, so
its columns' meaning is not certain. Written for tessel.
Run: tessel run trn2_scoreboard_metagemm.py --target trn2 --timing-only
  --latency=benchmark --arg lhsT=bf16[S,S] --arg rhs=bf16[S,S]
"""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE = {"K": 128, "M": 128, "N": 512}
# square size -> (loop order, K, M, N tiles per block), as listed above
LISTED = {512: ("KNM", 4, 1, 1), 1024: ("NMK", 4, 2, 1), 1536: ("NMK", 12, 1, 1),
          2048: ("MNK", 2, 4, 2), 2560: ("MNK", 4, 5, 1), 3072: ("NMK", 12, 2, 2),
          3584: ("MNK", 14, 7, 1), 4096: ("MNK", 4, 4, 2), 4608: ("MNK", 12, 4, 3),
          5120: ("NMK", 20, 5, 2)}
AXES = {"lhs": ("K", "M"), "rhs": ("K", "N"), "result": ("M", "N")}


@nki.jit
def scoreboard_metagemm(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    order, tk, tm, tn = LISTED[M]
    per_block = {"K": tk, "M": tm, "N": tn}
    blocks = {"K": K // TILE["K"] // tk, "M": M // TILE["M"] // tm, "N": N // TILE["N"] // tn}
    # Position p = inside the first p loops of `order`.
    pos = {op: min(order.index(a) for a in AXES[op]) + 1 for op in ("lhs", "rhs")}
    pos["result"] = order.index("K")
    trips = [blocks[order[p]] if any(pos[op] > p and order[p] in AXES[op] for op in pos) else 1
             for p in (0, 1, 2)]
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    hbm = {"lhs": lhsT, "rhs": rhs}
    live = {}

    def extent(op, bound):
        """(first tile, tiles) of each axis of op's block: one block of a bound axis, else all."""
        total = {"K": K // TILE["K"], "M": M // TILE["M"], "N": N // TILE["N"]}
        return {a: (bound[a] * per_block[a], per_block[a]) if a in bound else (0, total[a]) for a in AXES[op]}

    def init(p, bound):
        for op in ("lhs", "rhs"):
            if pos[op] != p:
                continue
            (k0, nk), (f0, nf) = (extent(op, bound)[a] for a in AXES[op])
            free = AXES[op][1]
            blk = nl.zeros((nk, nf, nl.par_dim(TILE["K"]), TILE[free]), dtype=hbm[op].dtype, buffer=nl.sbuf)
            for i in nl.affine_range(nk):
                for j in nl.affine_range(nf):
                    r, c = (k0 + i) * TILE["K"], (f0 + j) * TILE[free]
                    blk[i, j] = nl.load(hbm[op][r:r + TILE["K"], c:c + TILE[free]])
            live[op] = (blk, k0, f0)
        if pos["result"] == p:
            (m0, nm), (n0, nn) = (extent("result", bound)[a] for a in AXES["result"])
            res = nl.zeros((nm, nn, nl.par_dim(TILE["M"]), TILE["N"]), dtype=result.dtype, buffer=nl.sbuf)
            live["result"] = (res, m0, nm, n0, nn)

    def store(p):
        if pos["result"] != p:
            return
        res, m0, nm, n0, nn = live["result"]
        for i in nl.affine_range(nm):
            for j in nl.affine_range(nn):
                r, c = (m0 + i) * TILE["M"], (n0 + j) * TILE["N"]
                nl.store(result[r:r + TILE["M"], c:c + TILE["N"]], value=res[i, j])

    def multiply(bound):
        a, ak0, am0 = live["lhs"]
        b, bk0, bn0 = live["rhs"]
        res, m0, nm, n0, nn = live["result"]
        ext = {**extent("lhs", bound), **extent("rhs", bound)}
        (k0, nk), (mm0, mtiles), (nn0, ntiles) = ext["K"], ext["M"], ext["N"]
        for i in nl.affine_range(mtiles):
            for j in nl.affine_range(ntiles):
                acc = nl.zeros((TILE["M"], TILE["N"]), dtype=nl.float32, buffer=nl.psum)
                for t in nl.affine_range(nk):
                    acc += nl.matmul(a[k0 - ak0 + t, mm0 - am0 + i], b[k0 - bk0 + t, nn0 - bn0 + j],
                                     transpose_x=True)
                res[mm0 - m0 + i, nn0 - n0 + j] = nl.add(res[mm0 - m0 + i, nn0 - n0 + j], acc)

    def level(p, bound):
        init(p, bound)
        if p == 3:
            multiply(bound)
            return
        for blk in nl.affine_range(trips[p]):
            inner = dict(bound)
            if trips[p] > 1:
                inner[order[p]] = blk
            level(p + 1, inner)
        store(p)

    level(0, {})
    return result

"""Index expressions over a tile's own indices, and the predicates made of them.

`nl.arange(n)[:, None]`, `nl.mgrid[...]` (IotaIndex, tracer.py) index a tile;
combined with `+`, `-` and `*` by an integer they are an IndexExpr:
offset + cp * p + cf * f, with `p` the tile's partition index, `f` its free
index and the offset an affine expression of loop variables. A comparison of
one makes a Predicate: what `mask=` and the legacy `nisa.affine_select(pred,
...)` take. Masks are only accepted where tessel can prove them true for every
element of every loop iteration (the full tiles of the tutorials' row loops);
`affine_select` records the predicate itself (docs/nki.md).
"""
from .affine import Affine, MinExpr
from .errors import NkiError

_FLIP = {"is_lt": "is_gt", "is_le": "is_ge", "is_gt": "is_lt", "is_ge": "is_le", "is_equal": "is_equal",
         "not_equal": "not_equal"}


class IndexExpr:
    """offset + sum(coef[axis] * index of axis); extents[axis] is the index's range (0..n-1);
    ndim is the number of tile axes the expression broadcasts over (2 for a tile)."""

    def __init__(self, coefs, extents, offset, ndim, iotas=None):
        self.coefs = {a: c for a, c in coefs.items() if c != 0}
        self.extents = dict(extents)
        self.offset = Affine.of(offset)
        self.ndim = ndim
        # axis -> the (ident, axis) keys of the nl.arange indices on it (a mask's dimensions)
        self.iotas = {a: set(k) for a, k in (iotas or {}).items()}

    @staticmethod
    def of(x):
        if isinstance(x, IndexExpr):
            return x
        if hasattr(x, "as_index_expr"):
            return x.as_index_expr()
        return IndexExpr({}, {}, Affine.of(x), 0)

    def _combine(self, other, sign):
        o = IndexExpr.of(other)
        coefs = dict(self.coefs)
        for a, c in o.coefs.items():
            coefs[a] = coefs.get(a, 0) + sign * c
        extents = dict(self.extents)
        for a, n in o.extents.items():
            if extents.get(a, n) != n:
                raise NkiError("tile indices of sizes %d and %d on one axis" % (extents[a], n))
            extents[a] = n
        iotas = {a: set(k) for a, k in self.iotas.items()}
        for a, k in o.iotas.items():
            iotas.setdefault(a, set()).update(k)
        return IndexExpr(coefs, extents, self.offset + sign * o.offset, max(self.ndim, o.ndim), iotas)

    def __add__(self, other):
        return self._combine(other, 1)

    __radd__ = __add__

    def __sub__(self, other):
        return self._combine(other, -1)

    def __rsub__(self, other):
        return IndexExpr.of(other)._combine(self, -1)

    def __neg__(self):
        return self * -1

    def __mul__(self, k):
        if not isinstance(k, int) or isinstance(k, bool):
            raise NkiError("a tile index times %r is not an affine index (an integer factor only)" % (k,))
        return IndexExpr({a: c * k for a, c in self.coefs.items()}, self.extents, self.offset * k, self.ndim,
                         self.iotas)

    __rmul__ = __mul__

    def _cmp(self, other, cmp):
        return Predicate([(self - other, cmp)])

    def __lt__(self, other):
        return self._cmp(other, "is_lt")

    def __le__(self, other):
        return self._cmp(other, "is_le")

    def __gt__(self, other):
        return self._cmp(other, "is_gt")

    def __ge__(self, other):
        return self._cmp(other, "is_ge")

    def range(self):
        """(lowest, highest) value over the tile's indices and the loop variables' ranges."""
        lo = hi = self.offset.const
        for v, c in self.offset.terms.items():
            first, last = v.lo, v.lo + ((v.hi - 1 - v.lo) // v.step) * v.step
            lo += min(c * first, c * last)
            hi += max(c * first, c * last)
        for a, c in self.coefs.items():
            end = c * (self.extents[a] - 1)
            lo += min(0, end)
            hi += max(0, end)
        return lo, hi


class Predicate:
    """A conjunction of `expr CMP 0` terms (nl's `&` of comparisons)."""

    def __init__(self, terms):
        self.terms = terms

    def __and__(self, other):
        if not isinstance(other, Predicate):
            raise NkiError("a mask combines comparisons of tile indices with &")
        return Predicate(self.terms + other.terms)

    def __or__(self, other):
        raise NkiError("a mask with | is not supported (only & of comparisons)")

    def __bool__(self):
        raise NkiError("a comparison of tile indices used as a Python condition; it is a mask (mask=...)")

    def always_true(self):
        for expr, cmp in self.terms:
            lo, hi = expr.range()
            ok = {"is_lt": hi < 0, "is_le": hi <= 0, "is_gt": lo > 0, "is_ge": lo >= 0,
                  "is_equal": lo == hi == 0, "not_equal": lo > 0 or hi < 0}[cmp]
            if not ok:
                return False
        return True

    def prefix_extents(self, api):
        """NKI's masking: the call runs on the elements where the predicate holds. Each term
        that does not hold everywhere must keep a prefix of one nl.arange index `i` (`i + e < 0`,
        `i + e <= 0`, or the same negated with `>`): {(ident, axis): the count it keeps, an
        affine expression of loop variables}, for restrict_access (tracer.py)."""
        keep = {}
        for expr, cmp in self.terms:
            if Predicate([(expr, cmp)]).always_true():
                continue
            if len(expr.coefs) != 1 or len(expr.iotas.get(next(iter(expr.coefs)), ())) != 1:
                raise NkiError("%s: mask= terms must each compare one nl.arange index (here %d indices)"
                               % (api, len(expr.coefs)))
            (axis, coef), = expr.coefs.items()
            key, = expr.iotas[axis]
            # i < -offset (coef 1) or i < offset (coef -1, the comparison reversed)
            bound = {(1, "is_lt"): -expr.offset, (1, "is_le"): 1 - expr.offset,
                     (-1, "is_gt"): expr.offset, (-1, "is_ge"): expr.offset + 1}.get((coef, cmp))
            if bound is None:
                raise NkiError("%s: mask= keeps only leading elements of a tile (index < bound); this term "
                               "keeps others" % api)
            lowest = IndexExpr({}, {}, bound, 0).range()[0]
            if lowest < 1:
                raise NkiError("%s: the mask keeps no element of the tile in some loop iteration (down to %d), "
                               "which tessel's tile IR cannot express" % (api, lowest))
            keep[key] = bound if key not in keep else MinExpr([keep[key], bound])
        return keep

    def select_form(self):
        """(offset, partition coef, free coef, cmp) of a one-term predicate over a 2-D tile."""
        if len(self.terms) != 1:
            raise NkiError("nisa.affine_select takes one comparison (%d given)" % len(self.terms))
        expr, cmp = self.terms[0]
        bad = [a for a in expr.coefs if a not in (0, 1)] if expr.ndim == 2 else list(expr.coefs)
        if bad or expr.ndim not in (0, 2):
            raise NkiError("nisa.affine_select: the predicate must be over a 2-D tile's [partition, free] "
                           "indices")
        return expr.offset, expr.coefs.get(0, 0), expr.coefs.get(1, 0), cmp


def check_mask(mask, api):
    """Accepts `mask=` when it holds for every element of every iteration (it then changes
    nothing); any other mask is an error naming the call."""
    if mask is None:
        return
    if not isinstance(mask, Predicate):
        raise NkiError("%s: mask=%r is not a comparison of tile indices" % (api, mask))
    if not mask.always_true():
        raise NkiError("%s: mask= is supported only where it holds for every element of every loop "
                       "iteration (here it masks some off: partial tiles need nl.ds(start, min(...)))" % api)

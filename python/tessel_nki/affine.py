"""Integer affine expressions over loop variables (the tile IR's index expressions)."""
from .errors import NkiError


class LoopVar:
    """A traced loop's induction variable (one per IR `for`)."""

    def __init__(self, name):
        self.name = name


class Affine:
    """const + sum(coef * var); immutable."""

    __slots__ = ("terms", "const")

    def __init__(self, terms=None, const=0):
        self.terms = {v: c for v, c in (terms or {}).items() if c != 0}
        self.const = const

    @staticmethod
    def of(x):
        if isinstance(x, Affine):
            return x
        if isinstance(x, bool):
            raise NkiError("a bool is not an index")
        if isinstance(x, int):
            return Affine({}, x)
        try:
            import numpy as np
            if isinstance(x, np.integer):
                return Affine({}, int(x))
        except ImportError:
            pass
        raise NkiError("index expression of type %s is not supported (integers and loop variables only)"
                       % type(x).__name__)

    def is_const(self):
        return not self.terms

    def vars(self):
        return set(self.terms)

    def __add__(self, other):
        if not isinstance(other, (int, Affine)):
            return NotImplemented
        o = Affine.of(other)
        terms = dict(self.terms)
        for v, c in o.terms.items():
            terms[v] = terms.get(v, 0) + c
        return Affine(terms, self.const + o.const)

    __radd__ = __add__

    def __neg__(self):
        return Affine({v: -c for v, c in self.terms.items()}, -self.const)

    def __sub__(self, other):
        if not isinstance(other, (int, Affine)):
            return NotImplemented
        return self + (-Affine.of(other))

    def __rsub__(self, other):
        return Affine.of(other) - self

    def __mul__(self, other):
        if isinstance(other, Affine):
            if other.is_const():
                other = other.const
            elif self.is_const():
                return other * self.const
            else:
                raise NkiError("a product of two loop variables is not an affine index")
        if not isinstance(other, int) or isinstance(other, bool):
            return NotImplemented
        return Affine({v: c * other for v, c in self.terms.items()}, self.const * other)

    __rmul__ = __mul__

    def _concrete(self, what):
        if self.is_const():
            return self.const
        raise NkiError("loop variable used as a Python value (%s); tessel traces a loop body once with a "
                       "symbolic induction variable, so only affine index arithmetic (+, -, * by a constant) "
                       "is supported; use nl.static_range for a loop to unroll" % what)

    def __floordiv__(self, other):
        if self.is_const() and isinstance(other, int):
            return Affine({}, self.const // other)
        raise NkiError("'//' on a loop variable is not an affine index")

    def __mod__(self, other):
        if self.is_const() and isinstance(other, int):
            return Affine({}, self.const % other)
        if isinstance(other, int) and not isinstance(other, bool) and other > 0:
            return Rotation(self, other)
        raise NkiError("'%' on a loop variable is not an affine index")

    def __index__(self):
        return self._concrete("as an integer")

    def __int__(self):
        return self._concrete("int()")

    def __bool__(self):
        return bool(self._concrete("in a condition"))

    def __eq__(self, other):
        if self.is_const() and isinstance(other, int):
            return self.const == other
        self._concrete("in a comparison")

    def __ne__(self, other):
        return not self.__eq__(other)

    def __lt__(self, other):
        return self._concrete("in a comparison") < other

    def __le__(self, other):
        return self._concrete("in a comparison") <= other

    def __gt__(self, other):
        return self._concrete("in a comparison") > other

    def __ge__(self, other):
        return self._concrete("in a comparison") >= other

    __hash__ = None

    def eval(self, env):
        return self.const + sum(c * env[v] for v, c in self.terms.items())

    def text(self):
        parts = []
        for v, c in self.terms.items():
            parts.append("%" + v.name if c == 1 else "%%%s*%d" % (v.name, c))
        out = " + ".join(parts)
        if not parts:
            return str(self.const)
        if self.const > 0:
            out += " + %d" % self.const
        elif self.const < 0:
            out += " - %d" % -self.const
        return out


class MinExpr:
    """min(a, b, ...) of index expressions with a loop variable among them: the
    size of a partial tile (`nl.ds(m * 128, min(128, 647 - m * 128))`). NKI 0.7+
    unrolls its loops at specialization, so Python's min sees integers; tessel
    traces the body once and keeps the min symbolic (the tile IR's `min`)."""

    __slots__ = ("args",)

    def __init__(self, args):
        flat = []
        for a in args:
            flat.extend(a.args if isinstance(a, MinExpr) else [Affine.of(a)])
        consts = [a.const for a in flat if a.is_const()]
        rest = [a for a in flat if not a.is_const()]
        self.args = ([Affine({}, min(consts))] if consts else []) + rest

    def upper(self):
        """A constant bound on the value (what the tile's buffer must hold)."""
        consts = [a.const for a in self.args if a.is_const()]
        if not consts:
            raise NkiError("min(%s) has no constant argument, so the tile has no bounded size"
                           % ", ".join(a.text() for a in self.args))
        return consts[0]

    def eval(self, env):
        return min(a.eval(env) for a in self.args)

    def text(self):
        out = self.args[-1].text()
        for a in reversed(self.args[:-1]):
            out = "min(%s, %s)" % (a.text(), out)
        return out

    def __eq__(self, other):
        return isinstance(other, MinExpr) and self.text() == other.text()

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash(self.text())

    def __bool__(self):
        raise NkiError("a partial tile size (min of a loop variable) used in a condition")


def traced_min(*args, **kwargs):
    """Python's `min` inside the kernel: symbolic when an argument is a loop variable."""
    import builtins
    if kwargs or len(args) < 2 or not any(isinstance(a, (Affine, MinExpr)) and
                                          not (isinstance(a, Affine) and a.is_const()) for a in args):
        return builtins.min(*[a.const if isinstance(a, Affine) and a.is_const() else a for a in args], **kwargs)
    return MinExpr(args)


def extent_bound(e):
    """An extent's constant bound: the extent itself, or a partial tile's upper bound."""
    return e.upper() if isinstance(e, MinExpr) else e


def extent_text(e):
    return e.text() if isinstance(e, MinExpr) else "%d" % e


def extent_value(e, env):
    return e.eval(env) if isinstance(e, MinExpr) else e


class Rotation:
    """`offset + (count % slots) * stride`: a buffer address that rotates with a loop count
    (`nl.ndarray(address=...)`, modalloc.py); nothing else may be done with it."""

    def __init__(self, count, slots, stride=1, offset=0):
        self.count, self.slots, self.stride, self.offset = count, slots, stride, offset

    def __mul__(self, other):
        if isinstance(other, int) and not isinstance(other, bool) and self.offset == 0:
            return Rotation(self.count, self.slots, self.stride * other)
        raise NkiError("a loop count modulo a number is only scaled and offset, as a buffer's address")

    __rmul__ = __mul__

    def __add__(self, other):
        if isinstance(other, int) and not isinstance(other, bool):
            return Rotation(self.count, self.slots, self.stride, self.offset + other)
        raise NkiError("a loop count modulo a number is only scaled and offset, as a buffer's address")

    __radd__ = __add__

    def text(self):
        return "%d + (%s) %% %d * %d" % (self.offset, self.count.text(), self.slots, self.stride)

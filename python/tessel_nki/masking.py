"""`mask=` on an NKI call: NKI's masking runs the call on the elements where the mask holds
and leaves the others untouched (the legacy API's way to write a partial tile:
`nl.load(X[m * 128 + i_p, i_f], mask=(m * 128 + i_p < rows))`).

A mask that holds everywhere changes nothing. Otherwise each of its terms must keep the
leading indices of one nl.arange (Predicate.prefix_extents): every operand dimension that
arange indexes, in the call's operands and in the tile its result is assigned to, is cut to
that count (the tile IR's `min` extent, as `nl.ds(start, min(...))` gives). Other masks are
errors at the call.
"""
import functools

from .tracer import Lazy, current
from .predicate import Predicate
from .errors import NkiError


def masked(fn, api):
    """`fn` (an nl / nisa call) reading a keyword `mask=` as above."""

    @functools.wraps(fn)
    def call(*args, **kwargs):
        mask = kwargs.pop("mask", None)
        if mask is None:
            return fn(*args, **kwargs)
        if not isinstance(mask, Predicate):
            raise NkiError("%s: mask=%r is not a comparison of tile indices" % (api, mask))
        keep = mask.prefix_extents(api)
        tr = current()
        saved = tr.mask, tr.mask_used
        tr.mask, tr.mask_used = keep or None, set()
        try:
            result = fn(*args, **kwargs)
            unused = set(keep) - tr.mask_used
        finally:
            tr.mask, tr.mask_used = saved
        if isinstance(result, Lazy):
            # The tile it is assigned to may take the rest (`acc[m_p, i_f] += nisa.nc_matmul(...)`).
            result.mask, result.mask_unused, result.mask_api = keep or None, unused, api
        elif unused:
            unused_mask(api)
        return result
    return call


def unused_mask(api):
    raise NkiError("%s: mask= compares an nl.arange index that indexes none of the call's operands, so tessel "
                   "cannot tell which elements it masks" % api)

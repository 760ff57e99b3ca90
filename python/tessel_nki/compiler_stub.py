"""The stand-in for nki.compiler (`import neuronxcc.nki.compiler as ncc`).

Hints to the Neuron compiler's own passes change nothing here: tessel runs an
NKI kernel as written, without middle-end transformations or a scheduler that
reorders its instructions (`skip_middle_end_transformations`, `no_reorder`),
and allocates as docs/nki.md says ("Buffers"), which is what
`enable_stack_allocator` asks for too: a tensor's space is freed when its
scope ends [ASSUMED]. `sbuf.auto_alloc()` / `psum.auto_alloc()` are the plain
`nl.sbuf` / `nl.psum` (documented as equivalent). `sbuf.mod_alloc` is read for
the buffer count it fixes (modalloc.py); other direct allocation (`alloc`,
`psum.mod_alloc`) is an error at its line.
"""
import contextlib

from . import modalloc
from .errors import NkiError
from .tracer import PSUM, SBUF


def skip_middle_end_transformations(fn):
    return fn


def enable_stack_allocator(func=None, log_level=50):
    return func if func is not None else (lambda fn: fn)


def no_reorder():
    return contextlib.nullcontext()


class _Allocators:
    def __init__(self, name, space):
        self.name, self.space = name, space

    def auto_alloc(self, *args, **kwargs):
        return self.space

    def _direct(self, api):
        def fn(*args, **kwargs):
            raise NkiError("ncc.%s.%s (direct allocation: the kernel places its buffers) is not supported; "
                           "tessel allocates buffers itself (use nl.%s)" % (self.name, api, self.name))
        return fn

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        if attr == "mod_alloc" and self.space is SBUF:
            return modalloc.sbuf_mod_alloc
        if attr in ("alloc", "mod_alloc"):
            return self._direct(attr)
        raise NkiError("ncc.%s.%s is not supported by tessel's NKI tracer" % (self.name, attr))


sbuf = _Allocators("sbuf", SBUF)
psum = _Allocators("psum", PSUM)
PUBLIC = ("skip_middle_end_transformations", "enable_stack_allocator", "no_reorder", "sbuf", "psum")

"""Installs the stand-in modules as `nki`, `neuronxcc.nki` and their submodules.

A name the stand-in does not define is an error at its use, naming the API
and the kernel's file:line (module __getattr__, PEP 562).
"""
import sys
import types

from . import isa as _isa
from . import isa_scan as _isa_scan
from . import isa_vector as _isa_vector
from . import language as _language
from . import spmd as _spmd
from . import compiler_stub as _compiler
from . import typing_stub as _typing
from .masking import masked as _masked
from .errors import NkiError


class JitKernel:
    """What @nki.jit (and @nki.baremetal, @nki.benchmark(...)) make of a kernel function."""

    def __init__(self, fn):
        self.fn = fn
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn

    def __call__(self, *args, **kwargs):
        return _spmd.launch(self, (), args, kwargs)

    def __getitem__(self, grid):
        """`kernel[g0, g1]`: the kernel on an SPMD launch grid (spmd.py)."""
        return _spmd.Launch(self, grid)


def _decorator(*args, **kwargs):
    if len(args) == 1 and callable(args[0]) and not kwargs:
        return JitKernel(args[0])
    return lambda fn: JitKernel(fn)


def _module(name, public, api_prefix, package=False):
    m = types.ModuleType(name)
    m.__dict__.update(public)
    if package:
        m.__path__ = []

    def __getattr__(attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        raise NkiError("%s.%s is not supported by tessel's NKI tracer (docs/nki.md lists the subset)"
                       % (api_prefix, attr))
    m.__getattr__ = __getattr__
    return m


def _public(mod):
    return {k: v for k, v in vars(mod).items() if not k.startswith("_") and k not in ("NkiError",)}


def install():
    """Puts the stand-ins on sys.modules (replacing any real NKI)."""
    lang = _public(_language)
    for k in ("Lazy", "Tensor", "View", "Tracer", "Space", "ParDim", "Slice", "IotaIndex", "UnsupportedDType",
              "BF16", "F32", "HBM", "PRIVATE_HBM", "PSUM", "SBUF", "SHARED_HBM", "UNSUPPORTED_DTYPES", "Affine",
              "isa", "isa_scan", "isa_vector", "builtins", "check_mask", "as_dtype", "current", "traced_range"):
        lang.pop(k, None)
    isa_pub = {k: v for k, v in _public(_isa).items()
               if k in ("nc_matmul", "nc_transpose", "dma_copy", "dma_transpose", "tensor_copy", "tensor_tensor",
                        "tensor_scalar", "activation", "activation_reduce", "memset", "tensor_engine",
                        "vector_engine", "scalar_engine", "gpsimd_engine", "unknown_engine")}
    isa_pub.update({k: getattr(_isa_vector, k) for k in ("tensor_reduce", "tensor_partition_reduce", "iota",
                                                                     "affine_select")})
    isa_pub.update({k: getattr(_isa_scan, k) for k in ("tensor_tensor_scan", "bn_stats", "bn_aggr")})
    # The data movement and nisa calls read mask= as NKI's masking (masking.py); the nl
    # functions that are also op= values (nl.exp, nl.copy, nl.add) keep their identity.
    for k in ("load", "store", "load_transpose2d", "matmul"):
        lang[k] = _masked(lang[k], "nl." + k)
    for k, v in isa_pub.items():
        if callable(v) and not k.endswith("_engine"):
            isa_pub[k] = _masked(v, "nisa." + k)
    top = {"jit": _decorator, "baremetal": _decorator, "benchmark": _decorator, "trace": _decorator}
    for root, prefix in (("nki", "nki"), ("neuronxcc.nki", "nki")):
        nl = _module(root + ".language", lang, "nl")
        ni = _module(root + ".isa", isa_pub, "nisa")
        nt = _module(root + ".typing", {k: getattr(_typing, k) for k in ("tensor", "mutable_tensor", "mutable")},
                     "nt")
        nc = _module(root + ".compiler", {k: getattr(_compiler, k) for k in _compiler.PUBLIC}, "ncc")
        pkg = _module(root, dict(top, language=nl, isa=ni, typing=nt, compiler=nc), prefix, package=True)
        sys.modules[root] = pkg
        sys.modules[root + ".language"] = nl
        sys.modules[root + ".isa"] = ni
        sys.modules[root + ".typing"] = nt
        sys.modules[root + ".compiler"] = nc
    neuronxcc = _module("neuronxcc", {"nki": sys.modules["neuronxcc.nki"]}, "neuronxcc", package=True)
    sys.modules["neuronxcc"] = neuronxcc

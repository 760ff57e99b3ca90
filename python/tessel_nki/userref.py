"""`tessel run kernel.py --check --reference ref.py:FUNC`: the kernel's math as its author states it.

FUNC is a numpy function called with the kernel's inputs, in the kernel's parameter order: each input
tensor as the float32 array the simulator read (bf16 inputs hold bf16 values), each other parameter
with the value the kernel got (--arg or its default; a dtype as a numpy dtype). Parameters the kernel
only writes (outputs passed in) are left out. It returns the outputs (one array, or a tuple in the
kernel's output order: the returned tensors, then the written parameters), which are compared with
the simulated ones: every simulated value finite where the reference is, and the largest absolute error at most `tolerance`
times the largest |reference| value (docs/nki.md).
"""
import importlib.util
import os
import sys
import traceback

from .errors import NkiError
from .tracer import F32, DType, Tensor


def _load(spec):
    path, _, func = spec.rpartition(":")
    if not path or not func:
        raise NkiError("--reference '%s': expected FILE.py:FUNCTION" % spec, False)
    if not os.path.exists(path):
        raise NkiError("--reference: cannot read '%s': no such file" % path, False)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    mod_spec = importlib.util.spec_from_file_location("tessel_nki_reference", path)
    mod = importlib.util.module_from_spec(mod_spec)
    try:
        mod_spec.loader.exec_module(mod)
    except NkiError:
        raise
    except Exception as e:
        raise NkiError("importing the reference raised %s: %s" % (type(e).__name__, e), _loc(e, path) or False)
    fn = getattr(mod, func, None)
    if not callable(fn):
        raise NkiError("--reference: %s defines no function '%s'" % (path, func), False)
    return path, fn


def _loc(exc, path):
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if os.path.abspath(f.filename) == os.path.abspath(path)]
    return (frames[-1].filename, frames[-1].lineno) if frames else None


def _numpy_value(np, v, directory):
    if isinstance(v, Tensor):
        return np.load(os.path.join(directory, "in", v.name + ".npy"))
    if isinstance(v, DType):
        if v is F32:
            return np.float32
        try:
            import ml_dtypes
            return ml_dtypes.bfloat16
        except ImportError:
            return np.float32
    return v


def check(outputs, values, directory, spec, tolerance):
    import numpy as np
    path, fn = _load(spec)
    written = {id(t) for t in outputs}
    args = [_numpy_value(np, v, directory) for _, v in values if not (isinstance(v, Tensor) and id(v) in written)]
    try:
        result = fn(*args)
    except Exception as e:
        raise NkiError("the reference %s raised %s: %s" % (spec, type(e).__name__, e), _loc(e, path) or False)
    refs = list(result) if isinstance(result, (tuple, list)) else [result]
    if len(refs) != len(outputs):
        return {"passed": False, "tolerance": tolerance,
                "error": "the reference %s returned %d arrays for the kernel's %d outputs (%s)"
                         % (spec, len(refs), len(outputs), ", ".join(t.name for t in outputs))}
    max_abs = max_ref = 0.0
    finite = True
    for t, ref in zip(outputs, refs):
        sim = np.load(os.path.join(directory, "out", t.name + ".npy")).astype(np.float64)
        ref = np.asarray(ref, dtype=np.float64)
        if ref.shape != sim.shape:
            return {"passed": False, "tolerance": tolerance,
                    "error": "output %s has shape %s, the reference's %s" % (t.name, list(sim.shape),
                                                                           list(ref.shape))}
        finite = finite and bool(np.isfinite(sim)[np.isfinite(ref)].all())
        both = np.isfinite(ref) & np.isfinite(sim)
        diff = np.where(both, np.abs(sim - ref), np.where(sim == ref, 0.0, np.inf))
        max_abs = max(max_abs, float(diff.max()) if diff.size else 0.0)
        max_ref = max(max_ref, float(np.abs(ref[np.isfinite(ref)]).max()) if np.isfinite(ref).any() else 0.0)
    rel = max_abs / max_ref if max_ref > 0 else max_abs
    return {"reference": "%s (numpy, the kernel's math)" % spec, "tolerance": tolerance, "max_abs_err": max_abs,
            "max_rel_err": rel, "max_abs_reference": max_ref, "passed": bool(finite and rel <= tolerance)}

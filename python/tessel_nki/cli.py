"""Command line of the tracer (run by the tessel driver, compiler/NkiInput.cpp).

  nki_trace.py KERNEL.py [-k NAME] --arg NAME=DTYPE[D0,D1,...]... --geometry K=V,...
      prints the kernel's tile IR (.tir) on stdout.
  nki_trace.py KERNEL.py ... --reference DIR --tolerance T
      executes the same trace with numpy on DIR/in/<name>.npy, compares with the
      simulator's DIR/out/<name>.npy and prints the check as JSON.
Errors: `file:line: error: message` on stderr, exit status 1 -- also for the kernel's BaseExceptions,
sys.exit and os._exit. Only the IR (or JSON) goes to stdout: the kernel's own writes to stdout go to stderr.
"""
import argparse
import importlib.util
import inspect
import json
import os
import re
import sys
import traceback

from . import emit, errors, modules, typing_stub
from .errors import NkiError
from .progress import Progress
from .tracer import BF16, F32, Tracer

_ARG_RE = re.compile(r"^([A-Za-z_]\w*)=(bf16|f32|bfloat16|float32)\[(\s*\d+\s*(,\s*\d+\s*)*)\]$")
_TENSOR_LIKE_RE = re.compile(r"^([A-Za-z_]\w*)=\w+\[.*\]$")
_VALUE_RE = re.compile(r"^([A-Za-z_]\w*)=(.+)$", re.S)


def parse_arg(spec):
    """(name, "tensor", (dtype, shape)) for NAME=DTYPE[D0,...]; (name, "value", v) for NAME=VALUE,
    VALUE a Python literal (int, float, tuple, None, True/False, a string) or a dtype name."""
    m = _ARG_RE.match(spec.replace(" ", ""))
    if m:
        dtype = BF16 if m.group(2) in ("bf16", "bfloat16") else F32
        shape = tuple(int(x) for x in m.group(3).split(","))
        if any(d <= 0 for d in shape):
            raise NkiError("--arg '%s': dimensions must be positive, got %s" % (spec, list(shape)), False)
        return m.group(1), "tensor", (dtype, shape)
    if _TENSOR_LIKE_RE.match(spec.replace(" ", "")):
        raise NkiError("malformed --arg '%s': a tensor is NAME=DTYPE[D0,D1,...] with DTYPE bf16 or f32" % spec,
                       False)
    m = _VALUE_RE.match(spec)
    if not m:
        raise NkiError("malformed --arg '%s': expected NAME=DTYPE[D0,D1,...] (a tensor) or NAME=VALUE (an int, "
                       "float, tuple, None, True/False or dtype)" % spec, False)
    return m.group(1), "value", parse_value(spec, m.group(2).strip())


def parse_value(spec, text):
    """A non-tensor kernel argument from its --arg text."""
    import ast
    from .language import bfloat16, float32
    from .tracer import UNSUPPORTED_DTYPES, UnsupportedDType
    name = text.split(".")[-1] if text.startswith(("nl.", "np.", "numpy.", "nki.language.")) else text
    if name in ("bf16", "bfloat16"):
        return bfloat16
    if name in ("f32", "float32"):
        return float32
    if name in UNSUPPORTED_DTYPES:
        return UnsupportedDType(name)
    if name in ("inf", "-inf", "nan"):
        return float(name)
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        raise NkiError("--arg '%s': '%s' is neither a Python literal (int, float, tuple, None, True/False, "
                       "'string') nor a dtype (bf16, f32, nl.float32, ...)" % (spec, text), False)


def load_module(path):
    if not os.path.exists(path):
        raise NkiError("cannot read '%s': no such file" % path, False)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    errors.given_path[0] = path
    spec = importlib.util.spec_from_file_location("tessel_nki_kernel", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def select_kernel(mod, path, name):
    """The nki.jit kernel -k names (or the file's only one), or with -k a function of the file that
    launches one (`kernel[grid](...)`, as the tutorials' callers do)."""
    kernels = {k: v for k, v in vars(mod).items() if isinstance(v, modules.JitKernel)}
    if name:
        f = vars(mod).get(name)
        if name not in kernels and inspect.isfunction(f) and f.__module__ == mod.__name__:
            return f
        if name not in kernels:
            raise NkiError("no nki.jit kernel or function '%s' in %s (kernels: %s)"
                           % (name, path, ", ".join(sorted(kernels)) or "none"), False)
        return kernels[name]
    if len(kernels) != 1:
        raise NkiError("%s has %s nki.jit kernels; choose one with -k (%s)"
                       % (path, len(kernels) or "no", ", ".join(sorted(kernels))), False)
    return next(iter(kernels.values()))


def _kernel_args(tr, fn, sig, args):
    """The values the kernel is called with, in parameter order: symbolic HBM tensors for the
    tensor --args, the other --args' values, else the parameters' defaults."""
    values = []
    for p in sig.parameters.values():
        if p.name in args:
            kind, v = args[p.name]
            if kind == "tensor":
                dt, shape = v
                typing_stub.check_argument(p.name, p.annotation, shape)
                v = tr.new_tensor(shape, dt, "hbm", p.name, role="input",
                                  loc=(errors.display_path(fn.__code__.co_filename), fn.__code__.co_firstlineno))
            values.append((p.name, v))
        elif p.default is not inspect.Parameter.empty:
            values.append((p.name, p.default))
        else:
            raise NkiError("kernel argument '%s' needs a value: --arg %s=bf16[D0,D1] (a tensor; or --input "
                           "%s=FILE.npy) or --arg %s=VALUE (an int, float, tuple, None or dtype)"
                           % (p.name, p.name, p.name, p.name), False)
    return values


def trace(path, kernel_name, arg_specs, geometry, time_limit=0, grid=""):
    """Runs the kernel under the tracer; returns (tracer, kernel name, outputs, [(parameter, value)])."""
    from . import spmd
    cli_grid = spmd.parse_grid(grid) if grid else ()
    modules.install()
    args = {}
    for spec in arg_specs:
        n, kind, v = parse_arg(spec)
        if n in args:
            raise NkiError("--arg %s given twice" % n, False)
        args[n] = (kind, v)
    mod = load_module(path)
    kernel = select_kernel(mod, path, kernel_name)
    launcher = not isinstance(kernel, modules.JitKernel)
    fn = kernel if launcher else kernel.fn
    sig = inspect.signature(fn)
    for n in args:
        if n not in sig.parameters:
            raise NkiError("kernel %s has no parameter '%s' (parameters: %s)"
                           % (kernel.__name__, n, ", ".join(sig.parameters)), False)
    tr = Tracer(geometry, Progress(path, time_limit))
    tr.cli_grid = cli_grid
    with tr:
        values = _kernel_args(tr, fn, sig, args)
        if launcher:
            tr.launcher = fn
            result = fn(*[v for _, v in values])
            if not tr.launched:
                raise NkiError("function '%s' launched no nki.jit kernel" % fn.__name__,
                               (fn.__code__.co_filename, fn.__code__.co_firstlineno))
        else:
            result = spmd.run_kernel(tr, fn, cli_grid, [v for _, v in values], {})
        tr.flush()
        if tr.deferred_errors:
            raise tr.deferred_errors[0]
        outputs = finish_roles(tr, result)
        emit.resolve_accumulation(tr)
        emit.choose_bufs(tr)
    return tr, kernel.__name__, outputs, values


def finish_roles(tr, result):
    from .tracer import Tensor
    returned = result if isinstance(result, (tuple, list)) else ([] if result is None else [result])
    outputs = []
    for r in returned:
        if not isinstance(r, Tensor) or r.space != "hbm":
            raise NkiError("the kernel returns %r; it must return HBM tensors (nl.shared_hbm)" % (r,),
                           (tr.args[0].loc if tr.args else None))
        if r.role == "input":
            raise NkiError("the kernel returns its argument '%s'" % r.name, r.loc)
        if r.role != "output":
            raise NkiError("returned tensor '%s' is allocated inside a loop" % r.name, r.loc)
        outputs.append(r)
    for t in tr.tensors:
        if t.role == "output" and t not in outputs:
            t.role = "scratch"
    # An argument the kernel only writes is an output (kernels that take their result as a parameter).
    for t in list(tr.args):
        if t.written:
            if t.read:
                raise NkiError("kernel argument '%s' is read and written; in/out arguments are not supported"
                               % t.name, t.written)
            t.role = "output"
            outputs.append(t)
    if not outputs:
        raise NkiError("the kernel has no output (return a tensor allocated in nl.shared_hbm)",
                       tr.args[0].loc if tr.args else None)
    return outputs


def parse_geometry(text):
    g = {}
    for item in text.split(","):
        k, _, v = item.partition("=")
        g[k] = int(v)
    return g


def _stdout_for_results():
    """Returns a text stream on the real stdout and sends everything else written to stdout to stderr.

    The driver reads stdout as the tile IR (or the --reference JSON), and the kernel's own
    code -- print(), sys.stdout.write, os.write(1, ...), also at import or exit time -- must
    not get into it: from here on fd 1 and sys.stdout are stderr, where the user still sees
    their output, and only the returned stream writes to the original stdout.
    """
    sys.stdout.flush()
    try:
        real = os.dup(1)
    except OSError:  # no fd 1: nothing to protect at the fd level
        real = None
    if real is not None:
        os.dup2(2, 1)
    sys.stdout = sys.stderr
    if real is None:
        return sys.__stdout__
    return os.fdopen(real, "w", encoding="utf-8")


class _OsExit(BaseException):
    """os._exit(status) called by the kernel's code (a BaseException, like SystemExit)."""

    def __init__(self, status):
        super().__init__(status)
        self.status = status


def _catch_os_exit():
    """Makes os._exit in this process raise _OsExit, so that it is reported at the kernel's line.

    A process the kernel's code forks still exits for real. posix._exit stays uncatchable
    (the driver is to report a tracer that fails without an error message itself).
    """
    real_exit, pid = os._exit, os.getpid()

    def _exit(status):
        if os.getpid() != pid:
            real_exit(status)
        raise _OsExit(status)
    os._exit = _exit


def _kernel_loc(exc, path):
    """'file:line: ' of the innermost frame of the kernel's file in exc's traceback, or ''."""
    tb = traceback.extract_tb(exc.__traceback__)
    frames = [f for f in tb if os.path.abspath(f.filename) == os.path.abspath(path)]
    return "%s:%d: " % (frames[-1].filename, frames[-1].lineno) if frames else ""


def _text(exc):
    try:
        return str(exc)
    except BaseException:  # an exception class of the kernel's with a failing __str__
        return "<unprintable %s>" % type(exc).__name__


def main(argv=None):
    ap = argparse.ArgumentParser(prog="nki_trace")
    ap.add_argument("kernel")
    ap.add_argument("-k", dest="name", default="")
    ap.add_argument("--arg", action="append", default=[])
    ap.add_argument("--geometry", required=True)
    ap.add_argument("--reference", default="")
    ap.add_argument("--tolerance", type=float, default=2e-2)
    ap.add_argument("--user-reference", default="")  # FILE.py:FUNC, a numpy function of the kernel's inputs
    ap.add_argument("--time-limit", type=int, default=0)  # seconds the driver gives the tracer (0: none)
    ap.add_argument("--grid", default="")  # G0,G1,...: the SPMD launch grid
    opts = ap.parse_args(argv)
    out = _stdout_for_results()
    _catch_os_exit()
    try:
        geometry = parse_geometry(opts.geometry)
        tr, name, outputs, values = trace(opts.kernel, opts.name, opts.arg, geometry, opts.time_limit, opts.grid)
        if opts.reference and opts.user_reference:
            from . import userref
            text = json.dumps(userref.check(outputs, values, opts.reference, opts.user_reference,
                                            opts.tolerance)) + "\n"
        elif opts.reference:
            from . import reference
            text = json.dumps(reference.check(tr, outputs, opts.reference, opts.tolerance)) + "\n"
        else:
            text = emit.emit(tr, name, outputs)
    except NkiError as e:
        sys.stderr.write(e.format() + "\n")
        return 1
    except SyntaxError as e:
        if e.filename and e.lineno:  # a syntax error of the kernel's file (or a module it imports)
            sys.stderr.write("%s:%s: error: %s\n" % (e.filename, e.lineno, e.msg))
        else:  # raise SyntaxError(...) in the kernel's code
            sys.stderr.write("%serror: SyntaxError: %s\n" % (_kernel_loc(e, opts.kernel), _text(e)))
        return 1
    except (SystemExit, _OsExit) as e:  # sys.exit(), exit(), raise SystemExit or os._exit in the kernel's code
        if isinstance(e, _OsExit):
            call = "os._exit(%r)" % (e.status,)
        else:
            call = "sys.exit()" if e.code is None else "sys.exit(%r)" % (e.code,)
        sys.stderr.write("%serror: the kernel called %s; a kernel cannot exit while tessel traces it\n"
                         % (_kernel_loc(e, opts.kernel), call))
        return 1
    except ModuleNotFoundError as e:
        if e.name != "numpy":
            return _report(e, opts.kernel)
        sys.stderr.write("%serror: No module named 'numpy': tessel runs the NKI tracer with %s, which has no numpy; "
                         "install it there (%s -m pip install numpy, or apt-get install python3-numpy) or set "
                         "TESSEL_PYTHON to a python3 that has numpy (cmake -DTESSEL_PYTHON=... sets the "
                         "default)\n" % (_kernel_loc(e, opts.kernel) or _kernel_loc(e, _ref_path(opts)),
                                         sys.executable, sys.executable))
        return 1
    except BaseException as e:  # an error of the kernel's own Python code (also KeyboardInterrupt & co.)
        return _report(e, opts.kernel)
    out.write(text)
    out.flush()
    return 0


def _ref_path(opts):
    return opts.user_reference.rpartition(":")[0] if opts.user_reference else ""


def _report(e, path):
    msg = _text(e)
    sys.stderr.write("%serror: %s%s\n" % (_kernel_loc(e, path), type(e).__name__, ": " + msg if msg else ""))
    return 1

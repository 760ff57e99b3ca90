"""SPMD launch grids: `kernel[g0, g1](...)`, `--grid G0,G1`, nl.program_id / num_programs / program_ndim.

Every program instance runs on the one NeuronCore tessel simulates. The grid is
one `parallel` IR loop per axis around the kernel's body, axis 0 outermost, so
the instances are issued in row-major grid order and, being independent (an
SPMD instance sees only its program id), the next instance's loads may overlap
the current one's compute, as iterations of an `nl.affine_range` loop do
(docs/nki.md, "SPMD grids"). A tensor the body allocates in HBM is allocated
once for all instances (`nl.shared_hbm`: the tensor shared between the
instances, which each write their part of).
"""
from .affine import Affine, LoopVar
from .errors import NkiError, user_loc
from .tracer import Loop, current


def parse_grid(text):
    """--grid G0,G1,...: a tuple of positive ints."""
    try:
        grid = tuple(int(x) for x in text.split(","))
    except ValueError:
        grid = ()
    if not grid or any(g <= 0 for g in grid):
        raise NkiError("malformed --grid '%s': expected positive integers G0,G1,... (e.g. --grid 2,2)" % text,
                       False)
    return grid


def check_grid(grid):
    """The grid of `kernel[grid]` as a tuple of positive ints; anything else is an error at the launch."""
    grid = grid if isinstance(grid, tuple) else (grid,)
    for g in grid:
        if not isinstance(g, int) or isinstance(g, bool) or g <= 0:
            raise NkiError("launch grid %r: each dimension must be a positive integer (tessel runs every "
                           "instance on one NeuronCore; nl.nc / nl.spmd_dim are not supported)" % (grid,))
    return grid


def open_grid(tr, grid, loc):
    """Opens one parallel loop per grid axis (axis 0 outermost); their bodies are the kernel's top level."""
    tr.grid = grid
    tr.grid_ids = []
    tr.grid_first = None
    for axis, n in enumerate(grid):
        var = LoopVar(tr.unique("program%d" % axis))
        var.lo, var.hi, var.step = 0, n, 1
        loop = Loop(var, 0, n, 1, True, loc, tr.block)
        tr.append(loop)
        if tr.grid_first is None:
            tr.grid_first = loop
        tr.block = loop.body
        tr.grid_ids.append(Affine({var: 1}, 0))
    tr.top = tr.block


def close_grid(tr):
    tr.flush()
    tr.block = tr.root


def _grid():
    tr = current()
    if tr.grid is None:
        raise NkiError("the kernel is not launched on an SPMD grid: give --grid G0,G1,... or run (-k) a "
                       "function that launches it as kernel[G0, G1](...)")
    return tr.grid


def program_id(axis=0):
    """The instance's index along `axis`: the grid loop's variable."""
    grid = _grid()
    if not isinstance(axis, int) or isinstance(axis, bool) or not 0 <= axis < len(grid):
        raise NkiError("nl.program_id(%r): the launch grid %s has axes 0 to %d" % (axis, list(grid), len(grid) - 1))
    return current().grid_ids[axis]


def num_programs(axes=None):
    """Instances along `axes` (an int or a tuple of them); all of them for None."""
    tr = current()
    grid = tr.grid or ()
    if axes is None:
        n = 1
        for g in grid:
            n *= g
        return n
    grid = _grid()
    for a in (axes if isinstance(axes, (tuple, list)) else (axes,)):
        if not isinstance(a, int) or isinstance(a, bool) or not 0 <= a < len(grid):
            raise NkiError("nl.num_programs(%r): the launch grid %s has axes 0 to %d"
                           % (axes, list(grid), len(grid) - 1))
    if isinstance(axes, (tuple, list)):
        n = 1
        for a in axes:
            n *= grid[a]
        return n
    return grid[axes]


def program_ndim():
    """The number of grid axes (0 without a grid)."""
    return len(current().grid or ())


def _multi_core(api):
    def fn(*args, **kwargs):
        raise NkiError("%s: distributing a launch grid over physical NeuronCores is not supported (tessel "
                       "simulates one NeuronCore; launch kernel[G0, G1])" % api)
    return fn


nc = _multi_core("nl.nc")
spmd_dim = _multi_core("nl.spmd_dim")


class Launch:
    """`kernel[grid]`: called, it runs the kernel on that grid (inside a traced launcher)."""

    def __init__(self, kernel, grid):
        self.kernel, self.grid = kernel, check_grid(grid)

    def __call__(self, *args, **kwargs):
        return launch(self.kernel, self.grid, args, kwargs)


def launch(kernel, grid, args, kwargs):
    """A launcher function (run with -k) calling `kernel[grid](...)` or `kernel(...)`; inside a running
    kernel, `helper(...)` of an nki.jit function is a sub-kernel (`nki.jit(mode='trace')`), traced
    inline where it is called."""
    tr = current() if _active() else None
    if tr is not None and tr.in_kernel:
        if grid:
            raise NkiError("launching '%s' on a grid from inside a kernel is not supported; call it as a "
                           "sub-kernel (%s(...))" % (kernel.__name__, kernel.__name__))
        return _with_traced_builtins(kernel.fn, lambda: kernel.fn(*args, **kwargs))
    if tr is None or tr.launcher is None:
        raise NkiError("calling an nki.jit kernel from Python is not supported under tessel; run it with "
                       "`tessel run FILE.py -k %s` (or -k the function that launches it)" % kernel.__name__)
    if tr.launched:
        raise NkiError("a second kernel launch: tessel runs one kernel launch per trace (the first was "
                       "at %s:%d)" % tr.launched)
    if grid and tr.cli_grid:
        raise NkiError("the kernel is launched on the grid %s and --grid is given too; give one"
                       % list(grid))
    tr.launched = user_loc()
    return run_kernel(tr, kernel.fn, grid or tr.cli_grid, args, kwargs)


def _active():
    from . import tracer
    return tracer._current is not None


def run_kernel(tr, fn, grid, args, kwargs):
    """Calls the kernel's function under `tr`, inside the grid's loops when there is a grid."""
    def body():
        if grid:
            open_grid(tr, grid, (fn.__code__.co_filename, fn.__code__.co_firstlineno))
        result = fn(*args, **kwargs)
        if grid:
            close_grid(tr)
        return result
    tr.in_kernel = True
    try:
        return _with_traced_builtins(fn, body)
    finally:
        tr.in_kernel = False


def _with_traced_builtins(fn, call):
    """call() with `range` and `min` of fn's module traced (an IR loop; a symbolic min), as NKI
    traces them; the module's own names are restored after."""
    import builtins
    from . import language
    from .affine import traced_min
    g = fn.__globals__
    saved = {k: g.get(k, builtins) for k in ("range", "min")}  # builtins: not defined in the module
    g["range"], g["min"] = language.traced_range, traced_min
    try:
        return call()
    finally:
        for k, v in saved.items():
            if v is builtins:
                del g[k]
            else:
                g[k] = v

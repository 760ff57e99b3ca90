"""Located errors: every error names the kernel's file:line that caused it."""
import os
import sys

_PKG_DIR = os.path.dirname(os.path.abspath(__file__))
# The tracer's entry script (python/nki_trace.py): a tool file, never the user's location.
_ENTRY_SCRIPT = os.path.join(os.path.dirname(_PKG_DIR), "nki_trace.py")
# While the op of a lazily materialised tile is recorded, the line that created the tile.
location_override = [None]
# The kernel's path as the user gave it (cli.load_module): locations name it so, as tessel names a
# .tsl file, where Python's code objects hold the absolute path of an imported file.
given_path = [None]


def display_path(fn):
    """`fn` as the user named it: the given kernel path when it is that file, else unchanged."""
    given = given_path[0]
    if given and not fn.startswith("<") and os.path.abspath(fn) == os.path.abspath(given):
        return given
    return fn


class NkiError(Exception):
    """An error in the traced kernel; `loc` is (file, line) in the kernel's source."""

    def __init__(self, msg, loc=None):
        super().__init__(msg)
        self.msg = msg
        self.loc = loc if loc is not None else (location_override[0] or user_loc())

    def format(self):
        if self.loc:
            return "%s:%d: error: %s" % (self.loc[0], self.loc[1], self.msg)
        return "error: " + self.msg


def user_loc():
    """The innermost (file, line) of the call stack outside this package."""
    f = sys._getframe(1)
    while f is not None:
        fn = f.f_code.co_filename
        path = os.path.abspath(fn)
        if not path.startswith(_PKG_DIR + os.sep) and path != _ENTRY_SCRIPT and not fn.startswith("<"):
            return (display_path(fn), f.f_lineno)
        f = f.f_back
    return None


def user_source_line():
    """The text of the user's line at user_loc(), or ''."""
    loc = user_loc()
    if not loc:
        return ""
    import linecache
    return linecache.getline(loc[0], loc[1])

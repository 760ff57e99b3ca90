"""The NKI calls and names --emit=nki may write, per API generation, as the
NKI API reference documents them (each row names its page), and a check that
holds an emitted kernel to them.

usage: nki_signatures.py current|legacy KERNEL.py

Every call `nisa.F(...)` / `nl.F(...)` / `ncc.X.F(...)` must be a documented function of that
generation, called with no more positional arguments than the page lists
before its keyword-only ones and only with keyword names the page lists;
every other `nl.X` / `nisa.X` must be a documented name (dtypes, buffers,
activation functions, ALU operators). Prints one line per call kind checked;
exits 1 naming the first undocumented use.
"""
import ast
import sys

DOCS = "https://awsdocs-neuron.readthedocs-hosted.com"
CURRENT = DOCS + "/en/v2.33.0/nki/api/generated/"   # NKI 0.7 (Neuron 2.33), trn2/trn3
LEGACY = DOCS + "/en/v2.26.1/nki/api/generated/"    # neuronxcc.nki (Neuron 2.26), trn1/inf2

# name: (positional parameters, keyword-only parameters, page)
SIGNATURES = {
    "current": {
        "nisa.nc_matmul": (["dst", "stationary", "moving", "is_stationary_onezero", "is_moving_onezero",
                            "is_transpose", "accumulate", "tile_position", "tile_size", "perf_mode", "name"], [],
                           CURRENT + "nki.isa.nc_matmul.html"),
        "nisa.nc_transpose": (["dst", "data", "engine", "name"], [],
                              DOCS + "/general/nki/api/generated/nki.isa.nc_transpose.html"),
        "nisa.dma_copy": (["dst", "src", "oob_mode", "dge_mode", "engine", "name"], [],
                          DOCS + "/general/nki/api/generated/nki.isa.dma_copy.html"),
        "nisa.dma_transpose": (["dst", "src", "axes", "dge_mode", "oob_mode", "name"], [],
                               DOCS + "/general/nki/api/generated/nki.isa.dma_transpose.html"),
        "nisa.activation": (["dst", "op", "data", "bias", "scale", "reduce_op", "reduce_res", "reduce_cmd",
                             "engine", "name"], [], CURRENT + "nki.isa.activation.html"),
        "nisa.tensor_tensor": (["dst", "data1", "data2", "op", "engine", "name"], [],
                               CURRENT + "nki.isa.tensor_tensor.html"),
        "nisa.tensor_scalar": (["dst", "data", "op0", "operand0", "reverse0", "op1", "operand1", "reverse1",
                                "engine", "name"], [], CURRENT + "nki.isa.tensor_scalar.html"),
        "nisa.tensor_copy": (["dst", "src", "engine", "name"], [],
                             DOCS + "/general/nki/api/generated/nki.isa.tensor_copy.html"),
        "nisa.memset": (["dst", "value", "engine", "name"], [], CURRENT + "nki.isa.memset.html"),
        "nl.ndarray": (["shape", "dtype", "buffer", "name", "address"], [], CURRENT + "nki.language.ndarray.html"),
        "nl.ds": (["start", "size"], [], CURRENT + "nki.language.ds.html"),
        "nl.affine_range": (["start", "stop", "step"], [], CURRENT + "nki.language.affine_range.html"),
        "nl.sequential_range": (["start", "stop", "step"], [], CURRENT + "nki.language.sequential_range.html"),
    },
    "legacy": {
        "nisa.nc_matmul": (["stationary", "moving"], ["is_stationary_onezero", "is_moving_onezero",
                                                      "is_transpose", "tile_position", "tile_size", "mask"],
                           LEGACY + "nki.isa.nc_matmul.html"),
        "nisa.nc_transpose": (["data"], ["mask", "dtype", "engine"], LEGACY + "nki.isa.nc_transpose.html"),
        "nisa.dma_copy": ([], ["dst", "src", "mask", "dst_rmw_op", "oob_mode", "dge_mode"],
                          DOCS + "/en/latest/general/nki/api/generated/nki.isa.dma%5Fcopy.html"),
        "nisa.activation": (["op", "data"], ["bias", "scale", "reduce_op", "reduce_res", "reduce_cmd", "mask",
                                             "dtype"], LEGACY + "nki.isa.activation.html"),
        "nisa.tensor_tensor": (["data1", "data2", "op"], ["dtype", "mask", "engine"],
                               DOCS + "/en/latest/general/nki/api/generated/nki.isa.tensor%5Ftensor.html"),
        "nisa.tensor_scalar": (["data", "op0", "operand0", "reverse0", "op1", "operand1", "reverse1"],
                               ["dtype", "mask", "engine"],
                               DOCS + "/en/latest/general/nki/api/generated/nki.isa.tensor%5Fscalar.html"),
        "nisa.tensor_copy": (["src"], ["mask", "dtype", "engine"], LEGACY + "nki.isa.tensor_copy.html"),
        "nisa.memset": (["shape", "value", "dtype"], ["mask", "engine"], LEGACY + "nki.isa.memset.html"),
        "nl.load": (["src"], ["mask", "dtype"], DOCS + "/general/nki/api/generated/nki.language.load.html"),
        "nl.store": (["dst", "value"], ["mask"], DOCS + "/en/latest/nki/api/generated/nki.language.store.html"),
        "nl.load_transpose2d": (["src"], ["mask", "dtype"], LEGACY + "nki.language.load_transpose2d.html"),
        "nl.ndarray": (["shape", "dtype"], ["buffer", "name"], LEGACY + "nki.language.ndarray.html"),
        # nl.par_dim: a tensor's partition dimension after its block dimension (direct allocation)
        "nl.par_dim": (["size"], [], DOCS + "/en/latest/general/nki/api/generated/nki.language.par_dim.html"),
        # the compiler's direct allocation: every SBUF tensor placed, buffer counts by modulo allocation
        "ncc.sbuf.mod_alloc": ([], ["base_addr", "base_partition", "num_par_tiles", "num_free_tiles"],
                               DOCS + "/en/latest/nki/api/generated/nki.compiler.sbuf.mod_alloc.html"),
        "nl.ds": (["start", "size"], [], LEGACY + "nki.language.ds.html"),
        # arange(*args), numpy's: the tile indices of masked partial tiles ("NKI API Masking")
        "nl.arange": (["start", "stop", "step"], [], LEGACY + "nki.language.arange.html"),
        "nl.affine_range": (["start", "stop", "step"], [], LEGACY + "nki.language.affine_range.html"),
        "nl.sequential_range": (["start", "stop", "step"], [], LEGACY + "nki.language.sequential_range.html"),
    },
}

# Names used as values: dtypes (SHARED "Supported Data Types"), memory regions
# (nl.ndarray's page), activation functions (SHARED "Supported Activation
# Functions") and ALU operators (SHARED "Supported Math Operators").
SHARED = {"current": DOCS + "/en/v2.33.0/nki/api/nki.api.shared.html",
          "legacy": DOCS + "/en/v2.21.0.beta/general/nki/api/nki.api.shared.html"}
VALUES = {
    "current": {"nl.bfloat16", "nl.float32", "nl.sbuf", "nl.psum", "nl.shared_hbm", "nl.private_hbm",
                "nl.copy", "nl.silu", "nl.gelu", "nl.relu", "nl.exp", "nl.sigmoid", "nl.tanh", "nl.square",
                "nl.add", "nl.subtract", "nl.multiply", "nl.maximum", "nl.minimum"},
}
# nl.mgrid (LEGACY + "nki.language.mgrid.html"): numpy's mgrid, indexed by the
# legacy emitter's multi-group loads and stores.
VALUES["legacy"] = VALUES["current"] | {"nl.hbm", "nl.mgrid"}
BUILTINS = {"min"}  # Python's min on specialization-time integers (partial tiles)


def check(api, path):
    tree = ast.parse(open(path).read(), path)
    table = SIGNATURES[api]
    seen = {}
    calls = set()

    def dotted(node):
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name):
                return node.value.id + "." + node.attr
            inner = dotted(node.value)
            return inner + "." + node.attr if inner else None
        return None

    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = dotted(node.func)
            if name is None:
                if isinstance(node.func, ast.Name) and node.func.id in BUILTINS:
                    continue
                if isinstance(node.func, ast.Attribute) and dotted(node.func.value) == "nki.jit":
                    continue
                continue
            if not name.startswith(("nl.", "nisa.", "ncc.")):
                continue
            calls.add(id(node.func))
            if name not in table:
                return "%s:%d: %s is not a documented %s call" % (path, node.lineno, name, api)
            positional, keyword_only, page = table[name]
            if len(node.args) > len(positional):
                return "%s:%d: %s takes at most %d positional arguments (%s)" % (
                    path, node.lineno, name, len(positional), page)
            for kw in node.keywords:
                if kw.arg not in positional and kw.arg not in keyword_only:
                    return "%s:%d: %s has no argument '%s' (%s)" % (path, node.lineno, name, kw.arg, page)
            seen.setdefault(name, page)
    for node in ast.walk(tree):
        name = dotted(node) if isinstance(node, ast.Attribute) else None
        if name and name.startswith(("nl.", "nisa.", "ncc.")) and id(node) not in calls and name not in VALUES[api] \
                and not any(name + "." in c for c in seen):
            return "%s:%d: %s is not a documented %s name (%s)" % (path, node.lineno, name, api, SHARED[api])
    for name in sorted(seen):
        print("%s %s: documented (%s)" % (api, name, seen[name]))
    return None


if __name__ == "__main__":
    err = check(sys.argv[1], sys.argv[2])
    if err:
        sys.exit("error: " + err)

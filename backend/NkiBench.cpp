//===- backend/NkiBench.cpp - The runner of --emit=nki-bench --------------===//
//
// The emitted kernel plus a `__main__` block that measures it on a Trainium:
// numpy inputs from .npy files, the documented entry points (nki.benchmark on
// a NeuronDevice; nki.simulate, or neuronxcc's nki.simulate_kernel, on the
// CPU), a comparison with tessel's outputs, and a CSV row for
// `tessel calibrate` (docs/calibration.md). Tessel imports the module not as
// __main__, so `tessel run THIS.py` traces the kernel alone.
//
//===----------------------------------------------------------------------===//
#include "backend/NkiEmitter.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

namespace tessel::backend {

std::string nkiBenchRunner(const ir::Kernel &kernel, const runtime::Target &target, NkiApi api) {
  std::vector<std::string> names, specs, dtypes;
  for (const ir::Value *arg : kernel.args) {
    if (arg->role != ir::TensorRole::Input)
      continue;
    std::vector<std::string> dims;
    for (const ir::Dim &d : arg->type.dims)
      dims.push_back(std::to_string(d.size));
    std::string dtype = ir::dtypeName(arg->type.dtype).str();
    names.push_back("\"" + arg->name + "\"");
    specs.push_back(arg->name + "=" + dtype + "[" + llvm::join(dims, ",") + "]");
    dtypes.push_back(dtype == "bf16" ? "bfloat16" : "np.float32");
  }
  std::vector<std::string> outputs;
  for (const ir::Value *arg : kernel.args)
    if (arg->role == ir::TensorRole::Output)
      outputs.push_back("\"" + arg->name + "\"");
  bool legacy = api == NkiApi::Legacy;
  std::string out;
  out += "\n\ndef _bench():\n";
  out += llvm::formatv(R"py(    """Measures {0} on a NeuronDevice with nki.benchmark (or, with --simulate, runs
    it on NKI's CPU simulator), on the .npy files of --inputs DIR (one float32
    file per argument, as `tessel run --input` takes them), compares the outputs
    with --expected DIR (`tessel run --output-dir`), and prints a CSV row for
    `tessel calibrate` (docs/calibration.md, "Measured points").
    """
)py",
                       kernel.name)
             .str();
  out += R"py(    import argparse
    import os
    import sys

    import numpy as np
    from ml_dtypes import bfloat16  # numpy's bfloat16, as NKI's numpy entry points take it

    p = argparse.ArgumentParser(description=_bench.__doc__)
    p.add_argument("--inputs", required=True, help="directory of <argument>.npy files (float32)")
    p.add_argument("--expected", help="directory of <output>.npy files to compare with")
    p.add_argument("--simulate", action="store_true", help="run on NKI's CPU simulator instead")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--iters", type=int, default=20)
    a = p.parse_args()
)py";
  out += "    names = [" + llvm::join(names, ", ") + "]\n";
  out += "    dtypes = [" + llvm::join(dtypes, ", ") + "]\n";
  out += "    outputs = [" + llvm::join(outputs, ", ") + "]\n";
  out += R"py(    args = [np.load(os.path.join(a.inputs, n + ".npy")).astype(dt) for n, dt in zip(names, dtypes)]
    kernel = )py" + kernel.name + "\n";
  out += "    if a.simulate:\n";
  out += legacy ? "        results = nki.simulate_kernel(kernel, *args)\n"
                : "        results = nki.simulate(kernel)(*args)\n";
  out += R"py(        latency_us = None
    else:
        bench = nki.benchmark(warmup=a.warmup, iters=a.iters)(kernel)
        results = bench(*args)
        latency_us = bench.benchmark_result.nc_latency.get_latency_percentile(50)
    results = results if isinstance(results, (tuple, list)) else [results]
    worst = 0.0
    for name, got in zip(outputs, results):
        if a.expected:
            want = np.load(os.path.join(a.expected, name + ".npy"))
            err = float(np.max(np.abs(np.asarray(got, dtype=np.float32) - want)))
            scale = float(np.max(np.abs(want))) or 1.0
            worst = max(worst, err / scale)
            print("%s: largest error %.3g (%.3g of the largest |value|)" % (name, err, err / scale), file=sys.stderr)
    if latency_us is not None:
        print("kernel,latency_us,measured,source,defines,target")
)py";
  out += llvm::formatv("        print(\"%s:{0},%.3f,benchmark,nki.benchmark p50 (%d iterations),{1},{2}\" % "
                       "(os.path.basename(__file__), latency_us, a.iters))\n",
                       kernel.name, llvm::join(specs, " "), target.name)
             .str();
  out += "    return 0 if worst <= 0.02 else 1\n\n\nif __name__ == \"__main__\":\n    raise SystemExit(_bench())\n";
  return out;
}

} // namespace tessel::backend

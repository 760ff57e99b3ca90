//===- bench/sim_speed.cpp - How fast and how sane is the simulator -------===//
//
// Prints, from one run on this machine (ratios, so noisy machines compare):
//  1. functional simulation of the paper's Table 1 chain (straightforward
//     form) vs a plain OpenBLAS fp32 evaluation of the same chain on the same
//     inputs: the ratio (target <= 3);
//  2. timing-only simulation of DeepSeek-V3 up_proj at M = 4096: wall time
//     (target <= 1 s) and simulated instructions per second;
//  3. timing-model sanity: a 4096^3 bf16 dense matmul (tiled like AWS's NKI
//     matmul tutorial) and a tiny 128 x 128 x 512 one -- latency, MFU and the
//     roofline bounds they are measured against.
//
// Usage: bench-sim-speed [EXAMPLES_DIR]   (default: the source tree's examples/)
//
//===----------------------------------------------------------------------===//
#include "compiler/Compile.h"
#include "compiler/Reference.h"
#include "runtime/Simulator.h"

#include <cblas.h>

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdio>
#include <optional>
#include <unistd.h>

using namespace tessel;

namespace {

double seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

/// Runs `fn` (which returns an llvm::Expected) and stores its wall time in
/// `sec`; on failure prints the error and returns nothing.
template <typename Fn>
auto timed(Fn fn, double &sec) -> std::optional<typename decltype(fn())::value_type> {
  auto start = std::chrono::steady_clock::now();
  auto result = fn();
  sec = seconds(start);
  if (!result) {
    llvm::errs() << llvm::toString(result.takeError()) << "\n";
    return std::nullopt;
  }
  return std::move(*result);
}

struct Compiled {
  compiler::Frontend fe;
  std::unique_ptr<ir::Kernel> kernel;
  std::optional<runtime::Program> program;
};

bool compile(Compiled &c, const std::string &path, std::vector<Define> defines,
             const runtime::Target &target) {
  if (!compiler::runFrontend(c.fe, path, defines, ""))
    return false;
  c.kernel = compiler::compileKernel(c.fe, compiler::CompileOptions{}, target);
  if (!c.kernel)
    return false;
  auto prog = compiler::emitProgram(*c.kernel, target);
  if (!prog) {
    llvm::errs() << llvm::toString(prog.takeError()) << "\n";
    return false;
  }
  c.program = std::move(*prog);
  return true;
}

bool compileText(Compiled &c, const std::string &text, const runtime::Target &target) {
  std::string path = "/tmp/tessel-bench-" + std::to_string(::getpid()) + ".tsl";
  FILE *f = std::fopen(path.c_str(), "w");
  if (!f)
    return false;
  std::fputs(text.c_str(), f);
  std::fclose(f);
  bool ok = compile(c, path, {}, target);
  std::remove(path.c_str());
  return ok;
}

void printRoofline(const runtime::Report &r, const runtime::Target &t) {
  double computeUs = double(r.flops) / t.peakBf16Flops() * 1e6;
  double memoryUs = double(r.hbmReadBytes + r.hbmWriteBytes) / (t.hbm_bandwidth_gbs * 1e9) * 1e6;
  llvm::outs() << llvm::formatv("    latency {0,10:f1} us   MFU {1,5:f1} %   tensor active {2,5:f1} %\n",
                                r.latencyNs / 1e3, r.mfu * 100, r.tensorEngineActivePct)
               << llvm::formatv("    bounds: FLOPs/peak {0:f1} us, HBM bytes/bandwidth {1:f1} us; "
                                "latency / max(bounds) = {2:f2}\n",
                                computeUs, memoryUs, r.latencyNs / 1e3 / std::max(computeUs, memoryUs));
  for (const auto &e : r.engines)
    if (e.instructions)
      llvm::outs() << llvm::formatv("    {0,-7} {1,8} instr  busy {2,5:f1} %\n", e.name, e.instructions,
                                    e.busyNs / r.latencyNs * 100);
}

} // namespace

int main(int argc, char **argv) {
  std::string examples = argc > 1 ? argv[1] : TESSEL_EXAMPLES_DIR;
  const runtime::Target &target = runtime::trn1Target();

  // 1. Functional speed vs plain BLAS.
  {
    Compiled c;
    if (!compile(c, examples + "/paper_table1_chain.tsl", {}, target))
      return 1;
    runtime::SimOptions opts;
    double simSec = 0;
    auto sim = timed([&] { return runtime::simulate(*c.program, target, opts); }, simSec);
    if (!sim)
      return 1;
    std::map<std::string, compiler::HostTensor> inputs;
    for (const auto &t : sim->inputs)
      inputs[t.name] = compiler::HostTensor{t.shape, t.data, {}};
    double blasSec = 0;
    auto ref = timed([&] { return compiler::evaluateReference(*c.fe.kernel, inputs); }, blasSec);
    if (!ref)
      return 1;
    // The simulator runs each tile product on one BLAS thread and independent
    // products side by side on every hardware thread (SimOptions::threads);
    // one-threaded BLAS shows what one core alone does with the chain.
    int threads = openblas_get_num_threads();
    openblas_set_num_threads(1);
    double blas1Sec = 0;
    auto ref1 = timed([&] { return compiler::evaluateReference(*c.fe.kernel, inputs); }, blas1Sec);
    openblas_set_num_threads(threads);
    if (!ref1)
      return 1;
    llvm::outs() << "1. functional simulation, paper Table 1 chain (X[2048,2048] U[2048,2048] V[2048,8192], -O0)\n"
                 << llvm::formatv("    simulator {0:f3} s; plain OpenBLAS fp32 {1:f3} s on {2} threads: ratio {3:f2} "
                                  "(target <= 3)\n",
                                  simSec, blasSec, threads, simSec / blasSec)
                 << llvm::formatv("    plain OpenBLAS fp32 on 1 thread {0:f3} s: "
                                  "ratio {1:f2}\n",
                                  blas1Sec, simSec / blas1Sec)
                 << llvm::formatv("    {0} dynamic instructions, {1:f0} instructions/s\n\n",
                                  sim->report.dynamicInstructions, sim->report.dynamicInstructions / simSec);
  }
  // 2. Timing-only speed.
  {
    Compiled c;
    if (!compile(c, examples + "/deepseek_v3_up_proj.tsl", {}, target))
      return 1;
    runtime::SimOptions opts;
    opts.timingOnly = true;
    double simSec = 0;
    auto sim = timed([&] { return runtime::simulate(*c.program, target, opts); }, simSec);
    if (!sim)
      return 1;
    llvm::outs() << "2. timing-only simulation, DeepSeek-V3 up_proj M=4096 (-O0)\n"
                 << llvm::formatv("    {0:f3} s wall (target <= 1 s), {1} dynamic instructions, {2:f0} instructions/s\n",
                                  simSec, sim->report.dynamicInstructions, sim->report.dynamicInstructions / simSec);
    printRoofline(sim->report, target);
    llvm::outs() << "\n";
  }
  // 3. Timing-model sanity: large dense and tiny matmuls.
  struct Case {
    const char *title, *text;
  } cases[] = {
      {"3a. dense bf16 matmul 4096 x 4096 x 4096 (-O0)",
       "kernel big(X: bf16[4096, 4096], W: bf16[4096, 4096]) -> bf16[4096, 4096] {\n  return X @ W\n}\n"},
      {"3b. tiny bf16 matmul 128 x 128 x 512 (-O0)",
       "kernel tiny(X: bf16[128, 128], W: bf16[128, 512]) -> bf16[128, 512] {\n  return X @ W\n}\n"},
  };
  for (const Case &cs : cases) {
    Compiled c;
    if (!compileText(c, cs.text, target))
      return 1;
    runtime::SimOptions opts;
    opts.timingOnly = true;
    double simSec = 0;
    auto sim = timed([&] { return runtime::simulate(*c.program, target, opts); }, simSec);
    if (!sim)
      return 1;
    llvm::outs() << cs.title << "\n";
    printRoofline(sim->report, target);
    llvm::outs() << "\n";
  }
  return 0;
}

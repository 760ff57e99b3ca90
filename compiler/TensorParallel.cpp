//===- compiler/TensorParallel.cpp - `--tp N`: one kernel over N NeuronCores ===//
#include "compiler/TensorParallel.h"

#include "compiler/Check.h"
#include "compiler/Reference.h"

#include "runtime/BF16.h"
#include "runtime/Collective.h"
#include "runtime/Npy.h"
#include "runtime/Report.h"

#include "fmt/format.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace tessel::compiler {
namespace {

using frontend::ShardAxis;

using runtime::TensorData;

bool fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "tessel") << message << "\n";
  return false;
}

/// Core `c`'s slice of a [rows, cols] row-major tensor.
std::vector<float> sliceFor(const TensorData &t, ShardAxis axis, int c, int cores) {
  const int64_t rows = t.shape[0], cols = t.shape[1];
  if (axis == ShardAxis::None)
    return t.data;
  if (axis == ShardAxis::Rows) {
    const int64_t n = rows / cores;
    return std::vector<float>(t.data.begin() + c * n * cols, t.data.begin() + (c + 1) * n * cols);
  }
  const int64_t n = cols / cores;
  std::vector<float> out;
  out.reserve(size_t(rows * n));
  for (int64_t r = 0; r < rows; ++r)
    out.insert(out.end(), t.data.begin() + r * cols + c * n, t.data.begin() + r * cols + (c + 1) * n);
  return out;
}

/// The whole inputs, read from the --input files or drawn as for one core.
std::optional<std::vector<TensorData>> wholeInputs(const TensorParallelRun &run) {
  std::vector<TensorData> out;
  for (const ast::Param &p : run.wholeKernel->params) {
    runtime::TensorDecl decl;
    decl.name = p.name;
    decl.dtype = p.type.dtype;
    decl.shape = {p.type.rows, p.type.cols};
    std::vector<float> v;
    if (auto it = run.sim.inputFiles.find(p.name); it != run.sim.inputFiles.end()) {
      llvm::Expected<runtime::NpyArray> arr = runtime::readNpy(it->second);
      if (!arr)
        return fail("input '" + p.name + "': " + llvm::toString(arr.takeError())), std::nullopt;
      if (arr->shape != decl.shape)
        return fail(fmt::format("input '{}' ({}): expected the whole tensor's shape {} (--tp slices "
                                "it), found {}",
                                p.name, it->second, runtime::formatShape(decl.shape),
                                runtime::formatShape(arr->shape))),
               std::nullopt;
      v = std::move(arr->data);
    } else {
      auto halfWidth = run.sim.randomHalfWidth.find(p.name);
      v = runtime::randomTensorValues(decl, run.sim.seed,
                                      halfWidth == run.sim.randomHalfWidth.end()
                                          ? std::nullopt
                                          : std::optional<double>(halfWidth->second));
    }
    if (decl.dtype == DType::BF16)
      for (float &x : v)
        x = runtime::roundToBF16(x);
    out.push_back(TensorData{p.name, decl.dtype, decl.shape, std::move(v)});
  }
  for (const auto &kv : run.sim.inputFiles)
    if (llvm::none_of(out, [&](const TensorData &t) { return t.name == kv.first; }))
      return fail("--input '" + kv.first + "': the kernel has no input of that name"), std::nullopt;
  return out;
}

} // namespace

bool shardForTensorParallel(Frontend &fe, int cores, const runtime::Target &target,
                            frontend::TensorParallelPlan &plan) {
  if (llvm::Error e = runtime::checkCoreCount(target, cores))
    return fail(llvm::toString(std::move(e)));
  ast::Kernel *kernel = nullptr;
  for (ast::Kernel &k : fe.module->kernels)
    if (&k == fe.kernel)
      kernel = &k;
  llvm::Expected<frontend::TensorParallelPlan> p = frontend::planTensorParallel(*kernel, cores);
  if (!p) {
    llvm::handleAllErrors(p.takeError(), [&](const frontend::TensorParallelError &e) {
      fe.diags->error(e.loc, e.message);
    });
    return false;
  }
  plan = std::move(*p);
  frontend::shardKernel(*kernel, plan);
  fe.blockNames.clear(); // TileGen's blocks of the whole kernel, not of a shard
  return true;
}

std::string describeTensorParallel(const frontend::TensorParallelPlan &plan, const ast::Kernel &kernel,
                                   const runtime::Target &target) {
  const int64_t bytes = kernel.resultType.rows * kernel.resultType.cols * dtypeBytes(kernel.resultType.dtype);
  const runtime::CollectiveCost c = runtime::ringAllReduce(target, plan.cores, bytes, dtypeBytes(kernel.resultType.dtype));
  const std::string where = c.chips > 1 ? fmt::format("{} {} chips", c.chips, target.name)
                                         : fmt::format("a {} chip", target.name);
  return fmt::format("// [tensor-parallel] {} NeuronCores of {} ({} per chip), {} form\n"
                     "// [tensor-parallel] split: {}\n"
                     "// [tensor-parallel] every core runs the kernel below on its shard; then a ring "
                     "AllReduce: {} steps of {} B, {:.1f} us (model)\n",
                     plan.cores, where, target.neuron_cores_per_chip, plan.form,
                     plan.describe(kernel), c.steps, c.chunkBytes, c.totalUs());
}

namespace {

/// What the cores computed: the first core's result (timing is the same on
/// every core) and, in a functional run, the sum of the cores' partials with
/// the estimate of their roundings per element (for --check).
struct CoreRuns {
  runtime::SimResult first;
  std::vector<float> sum;
  std::vector<float> partialRounding;
};

std::optional<CoreRuns> runCores(const TensorParallelRun &run, const std::vector<TensorData> *whole) {
  const int cores = run.plan.cores;
  runtime::SimOptions opts = run.sim;
  opts.inputFiles.clear();
  opts.outputDir.clear();
  CoreRuns out;
  const ast::TensorType result = run.wholeKernel->resultType;
  // A bf16 result's partials are rounded before the adds: --check allows it.
  const bool roundedPartials = run.check && result.dtype == DType::BF16;
  // Timing is the same on every core (same program, own engines and HBM
  // share); the numerics differ, so each core runs when they are wanted.
  for (int c = 0; c < (whole ? cores : 1); ++c) {
    if (whole) {
      opts.inputData.clear();
      for (size_t i = 0; i < whole->size(); ++i)
        opts.inputData[(*whole)[i].name] = sliceFor((*whole)[i], run.plan.params[i], c, cores);
    }
    if (c > 0)
      opts.tracePath.clear();
    llvm::Expected<runtime::SimResult> res = runtime::simulate(*run.coreProgram, run.target, opts);
    if (!res)
      return fail(fmt::format("core {}: {}", c, llvm::toString(res.takeError()))), std::nullopt;
    if (whole) {
      const TensorData *partial = res->output(run.outputName);
      if (!partial)
        return fail("the program has no output '" + run.outputName + "'"), std::nullopt;
      if (out.sum.empty()) {
        out.sum.assign(partial->size(), 0.0f);
        out.partialRounding.assign(partial->size(), 0.0f);
      }
      for (size_t i = 0; i < out.sum.size(); ++i) {
        const float p = partial->at(i);
        out.sum[i] += p;
        if (roundedPartials)
          out.partialRounding[i] =
              float(std::hypot(double(out.partialRounding[i]), ErrorModel::kStoreRoundoff * p));
      }
    }
    if (c == 0)
      out.first = std::move(*res);
  }
  if (result.dtype == DType::BF16)
    for (float &x : out.sum)
      x = runtime::roundToBF16(x);
  return out;
}

/// The whole result checked against the unpartitioned kernel's reference
/// (with `--check`) and written to --output-dir; false when either fails
/// (`passed` says whether the check did).
bool checkAndWriteSum(const TensorParallelRun &run, std::vector<TensorData> whole, CoreRuns &runs,
                      llvm::json::Object &checkObj, bool &passed) {
  const ast::TensorType result = run.wholeKernel->resultType;
  runtime::SimResult combined;
  combined.inputs = std::move(whole);
  combined.outputs.push_back(TensorData{run.outputName, result.dtype, {result.rows, result.cols}, runs.sum});
  if (run.check) {
    // Each core's partial is stored in bf16 before the AllReduce adds them:
    // one rounding per core that the unpartitioned kernel does not make
    // (where the partials cancel, it dominates), so each element's bound
    // holds those roundings too.
    passed = checkAgainstReference(*run.wholeKernel, combined, run.outputName, checkObj, run.kBlock,
                                   runs.partialRounding);
    // Partials are rounded only when the result is stored in bf16 (runCores).
    checkObj["method"] = checkMethod(*run.wholeKernel) +
                         (result.dtype == DType::BF16 ? ", and the rounding of each core's bf16 partial" : "");
  }
  if (run.sim.outputDir.empty())
    return true;
  llvm::SmallString<256> path(run.sim.outputDir);
  llvm::sys::path::append(path, run.outputName + ".npy");
  if (std::error_code ec = llvm::sys::fs::create_directories(run.sim.outputDir))
    return fail("cannot create output directory '" + run.sim.outputDir + "': " + ec.message());
  if (llvm::Error e = runtime::writeNpy(path, {result.rows, result.cols}, runs.sum))
    return fail(llvm::toString(std::move(e)));
  return true;
}

/// The share of the cores' FLOPs that repeat another core's work: what the
/// split replicates (e.g. a matmul every core computes whole), from the
/// cores' FLOPs against the kernel's on one core.
double replicatedShare(const TensorParallelRun &run, const runtime::Report &core) {
  const double all = double(core.flops) * run.plan.cores;
  return all > 0 ? std::max(0.0, 1.0 - double(run.oneCoreFlops) / all) : 0.0;
}

/// The line that compares the run with the kernel as written on one core,
/// and says so when splitting made it slower.
std::string oneCoreComparison(const TensorParallelRun &run, const runtime::Report &core, double totalUs) {
  const double share = replicatedShare(run, core);
  if (totalUs <= run.oneCoreUs)
    return fmt::format("  one core:   {:.2f} us (the kernel as written, same pipeline): {:.2f}x faster on {} "
                       "cores; {:.1f}% of the cores' FLOPs are replicated\n",
                       run.oneCoreUs, run.oneCoreUs / totalUs, run.plan.cores, 100 * share);
  return fmt::format("  slower than one core: the kernel as written takes {:.2f} us on one core (same "
                     "pipeline); these {} cores take {:.2f}x as long: {:.1f}% of their FLOPs are replicated "
                     "(work every core repeats) and the AllReduce adds {:.2f} us\n",
                     run.oneCoreUs, run.plan.cores, totalUs / run.oneCoreUs, 100 * share,
                     totalUs - core.latencyNs * 1e-3);
}

/// The text report: the total first (one core's program plus the AllReduce),
/// then how the kernel was split, then one core's own report.
void printTensorParallelText(const TensorParallelRun &run, const runtime::Report &core,
                             const runtime::CollectiveCost &allReduce, double totalUs, double mfu,
                             llvm::raw_ostream &os) {
  const int cores = run.plan.cores;
  os << fmt::format("tensor parallel: {} NeuronCores of {} ({} per chip), {} form\n", cores, run.target.name,
                    run.target.neuron_cores_per_chip, run.plan.form)
     << fmt::format("  latency:    {:.2f} us = one core's program {:.2f} us + AllReduce {:.2f} us; MFU of "
                    "each of the {} cores {:.1f}% (AllReduce included)\n",
                    totalUs, core.latencyNs * 1e-3, allReduce.totalUs(), cores, 100 * mfu)
     << fmt::format("  split:      {}\n", run.plan.describe(*run.wholeKernel))
     << fmt::format("  allreduce:  ring, {} steps of {} B per core: {:.2f} us "
                    "(transfers {:.2f}, adds {:.2f}), {:.1f}% of the total\n",
                    allReduce.steps, allReduce.chunkBytes, allReduce.totalUs(), allReduce.transferNs * 1e-3,
                    allReduce.reduceNs * 1e-3, totalUs > 0 ? 100 * allReduce.totalUs() / totalUs : 0.0);
  if (run.oneCoreUs > 0)
    os << oneCoreComparison(run, core, totalUs);
  os << fmt::format("\nper core (each of the {} runs this program on its shard):\n", cores);
  runtime::printReportText(core, os);
}

llvm::json::Object tensorParallelJSON(const TensorParallelRun &run, const runtime::Report &core,
                                      const runtime::CollectiveCost &allReduce, double totalUs) {
  return llvm::json::Object{
      {"cores", run.plan.cores},
      {"cores_per_chip", run.target.neuron_cores_per_chip},
      {"form", run.plan.form},
      {"split", run.plan.describe(*run.wholeKernel)},
      {"per_core_latency_us", core.latencyNs * 1e-3},
      {"allreduce",
       llvm::json::Object{{"algorithm", "ring"},
                          {"steps", allReduce.steps},
                          {"chunk_bytes", allReduce.chunkBytes},
                          {"hbm_bytes_per_core", allReduce.hbmBytesPerCore},
                          {"transfer_us", allReduce.transferNs * 1e-3},
                          {"reduce_us", allReduce.reduceNs * 1e-3},
                          {"us", allReduce.totalUs()}}},
      {"allreduce_share", totalUs > 0 ? allReduce.totalUs() / totalUs : 0.0},
      {"one_core_latency_us", run.oneCoreUs > 0 ? llvm::json::Value(run.oneCoreUs) : nullptr},
      {"speedup_over_one_core", run.oneCoreUs > 0 ? llvm::json::Value(run.oneCoreUs / totalUs) : nullptr},
      {"replicated_flops_share", run.oneCoreUs > 0 ? llvm::json::Value(replicatedShare(run, core)) : nullptr}};
}

} // namespace

int runTensorParallel(const TensorParallelRun &run) {
  const bool functional = !run.sim.timingOnly;
  std::optional<std::vector<TensorData>> whole;
  if (functional && !(whole = wholeInputs(run)))
    return 1;
  std::optional<CoreRuns> runs = runCores(run, whole ? &*whole : nullptr);
  if (!runs)
    return 1;

  const ast::TensorType result = run.wholeKernel->resultType;
  const int elementBytes = dtypeBytes(result.dtype);
  const runtime::CollectiveCost allReduce = runtime::ringAllReduce(
      run.target, run.plan.cores, result.rows * result.cols * elementBytes, elementBytes);
  const runtime::Report &core = runs->first.report;
  const double totalUs = core.latencyNs * 1e-3 + allReduce.totalUs();
  const double mfu = totalUs > 0 ? double(core.flops) / (core.peakFlopsPerSec * totalUs * 1e-6) : 0;

  llvm::json::Object checkObj;
  bool passed = true;
  if (functional && !checkAndWriteSum(run, std::move(*whole), *runs, checkObj, passed))
    return 1;

  std::error_code ec;
  llvm::ToolOutputFile out(run.reportPath, ec, llvm::sys::fs::OF_Text);
  if (ec)
    return fail("cannot write report '" + run.reportPath + "': " + ec.message()), 1;
  if (run.json) {
    llvm::json::Object obj{{"kernel", core.kernel},
                           {"target", core.target},
                           {"mode", functional ? "functional" : "timing-only"},
                           {"latency_us", totalUs},
                           {"mfu", mfu},
                           {"tensor_parallel", tensorParallelJSON(run, core, allReduce, totalUs)},
                           {"per_core", runtime::reportToJSON(core)}};
    if (functional && run.check)
      obj["check"] = std::move(checkObj);
    out.os() << llvm::formatv("{0:2}", llvm::json::Value(std::move(obj))) << "\n";
  } else {
    printTensorParallelText(run, core, allReduce, totalUs, mfu, out.os());
    if (functional && run.check) {
      out.os() << "\n  check: " << (passed ? "PASSED" : "FAILED") << " (the unpartitioned kernel's reference)\n";
      for (const auto &kv : checkObj)
        out.os() << llvm::formatv("    {0}: {1}\n", kv.first, kv.second);
    }
  }
  out.keep();
  if (!passed) {
    llvm::WithColor::error(llvm::errs(), "tessel run") << "check failed: the outputs differ from the reference\n";
    return 1;
  }
  return 0;
}

} // namespace tessel::compiler

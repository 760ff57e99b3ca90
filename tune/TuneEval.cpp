#include "tune/TuneEval.h"

#include "compiler/CompileSession.h"
#include "compiler/TensorParallel.h"
#include "passes/PassManager.h"
#include "passes/analysis/KernelCost.h"
#include "runtime/Simulator.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

namespace tessel::tune {
using namespace compiler;
namespace {

/// Keeps the first error the compiler reports instead of printing it.
void captureFirstError(const llvm::SMDiagnostic &diag, void *context) {
  auto *first = static_cast<std::string *>(context);
  if (diag.getKind() == llvm::SourceMgr::DK_Error && first->empty())
    *first = diag.getMessage().str();
}

} // namespace

CompiledConfig compileConfig(const TuneJob &job, const BlockConfig &config) {
  CompiledConfig out;
  Frontend fe;
  fe.sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(job.sourceText, job.path),
                                  llvm::SMLoc());
  fe.sourceMgr.setDiagHandler(captureFirstError, &out.error);
  fe.diags = std::make_unique<DiagnosticEngine>(fe.sourceMgr);
  auto reject = [&](const std::string &why) {
    if (out.error.empty())
      out.error = why.empty() ? "rejected by the compiler" : why;
    out.program.reset();
    return std::move(out);
  };
  fe.module = parseAndCheck(*fe.diags, job.defines);
  if (!fe.module || fe.diags->hadError() || !(fe.kernel = fe.module->findKernel(job.kernelName)))
    return reject("the source no longer compiles");
  if (job.tp != 1) {
    frontend::TensorParallelPlan plan;
    if (!shardForTensorParallel(fe, job.tp, job.target, plan))
      return reject("the kernel does not split over --tp cores");
  }

  CompileOptions options;
  options.passes = job.passes;
  options.instrumentation.verifyEach = job.verifyEach;
  std::optional<Measurement> m = CompileSession(fe, job.target, options).measure(config);
  if (!m)
    return reject("");
  // A block the kernel was not built with is another configuration's.
  for (const auto &[name, value] : config)
    if (std::optional<int64_t> used = m->blocks.get(name); used && *used != value)
      return reject(llvm::formatv("the compiler built {0}={1} as {0}={2}: the {0}={2} "
                                  "configuration",
                                  name, value, *used));
  out.model.predictedUs = m->cost.predictedUs(job.target);
  out.model.boundUs = m->cost.boundUs(job.target);
  out.model.ai = m->cost.arithmeticIntensity();
  out.model.sbufPeakBytes = m->cost.sbufPeakBytesPerPartition * job.target.sbuf_partitions;
  out.model.spillBytes = m->cost.spillSaveBytes + m->cost.spillReloadBytes;
  out.program = std::move(m->program);
  out.blocks = m->blocks;
  return out;
}

llvm::Expected<SimMeasure> simulateConfig(const runtime::Program &program,
                                          const runtime::Target &target, bool fastForward) {
  runtime::SimOptions options;
  options.timingOnly = true;
  options.fastForward = fastForward;
  llvm::Expected<runtime::SimResult> result = runtime::simulate(program, target, options);
  if (!result)
    return result.takeError();
  const runtime::Report &r = result->report;
  SimMeasure m;
  m.latencyUs = r.latencyNs / 1000.0;
  m.mfu = r.mfu;
  m.ai = r.arithmeticIntensity;
  m.sbufPeakBytes = r.sbufPeakBytes;
  m.spillBytes = r.spillSaveBytes + r.spillReloadBytes;
  return m;
}

} // namespace tessel::tune

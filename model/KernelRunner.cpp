//===- model/KernelRunner.cpp - Compile and time each distinct kernel once -===//
#include "model/KernelRunner.h"

#include "compiler/TensorParallel.h"
#include "runtime/Simulator.h"
#include "support/DType.h"

#include "llvm/Support/MemoryBuffer.h"

namespace tessel::model {
namespace {

llvm::Error failed(const LayerKernel &k, llvm::StringRef what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "kernel %s: %s", k.fileName.c_str(),
                                 what.str().c_str());
}

} // namespace

llvm::Expected<KernelTiming> KernelRunner::time(const LayerKernel &k) {
  const std::string key = (k.rowParallel ? "row-parallel\n" : "as written\n") + k.source;
  if (auto it = cache.find(key); it != cache.end())
    return it->second;

  compiler::Frontend fe;
  fe.sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(k.source, k.fileName), llvm::SMLoc());
  frontend::TensorParallelPlan plan;
  compiler::CompileOptions options;
  const bool split = k.rowParallel && tp > 1;
  if (!compiler::runFrontend(fe, k.fileName, {}, "") ||
      (split && !compiler::shardForTensorParallel(fe, tp, target, plan)) || !resolve(fe, options))
    return failed(k, "does not compile (see above)");
  std::unique_ptr<ir::Kernel> kernel = compiler::compileKernel(fe, options, target);
  if (!kernel)
    return failed(k, "does not compile (see above)");
  llvm::Expected<runtime::Program> prog = compiler::emitProgram(*kernel, target, &fe.sourceMgr);
  if (!prog)
    return failed(k, llvm::toString(prog.takeError()));

  runtime::SimOptions sim;
  sim.timingOnly = true;
  sim.fastForward = true;
  sim.latency = runtime::LatencyKind::Device;
  llvm::Expected<runtime::SimResult> res = runtime::simulate(*prog, target, sim);
  if (!res)
    return failed(k, llvm::toString(res.takeError()));
  const runtime::Report &r = res->report;
  KernelTiming t;
  t.kernelUs = (r.latencyNs - r.launchOverheadNs) * 1e-3;
  t.launchUs = r.launchOverheadNs * 1e-3;
  t.flops = double(r.flops);
  t.hbmBytes = double(r.hbmReadBytes + r.hbmWriteBytes);
  t.peakFlopsPerSec = r.peakFlopsPerSec;
  t.hbmBytesPerSec = r.hbmBandwidthGBs * 1e9;
  if (split) {
    const ast::TensorType result = fe.kernel->resultType;
    const int elementBytes = dtypeBytes(result.dtype);
    t.allReduce = runtime::ringAllReduce(target, tp, result.rows * result.cols * elementBytes, elementBytes);
    t.split = plan.describe(*fe.kernel);
  }
  return cache.emplace(key, t).first->second;
}

} // namespace tessel::model

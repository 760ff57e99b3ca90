//===- passes/Pass.h - The pass interface -----------------------*- C++ -*-===//
//
// A pass is a small class: a kebab-case name (the same string in the
// registry, --passes=, --print-ir-after=, the lit test folder and the dump
// file name) and run(), which transforms the kernel in place and says whether
// it changed anything. Passes report user errors (an impossible block size,
// a kernel that cannot fit) through the context's DiagnosticEngine and return
// a failure; they never assert on user input.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_PASSES_PASS_H
#define TESSEL_PASSES_PASS_H

#include "ir/Diagnostics.h"
#include "ir/Kernel.h"
#include "runtime/Target.h"

#include "llvm/ADT/StringRef.h"

#include <memory>

namespace tessel::passes {

/// How an MLP block's gated result reaches its down projection (--mlp-form):
/// in SBUF (one kernel) or through HBM between UpGate and Down (two kernels,
/// docs/passes.md); Auto lets the block planner choose.
enum class MlpForm { Auto, OneKernel, TwoKernel };

/// The parameters a pipeline is built with (LLVM's passes with parameters):
/// buildPipeline leaves out what they rule out, and a pass they concern reads
/// them from its context, where the block planner may have chosen them for
/// the kernel (an MLP it builds as two kernels).
struct PipelineParams {
  MlpForm mlpForm = MlpForm::Auto;
  bool operator<(const PipelineParams &o) const { return mlpForm < o.mlpForm; }
  bool operator==(const PipelineParams &o) const { return mlpForm == o.mlpForm; }
};

/// What every pass may read: the target description, where to report, and
/// the pipeline's parameters. The block sizes are decided before the kernel
/// is built (the block planner, compiler/Compile.h) and are the kernel's
/// `blockParams`.
struct PassContext {
  const runtime::Target &target;
  DiagnosticEngine &diags;
  PipelineParams params = {};
};

enum class PassResult { Unchanged, Changed, Failed };

class Pass {
public:
  virtual ~Pass() = default;
  virtual llvm::StringRef name() const = 0;
  virtual llvm::StringRef description() const = 0;
  virtual PassResult run(ir::Kernel &kernel, PassContext &ctx) = 0;
};

} // namespace tessel::passes

#endif

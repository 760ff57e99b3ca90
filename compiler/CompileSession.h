//===- compiler/CompileSession.h - One kernel, one target, one build path -*- C++ -*-===//
//
// A CompileSession is a frontend (one parsed kernel), a target and the
// compile options. It is where a kernel is built with some blocks and
// measured by the static cost model (KernelCost) -- the one build-and-measure
// that the block planner (its candidates), the compile commands and the
// tuner (its block configurations) share:
//
//   measure(blocks)          the options' passes (select-blocks plans the
//                            blocks not given), the backend, the cost: the
//                            tuner's step
//   measure(blocks, passes, params)  `passes` only, reporting nothing: the
//                            planner's
//   compile()                the options' blocks and passes, no cost: the
//                            commands' step (compileKernel)
//
// blockNames() runs TileGen at the defaults once to learn the kernel's block
// parameters and caches them in the frontend, so every session and
// tileGenBlockParams call over one frontend and target shares that run.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_COMPILER_COMPILESESSION_H
#define TESSEL_COMPILER_COMPILESESSION_H

#include "compiler/BlockPlanner.h"
#include "compiler/Compile.h"

#include <optional>

namespace tessel::compiler {

/// A kernel built and measured: the kernel, the blocks it was built with
/// (TileGen's defaults filled in), its static cost, and -- from
/// measure(blocks) -- the simulator program.
struct Measurement {
  std::unique_ptr<ir::Kernel> kernel;
  ir::BlockConfig blocks;
  passes::analysis::KernelCost cost;
  std::optional<runtime::Program> program;
};

class CompileSession {
public:
  CompileSession(Frontend &fe, const runtime::Target &target, CompileOptions options = {});

  Frontend &frontend() { return fe; }
  const runtime::Target &target() const { return tgt; }
  const CompileOptions &options() const { return opts; }

  /// The kernel's block parameters (tileGenBlockParams): TileGen at the
  /// defaults, run once per frontend, kernel and target geometry.
  const BlockNames &blockNames();

  /// Source to optimized tile IR with the options' blocks: check them, plan
  /// the others when the passes start with select-blocks, TileGen, the
  /// passes. Null after reporting through the frontend's diagnostics.
  std::unique_ptr<ir::Kernel> compile() { return compile(opts.blocks); }
  std::unique_ptr<ir::Kernel> compile(const ir::BlockConfig &blocks);

  /// compile(blocks), then the backend (emitProgram) and the static cost of
  /// the placed kernel. nullopt after reporting.
  std::optional<Measurement> measure(const ir::BlockConfig &blocks);
  /// TileGen with `blocks` (unset ones at their defaults) and `passes`
  /// (without select-blocks) with `params`, quietly and without
  /// --verify-each; the static cost of the result. nullopt when that
  /// configuration cannot be built.
  std::optional<Measurement> measure(const ir::BlockConfig &blocks,
                                     llvm::ArrayRef<std::string> passes,
                                     const passes::PipelineParams &params = {});

  /// TileGen with `blocks`, verified (a kernel TileGen builds wrong is a bug
  /// of tessel's). Null after reporting through `diags`.
  std::unique_ptr<ir::Kernel> generate(const ir::BlockConfig &blocks, DiagnosticEngine &diags);

  /// How many kernels measure() built in this session.
  unsigned measured() const { return numMeasured; }

private:
  Frontend &fe;
  const runtime::Target &tgt;
  CompileOptions opts;
  unsigned numMeasured = 0;

  std::unique_ptr<ir::Kernel> fail(const llvm::Twine &message);
  llvm::Expected<BlockPlan> plan(const ir::BlockConfig &given, llvm::ArrayRef<std::string> passes);
  std::unique_ptr<ir::Kernel> checkOneKernel(std::unique_ptr<ir::Kernel> kernel);
};

} // namespace tessel::compiler

#endif

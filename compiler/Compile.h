//===- compiler/Compile.h - The one compile path -------------------*- C++ -*-===//
//
// Every command that compiles (`compile`, `run`, `tune`, the benches) goes
// through compileKernel, a CompileSession (compiler/CompileSession.cpp):
//
//   source --runFrontend--> AST --choose blocks--> TileGen --> passes --> kernel
//                                                         emitProgram --> program
//
// The blocks are the ones given (--block, --tuned, a tuner configuration);
// when the pipeline starts with `select-blocks`, the block planner
// (compiler/BlockPlanner.h) chooses the others, measuring each candidate
// with CompileSession::measure -- the step the tuner measures with.
// `tessel opt` has no source: it runs the passes on tile IR (runPipeline).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_COMPILER_COMPILE_H
#define TESSEL_COMPILER_COMPILE_H

#include "frontend/AST.h"
#include "frontend/Frontend.h"
#include "ir/BlockConfig.h"
#include "ir/Diagnostics.h"
#include "ir/Kernel.h"
#include "passes/PassManager.h"
#include "passes/Pipelines.h"
#include "passes/analysis/KernelCost.h"
#include "runtime/Program.h"
#include "runtime/Target.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/SourceMgr.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tessel::compiler {

/// Loads `path` ('-' = stdin) as the main buffer of `sm`; reports a missing
/// or unreadable file and returns false.
bool loadSourceFile(llvm::SourceMgr &sm, const std::string &path);

/// What TileGen at the defaults says of a kernel's blocks
/// (CompileSession::blockNames).
struct BlockNames {
  /// `m`, `n`, `k` and each projection's column block whose result columns
  /// span a dimension of their own (ir::BlockConfig::columnBlockName), values 0.
  ir::BlockConfig params;
  /// Those projections' column blocks -> the columns each tiles.
  std::map<std::string, int64_t> projectionColumns;
  /// The size of the dimension labelled K, the contraction `k` blocks (0
  /// when the kernel has none).
  int64_t contraction = 0;
};

/// A parsed and type-checked source file with one kernel selected.
struct Frontend {
  llvm::SourceMgr sourceMgr;
  std::unique_ptr<DiagnosticEngine> diags;
  std::unique_ptr<ast::Module> module;
  const ast::Kernel *kernel = nullptr;
  /// CompileSession::blockNames per kernel and TileGen geometry; cleared
  /// when the AST changes (shardForTensorParallel).
  std::map<std::pair<const ast::Kernel *, std::vector<int64_t>>, BlockNames> blockNames;
  /// TileGen runs at the defaults for blockNames (what the cache saves).
  unsigned tileGenDefaultRuns = 0;
};

/// Parses `path` (unless fe.sourceMgr holds its text already), binds
/// `defines`, and selects `kernelName` (may be empty when the file holds
/// exactly one kernel). Returns false after reporting.
bool runFrontend(Frontend &fe, const std::string &path, const std::vector<Define> &defines,
                 const std::string &kernelName);

/// How a kernel is compiled.
struct CompileOptions {
  /// The passes in order; a leading `select-blocks` plans the blocks.
  std::vector<std::string> passes;
  /// The blocks given (--block, --tuned, a tuner configuration); the others
  /// are planned or TileGen's defaults.
  ir::BlockConfig blocks;
  passes::InstrumentationOptions instrumentation;
  /// The pipeline's parameters. A forced --mlp-form is checked against the
  /// kernel (an MLP block with a down projection) and, for one-kernel, the
  /// planner's strips; under Auto the planner may choose two kernels.
  passes::PipelineParams params;
};

/// Source to optimized tile IR: check the given blocks, plan the others
/// (when the passes start with select-blocks), TileGen, the passes.
/// Returns null after reporting through fe.diags.
std::unique_ptr<ir::Kernel> compileKernel(Frontend &fe, const CompileOptions &options,
                                          const runtime::Target &target);

/// TileGen with `blocks` (unset ones at their defaults), verified, then
/// `passes` (which must not include select-blocks). Returns null after
/// reporting through `diags`.
std::unique_ptr<ir::Kernel> buildKernel(Frontend &fe, const ir::BlockConfig &blocks,
                                        llvm::ArrayRef<std::string> passes,
                                        const runtime::Target &target, DiagnosticEngine &diags,
                                        const passes::InstrumentationOptions &instrumentation = {});

/// Rows of the kernel's row strip: the result's rows, under any transposes
/// of the returned expression (the block `m` tiles them).
int64_t resultRows(const ast::Kernel &kernel);

/// CompileSession::blockNames (BlockNames): the block parameters TileGen
/// builds `fe`'s kernel with, values 0; `projectionColumns` and
/// `contraction`, when given, receive the rest.
ir::BlockConfig tileGenBlockParams(Frontend &fe, const runtime::Target &target,
                                   std::map<std::string, int64_t> *projectionColumns = nullptr,
                                   int64_t *contraction = nullptr);

/// Runs `options.passes` on a kernel read from tile IR (`tessel opt`,
/// `tessel run FILE.tir`). Blocks given must be the kernel's own: tile IR
/// cannot be re-tiled. `dumpSubdir` (for modules of several kernels) is
/// appended to the dump directory. Returns false after reporting.
bool runPipeline(ir::Kernel &kernel, const CompileOptions &options,
                 const runtime::Target &target, DiagnosticEngine &diags,
                 llvm::StringRef dumpSubdir = "");

/// Runs `names` on `kernel` with `instrumentation` (dumps, --verify-each,
/// --time-passes, -stats) and the pipeline's `params`. Returns false after
/// reporting.
bool runPasses(ir::Kernel &kernel, llvm::ArrayRef<std::string> names,
               const runtime::Target &target, DiagnosticEngine &diags,
               const passes::InstrumentationOptions &instrumentation,
               const passes::PipelineParams &params = {});

/// The backend: addresses for on-chip buffers the pipeline did not place
/// (all of them at -O0), then the simulator program; with `sources` (the
/// SourceMgr the kernel was read from), each instruction names its source
/// location (backend::lowerToProgram).
/// Returns an error naming what does not fit or cannot be lowered.
llvm::Expected<runtime::Program> emitProgram(ir::Kernel &kernel, const runtime::Target &target,
                                             const llvm::SourceMgr *sources = nullptr);

} // namespace tessel::compiler

#endif

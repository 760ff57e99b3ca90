//===- driver/Compile.h - The compile pipeline shared by commands -*- C++ -*-===//
#ifndef TESSEL_DRIVER_COMPILE_H
#define TESSEL_DRIVER_COMPILE_H

#include "driver/CommonOptions.h"
#include "frontend/AST.h"
#include "frontend/Frontend.h"
#include "frontend/TileGen.h"
#include "ir/Diagnostics.h"
#include "ir/Kernel.h"
#include "passes/Pass.h"
#include "runtime/Program.h"
#include "runtime/Target.h"

#include "llvm/Support/SourceMgr.h"

#include <memory>
#include <string>
#include <vector>

namespace tessel::driver {

/// Loads `path` ('-' = stdin) as the main buffer of `sm`; reports a missing
/// or unreadable file and returns false.
bool loadSourceFile(llvm::SourceMgr &sm, const std::string &path);

/// A parsed and type-checked source file with one kernel selected.
struct Frontend {
  llvm::SourceMgr sourceMgr;
  std::unique_ptr<DiagnosticEngine> diags;
  std::unique_ptr<ast::Module> module;
  const ast::Kernel *kernel = nullptr;
};

/// Parses `path`, binds `defines`, and selects `kernelName` (may be empty
/// when the file holds exactly one kernel). Returns false after reporting.
bool runFrontend(Frontend &fe, const std::string &path, const std::vector<Define> &defines,
                 const std::string &kernelName);

/// TileGen plus verification of its output. Returns null after reporting.
std::unique_ptr<ir::Kernel> lowerToTileIR(Frontend &fe, const TileGenOptions &options);

/// TileGen options derived from the target (the straightforward form's
/// transposed strip may take half of a partition's SBUF).
TileGenOptions tileGenOptionsFor(const runtime::Target &target);

/// Runs the passes `options` selects (-O, --pipeline, --passes) on `kernel`
/// with its dumps, --verify-each, --time-passes and -stats; --block values
/// reach the passes through PassContext::blockOverrides (their names checked
/// against the kernel's block parameters). `dumpSubdir` (for modules of
/// several kernels) is appended to --dump-dir. `blocks`, when given, are the
/// block parameters compileToTileIR resolved (--block or --tuned) and replace
/// --block. `retile` (when the kernel came from source) lets select-blocks
/// build the kernel again with other blocks. Returns false after reporting.
bool runPipeline(ir::Kernel &kernel, const PipelineOptions &options,
                 const runtime::Target &target, DiagnosticEngine &diags,
                 llvm::StringRef dumpSubdir = "",
                 const passes::BlockOverrides *blocks = nullptr,
                 passes::RetileFn retile = nullptr);

/// Rows of the kernel's row strip: the result's rows, under any transposes
/// of the returned expression (TileGen's block `m` tiles them).
int64_t stripRows(const ast::Kernel &kernel);

/// lowerToTileIR with the --block overrides (or under --tuned, the block
/// parameters `tessel tune` cached) applied (checked against the kernel's
/// block parameters, its rows and the target), then runPipeline.
/// Returns null after reporting.
std::unique_ptr<ir::Kernel> compileToTileIR(Frontend &fe, const PipelineOptions &options,
                                            const runtime::Target &target);

/// The backend: addresses for on-chip buffers the pipeline did not place
/// (all of them at -O0), then the simulator program.
/// Returns an error naming what does not fit or cannot be lowered.
llvm::Expected<runtime::Program> emitProgram(ir::Kernel &kernel, const runtime::Target &target);

} // namespace tessel::driver

#endif

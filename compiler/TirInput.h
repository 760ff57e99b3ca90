//===- compiler/TirInput.h - Tile IR as the input of run and compile -*- C++ -*-===//
//
// `tessel run x.tir` and `tessel compile x.tir --emit=tasm` take tile IR as
// `tessel opt` does: parsed with the target's geometry, verified, the
// selected pipeline run on it (-O0: none); the backend then lowers it.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_COMPILER_TIRINPUT_H
#define TESSEL_COMPILER_TIRINPUT_H

#include "compiler/Compile.h"
#include "ir/Diagnostics.h"
#include "ir/Kernel.h"
#include "runtime/Target.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <memory>
#include <string>

namespace tessel::compiler {

/// A tile IR module and the kernel chosen from it; the source manager owns
/// the text the IR's locations point into.
struct TirInput {
  llvm::SourceMgr sourceMgr;
  std::unique_ptr<DiagnosticEngine> diags;
  std::unique_ptr<ir::Module> module;
  ir::Kernel *kernel = nullptr;
};

/// Parses `buffer`, selects `kernelName` (may be empty when the module holds
/// one kernel), verifies it and runs the pipeline of `options` on it.
/// Returns false after reporting.
bool loadTirKernel(TirInput &in, std::unique_ptr<llvm::MemoryBuffer> buffer,
                   const std::string &kernelName, const CompileOptions &options,
                   const runtime::Target &target);

} // namespace tessel::compiler

#endif

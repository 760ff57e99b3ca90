//===- compiler/KernelSource.h - A kernel file to a simulator program -*- C++ -*-===//
//
// What `tessel calibrate` and the fidelity bench run, dispatched by the file's
// extension the way `tessel run` does: a .tasm program is parsed, a .tsl
// source compiled (kernel name, -D defines, a named pipeline), a .py NKI
// kernel traced (docs/nki.md; needs a build with the NKI tracer).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_COMPILER_KERNELSOURCE_H
#define TESSEL_COMPILER_KERNELSOURCE_H

#include "frontend/Frontend.h"
#include "runtime/Program.h"
#include "runtime/Target.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace tessel::compiler {

struct KernelSpec {
  std::string path;
  std::string kernel; ///< kernel to select (may be empty when the file has one)
  std::vector<Define> defines; ///< .tsl: -D NAME=INT; .py: --arg NAME=DTYPE[D0,D1]
  std::string pipeline = "O0"; ///< .tsl only: a named pipeline (passes/Pipelines.h)
};

/// The file extensions loadKernelProgram accepts.
bool isKernelFile(llvm::StringRef path);

/// Loads `spec` as a program for `target`. Compiler diagnostics go to stderr;
/// the returned error says what failed ("no such file", "unknown kernel").
llvm::Expected<runtime::Program> loadKernelProgram(const KernelSpec &spec, const runtime::Target &target);

} // namespace tessel::compiler

#endif

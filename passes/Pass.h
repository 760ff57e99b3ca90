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

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tessel::passes {

/// Builds the kernel's straightforward form again with these block
/// parameters (the others at their defaults); null after a (quiet) failure.
using RetileFn =
    std::function<std::unique_ptr<ir::Kernel>(const std::map<std::string, int64_t> &blocks)>;

/// What every pass may read: the target description, the user's block
/// overrides (--block m=512,n=1024), the passes of this run in order, and --
/// when the kernel came from source rather than IR text -- a way to re-tile
/// it (select-blocks).
struct PassContext {
  const runtime::Target &target;
  DiagnosticEngine &diags;
  std::map<std::string, int64_t> blockOverrides;
  std::vector<std::string> pipeline = {};
  RetileFn retile = nullptr;
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

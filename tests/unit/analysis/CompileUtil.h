//===- tests/unit/analysis/CompileUtil.h - Compile and simulate for tests -*- C++ -*-===//
//
// The driver's stages (compiler/Compile.h) without its command-line options:
// a .tsl source (an example file or text) through TileGen with a chosen row
// strip, the passes of a named pipeline, the backend and a timing-only
// simulation.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_TESTS_UNIT_ANALYSIS_COMPILEUTIL_H
#define TESSEL_TESTS_UNIT_ANALYSIS_COMPILEUTIL_H

#include "compiler/Compile.h"
#include "passes/PassManager.h"
#include "passes/Pipelines.h"
#include "runtime/Simulator.h"

#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace tessel::test {

inline std::string examplePath(llvm::StringRef file) {
  return std::string(TESSEL_EXAMPLES_DIR) + "/" + file.str();
}

/// A source whose single kernel is lowered to tile IR on demand.
class Source {
public:
  /// An example file with `M` bound by -D.
  Source(llvm::StringRef exampleFile, int64_t rows) {
    ok = compiler::runFrontend(fe, examplePath(exampleFile), {{"M", std::to_string(rows)}}, "");
  }
  /// DSL text holding one kernel.
  explicit Source(llvm::StringRef text) {
    fe.sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, "test.tsl"), llvm::SMLoc());
    fe.diags = std::make_unique<DiagnosticEngine>(fe.sourceMgr);
    fe.module = parseAndCheck(*fe.diags, {});
    ok = fe.module && !fe.diags->hadError() && fe.module->kernels.size() == 1;
    if (ok)
      fe.kernel = &fe.module->kernels.front();
  }

  bool valid() const { return ok; }

  /// TileGen with row strip `blockM` (0: TileGen's choice).
  std::unique_ptr<ir::Kernel> tileIR(int64_t blockM, const runtime::Target &target,
                                     int64_t blockK = 0) {
    ir::BlockConfig blocks;
    if (blockM)
      blocks.set(ir::BlockConfig::kRowStrip, blockM);
    if (blockK)
      blocks.set(ir::BlockConfig::kContraction, blockK);
    return compiler::buildKernel(fe, blocks, {}, target, *fe.diags);
  }

  /// Runs `passes` in order; false (with a test failure) if one fails.
  bool run(ir::Kernel &kernel, const std::vector<std::string> &passes, const runtime::Target &target) {
    passes::PassManager pm;
    for (const std::string &name : passes)
      if (!pm.addPass(name)) {
        ADD_FAILURE() << "unknown pass " << name;
        return false;
      }
    passes::PassContext ctx{target, *fe.diags};
    bool passed = pm.run(kernel, ctx);
    EXPECT_TRUE(passed) << "the pipeline failed on @" << kernel.name;
    return passed;
  }

private:
  compiler::Frontend fe;
  bool ok = false;
};

/// The passes of pipeline `name`, before and from `allocate` on.
struct SplitPipeline {
  std::vector<std::string> beforeAllocate, fromAllocate;
};

inline SplitPipeline splitAtAllocate(llvm::StringRef name) {
  SplitPipeline split;
  auto names = passes::buildPipeline(name);
  EXPECT_TRUE(bool(names)) << llvm::toString(names.takeError());
  if (!names)
    return split;
  bool after = false;
  for (const std::string &n : *names) {
    after = after || n == "allocate";
    (after ? split.fromAllocate : split.beforeAllocate).push_back(n);
  }
  return split;
}

/// Backend (stack addresses for unplaced buffers) and a timing-only run.
inline std::optional<runtime::Report> simulateTimingOnly(ir::Kernel &kernel, const runtime::Target &target) {
  auto program = compiler::emitProgram(kernel, target);
  if (!program) {
    ADD_FAILURE() << llvm::toString(program.takeError());
    return std::nullopt;
  }
  runtime::SimOptions options;
  options.timingOnly = true;
  auto result = runtime::simulate(*program, target, options);
  if (!result) {
    ADD_FAILURE() << llvm::toString(result.takeError());
    return std::nullopt;
  }
  return result->report;
}

} // namespace tessel::test

#endif

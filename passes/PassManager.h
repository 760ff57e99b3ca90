//===- passes/PassManager.h - Runs a flat list of passes --------*- C++ -*-===//
//
// The PassManager runs passes in order on one kernel and provides what LLVM,
// MLIR and Triton users expect between passes (docs/passes.md):
//   printIRBefore / printIRAfter  dump around the named passes
//   printIRAfterAll               dump after every pass
//   printChanged                  the input, then the IR after each pass that
//                                 changed it; a pass that did not prints only
//                                 its banner with "(unchanged)"
//   dumpDir                       DIR/00-input.tir, DIR/01-<pass>.tir, ...
//   verifyEach                    ir::verifyKernel after every pass; invalid IR
//                                 stops the pipeline naming the pass
//   timePasses / stats            a timing table / the passes' statistics
// Every dump is a whole kernel preceded by a `//` banner:
//   // -----// IR Dump After allocate on @mm //----- //
// so any dump (or a dump-dir file) is valid input for `tessel opt`.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_PASSES_PASSMANAGER_H
#define TESSEL_PASSES_PASSMANAGER_H

#include "passes/Pass.h"
#include "passes/Statistics.h"

#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <set>
#include <string>
#include <vector>

namespace tessel::passes {

struct InstrumentationOptions {
  std::set<std::string> printIRBefore, printIRAfter;
  bool printIRAfterAll = false;
  bool printChanged = false;
  std::string dumpDir; // empty = none
  bool verifyEach = true;
  bool timePasses = false;
  bool stats = false;
  /// Steps of the pipeline taken before the pass manager runs: a leading
  /// select-blocks, the planner's step before TileGen. The passes are then
  /// numbered after them, as --print-pipeline lists them, and the kernel they
  /// start from is shown (--print-ir-after-all) and dumped as the last step's
  /// result (01-select-blocks.tir, beside 00-input.tir).
  std::vector<std::string> takenBefore;
};

/// What happened to one pass of the last run.
struct PassRecord {
  std::string name;
  PassResult result = PassResult::Unchanged;
  double seconds = 0;
};

/// The banner line before a dump ("Before", "After", "At Start").
std::string dumpBanner(llvm::StringRef when, llvm::StringRef pass, llvm::StringRef kernel,
                       bool unchanged = false);

/// The file name of pass `index` (1-based) in a dump directory:
/// "03-strip-cache.tir"; index 0 is "00-input.tir".
std::string dumpFileName(unsigned index, llvm::StringRef pass);

class PassManager {
public:
  explicit PassManager(InstrumentationOptions options = {},
                       llvm::raw_ostream &dumpStream = llvm::errs());

  void addPass(std::unique_ptr<Pass> pass);
  /// Adds the registered pass `name`; false if there is none.
  bool addPass(llvm::StringRef name);
  size_t size() const { return passes.size(); }
  /// The pipeline as a --passes= value: "implicit-transpose,fuse,allocate".
  std::string pipelineString() const;

  /// Runs every pass in order. Returns false after a pass failed (it has
  /// reported why), produced invalid IR (under verifyEach), or a dump could
  /// not be written.
  bool run(ir::Kernel &kernel, PassContext &ctx);

  const std::vector<PassRecord> &records() const { return lastRun; }
  const StatisticsCollector &statistics() const { return collector; }
  /// The --time-passes table of the last run.
  void printTimings(llvm::raw_ostream &os) const;

private:
  void dump(llvm::StringRef banner, const ir::Kernel &kernel);
  bool writeDumpFile(unsigned index, llvm::StringRef pass, const ir::Kernel &kernel,
                     DiagnosticEngine &diags);

  InstrumentationOptions options;
  llvm::raw_ostream &dumpStream;
  std::vector<std::unique_ptr<Pass>> passes;
  std::vector<PassRecord> lastRun;
  StatisticsCollector collector;
};

} // namespace tessel::passes

#endif

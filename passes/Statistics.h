//===- passes/Statistics.h - Figures passes report (--stats) ----*- C++ -*-===//
//
// LLVM's STATISTIC, for our pass interface: a pass calls
//   noteStatistic("sbuf-peak-bytes", peak, "SBUF bytes per partition at the peak");
// while the PassManager runs it, and --stats prints every figure after the
// pipeline. Outside a PassManager run the call does nothing. The collector
// is thread-local, so concurrent compilations (the tuner) do not mix.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_PASSES_STATISTICS_H
#define TESSEL_PASSES_STATISTICS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tessel::passes {

struct Statistic {
  std::string pass, name, description;
  int64_t value = 0;
};

/// Records a figure for the pass being run (replacing an earlier value of
/// the same name in the same pass run).
void noteStatistic(llvm::StringRef name, int64_t value, llvm::StringRef description);

/// Collects the statistics noted while it is the active collector.
class StatisticsCollector {
public:
  std::vector<Statistic> stats;
  /// Makes `this` the thread's collector, with `pass` as the current pass.
  void activate(llvm::StringRef pass);
  void deactivate();
  /// LLVM's `-stats` table: value, pass, description.
  void print(llvm::raw_ostream &os) const;
};

} // namespace tessel::passes

#endif

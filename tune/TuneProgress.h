//===- tune/TuneProgress.h - Progress and Ctrl-C for tessel tune -*- C++ -*-===//
#ifndef TESSEL_TUNE_TUNEPROGRESS_H
#define TESSEL_TUNE_TUNEPROGRESS_H

#include "tune/TuneSearch.h"

#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <chrono>

namespace tessel::tune {

/// Shows the search's progress: on a terminal one line redrawn in place (a
/// bar, done/total, the best so far, an ETA); otherwise one plain line per
/// configuration decided, for logs.
class TuneProgress {
public:
  TuneProgress(llvm::raw_ostream &os, bool terminal, unsigned jobs);
  /// A ProgressCallback (see TuneSearch.h).
  void update(const SearchState &state, const ConfigResult *result);
  /// Clears the bar; call once the search returned.
  void finish();

private:
  void drawBar(const SearchState &state);
  void printLine(const SearchState &state, const ConfigResult &result);

  llvm::raw_ostream &os;
  bool terminal;
  unsigned jobs;
  bool drawn = false;
  std::chrono::steady_clock::time_point start;
};

/// While alive, the first Ctrl-C (SIGINT) sets interrupted() instead of
/// killing the process; a second one kills it as usual.
class InterruptCatcher {
public:
  InterruptCatcher();
  ~InterruptCatcher();
  InterruptCatcher(const InterruptCatcher &) = delete;
  InterruptCatcher &operator=(const InterruptCatcher &) = delete;
  static const std::atomic<bool> &interrupted();
};

} // namespace tessel::tune

#endif

//===- support/Progress.h - A stage-and-elapsed-time status line -*- C++ -*-===//
//
// For long single steps that report no fraction done (an SVD, a Cholesky
// factorisation): on a terminal, one status line "[what] stage ... 12 s"
// redrawn every second by a background thread; elsewhere nothing, so logs and
// pipes stay clean.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_SUPPORT_PROGRESS_H
#define TESSEL_SUPPORT_PROGRESS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace tessel::support {

class StageProgress {
public:
  StageProgress(llvm::raw_ostream &os, bool enabled, llvm::StringRef what);
  ~StageProgress() { finish(); }
  StageProgress(const StageProgress &) = delete;
  StageProgress &operator=(const StageProgress &) = delete;

  /// Starts a new stage (its elapsed time restarts).
  void stage(llvm::StringRef name);
  /// Clears the status line and stops the thread; idempotent.
  void finish();

private:
  void draw(); // with `mu` held
  llvm::raw_ostream &os;
  const bool enabled;
  const std::string what;
  std::mutex mu;
  std::condition_variable wake;
  std::string current;
  std::chrono::steady_clock::time_point stageStart;
  bool done = false;
  std::thread ticker;
};

} // namespace tessel::support

#endif

//===- support/Progress.cpp - A stage-and-elapsed-time status line ---------===//
#include "support/Progress.h"

#include "llvm/Support/Format.h"

namespace tessel::support {

StageProgress::StageProgress(llvm::raw_ostream &os, bool enabled, llvm::StringRef what)
    : os(os), enabled(enabled), what(what.str()), stageStart(std::chrono::steady_clock::now()) {
  if (!enabled)
    return;
  ticker = std::thread([this] {
    std::unique_lock<std::mutex> lock(mu);
    while (!done) {
      draw();
      wake.wait_for(lock, std::chrono::seconds(1));
    }
  });
}

void StageProgress::draw() {
  if (current.empty())
    return;
  const double s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - stageStart).count();
  os << "\r\x1b[K[" << what << "] " << current << " ... " << llvm::format("%.0f s", s);
  os.flush();
}

void StageProgress::stage(llvm::StringRef name) {
  if (!enabled)
    return;
  std::lock_guard<std::mutex> lock(mu);
  current = name.str();
  stageStart = std::chrono::steady_clock::now();
  draw();
}

void StageProgress::finish() {
  if (!enabled)
    return;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (done)
      return;
    done = true;
    os << "\r\x1b[K";
    os.flush();
  }
  wake.notify_all();
  if (ticker.joinable())
    ticker.join();
}

} // namespace tessel::support

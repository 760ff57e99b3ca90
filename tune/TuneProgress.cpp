#include "tune/TuneProgress.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <csignal>
#include <signal.h>
#include <string>

namespace tessel::tune {
namespace {

constexpr int kBarWidth = 24;

std::string formatSeconds(double s) {
  if (s < 60)
    return llvm::formatv("{0}s", static_cast<int>(s + 0.5));
  if (s < 3600)
    return llvm::formatv("{0}m{1:2}s", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  return llvm::formatv("{0}h{1:2}m", static_cast<int>(s) / 3600, static_cast<int>(s) / 60 % 60);
}

std::string bestSoFar(const SearchState &state) {
  if (state.bestUs == 0)
    return "best: none yet";
  return llvm::formatv("best {0:f1} us ({1})", state.bestUs, formatBlock(state.best));
}

/// Set by the SIGINT handler (a lock-free atomic is async-signal-safe).
std::atomic<bool> gInterrupted{false};
struct sigaction gPrevious;

extern "C" void onInterrupt(int) {
  if (gInterrupted.exchange(true)) {
    std::signal(SIGINT, SIG_DFL);
    std::raise(SIGINT);
  }
}

} // namespace

TuneProgress::TuneProgress(llvm::raw_ostream &os, bool terminal, unsigned jobs)
    : os(os), terminal(terminal), jobs(jobs), start(std::chrono::steady_clock::now()) {}

void TuneProgress::update(const SearchState &state, const ConfigResult *result) {
  if (terminal)
    drawBar(state);
  else if (result)
    printLine(state, *result);
}

void TuneProgress::drawBar(const SearchState &state) {
  std::string line;
  if (state.compiled < state.total && state.decided < state.total &&
      state.simulated + state.pruned + state.overBudget == 0) {
    line = llvm::formatv("tune: compiling {0}/{1}", state.compiled, state.total);
  } else {
    size_t filled = state.total ? state.decided * kBarWidth / state.total : kBarWidth;
    std::string bar(filled, '=');
    bar.resize(kBarWidth, ' ');
    std::string eta = "ETA -";
    if (state.simulated > 0) {
      double perSim = state.simSeconds / state.simulated;
      eta = "ETA " + formatSeconds(perSim * state.toSimulate / std::max(1u, jobs));
    }
    line = llvm::formatv("tune [{0}] {1}/{2}  {3}  {4}", bar, state.decided, state.total,
                         bestSoFar(state), eta);
  }
  // Back to column 0, draw, and clear what a longer previous line left.
  os << "\r" << line << "\x1b[K";
  os.flush();
  drawn = true;
}

void TuneProgress::printLine(const SearchState &state, const ConfigResult &r) {
  std::string what;
  switch (r.status) {
  case ConfigStatus::Simulated:
    what = llvm::formatv("{0} {1:f1} us (MFU {2:f1}%)", r.fromCache ? "cached" : "simulated",
                         r.sim->latencyUs, r.sim->mfu * 100);
    break;
  case ConfigStatus::Pruned:
    what = "pruned (" + r.reason + ")";
    break;
  case ConfigStatus::OverBudget: what = "not simulated (--budget used up)"; break;
  case ConfigStatus::Illegal: what = "illegal: " + r.reason; break;
  case ConfigStatus::Failed: what = "simulation failed: " + r.reason; break;
  case ConfigStatus::Interrupted: what = "interrupted"; break;
  }
  double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  os << llvm::formatv("tune: [{0}/{1}] {2}: {3}; {4} [{5}]\n", state.decided, state.total,
                      formatBlock(r.block), what, bestSoFar(state), formatSeconds(elapsed));
}

void TuneProgress::finish() {
  if (drawn)
    os << "\r\x1b[K";
  os.flush();
  drawn = false;
}

InterruptCatcher::InterruptCatcher() {
  gInterrupted = false;
  struct sigaction action = {};
  action.sa_handler = onInterrupt;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &gPrevious);
}

InterruptCatcher::~InterruptCatcher() { sigaction(SIGINT, &gPrevious, nullptr); }

const std::atomic<bool> &InterruptCatcher::interrupted() { return gInterrupted; }

} // namespace tessel::tune

//===- runtime/FastForward.h - Skipping a loop's steady state ---*- C++ -*-===//
//
// Internal to the runtime. Loop fast-forward for timing-only runs: once the
// iterations of a loop repeat the same timing pattern -- two consecutive
// periods of p iterations in which every unit's clock moves by the same
// delta, every static instruction waits and works as long, the counters grow
// as much, the hazard records are the same accesses one step further, and the
// rotating state (buffer slots, DMA queues, the stationary operand) is back
// where it was -- the simulator advances k whole periods arithmetically
// (TimingScheduler::skipPeriods) and executes the rest of the loop.
//
// The skip never crosses an iteration whose tile shapes differ (a `min`
// extent that switches, e.g. the partial edge tile), and it leaves at least
// one period and one iteration to execute exactly, so the loop's last
// iterations, and with them the state the program continues from, are
// simulated. Counters (instructions, bytes, FLOPs, busy time) are exact;
// times are those of the repeated pattern (docs/simulator.md).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_FASTFORWARD_H
#define TESSEL_RUNTIME_FASTFORWARD_H

#include "runtime/Program.h"
#include "runtime/TimingScheduler.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <vector>

namespace tessel::runtime {

/// What fast-forward needs to know of each loop, computed once per program.
class LoopShapes {
public:
  explicit LoopShapes(const Program &P);
  struct Info {
    std::vector<uint32_t> body, bodyDma; ///< instruction ids in the body (nested too), sorted
    std::vector<uint32_t> dmaPos;        ///< index into body of each bodyDma
    std::vector<uint32_t> buffers;       ///< buffers allocated in the body
    std::vector<uint32_t> units;         ///< units its instructions run on
    uint64_t instrsPerIteration = 0;
    /// bound - size of every `min` extent whose choice may depend on the loop variable
    std::vector<AffineExpr> switches;
    std::vector<uint32_t> innerLoops; ///< loops nested in the body
    bool skippable = false;
  };
  const Info &operator[](uint32_t loop) const { return info[loop]; }

private:
  std::vector<Info> info;
};

/// Watches one execution of one loop (the simulator's walk makes one per
/// loop it enters) and says at each iteration boundary how many iterations
/// to skip.
class LoopWatch {
public:
  LoopWatch(const Program &P, const LoopShapes::Info &info, const Loop &loop, TimingScheduler &sched,
            bool outermost);
  ~LoopWatch();
  /// At the start of iteration `it` (0-based): the number of iterations
  /// skipped (the caller moves past them), or 0. `vars` holds the current
  /// loop variables; `allocCount` and `instrsDone` are advanced here.
  int64_t boundary(int64_t it, const std::vector<int64_t> &vars, std::vector<int64_t> &allocCount,
                   uint64_t &instrsDone);

  static constexpr int MaxPeriod = 8;
  /// A loop too short to win back what watching it costs is not watched.
  static bool worthWatching(const Loop &loop, const LoopShapes::Info &info) {
    return loop.tripCount() >= 6 && uint64_t(loop.tripCount()) * info.instrsPerIteration >= 512;
  }
  /// A loop not steady after this many iterations is left alone: watching
  /// costs a mark per iteration, and keeping the hazard-record log.
  static constexpr int64_t GiveUpAfter = 4 * MaxPeriod + 8;

private:
  struct Boundary {
    TimingScheduler::Mark timing;
    std::vector<int64_t> allocs; ///< allocCount of the body's buffers
    uint64_t instrsDone = 0;
  };
  const Program &P;
  const LoopShapes::Info &info;
  const Loop &loop;
  TimingScheduler &sched;
  bool outermost, done = false;
  std::deque<Boundary> history; ///< boundaries first() .. it
  int64_t first = 0;

  bool sameRotation(const Boundary &b, const Boundary &c) const;
  /// Comparing the shared resources' tails costs at most a few times what
  /// simulating an iteration does.
  size_t maxTail() const { return std::max<size_t>(64, 2 * info.instrsPerIteration); }
  /// Whether every tile shape is the same in iterations [from, to).
  bool sameShapes(int64_t from, int64_t to, const std::vector<int64_t> &vars) const;
};

} // namespace tessel::runtime

#endif

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
    /// The least number of iterations after which every buffer slot and DMA
    /// queue the body rotates is back where it was: a skipped period is a
    /// multiple of it. Past LoopWatch::MaxPeriod the loop is not skippable.
    int64_t period = 1;
    bool skippable = false;
  };
  const Info &operator[](uint32_t loop) const { return info[loop]; }

private:
  std::vector<Info> info;
};

/// Watches one execution of one loop (the simulator's walk makes one per
/// loop it enters) and says at each iteration boundary how many iterations
/// to skip.
///
/// The scheduler keeps its log of hazard records for the outermost watch
/// that may still skip (the watches nested in it compare positions after its
/// oldest boundary), trimmed to that watch's oldest boundary, and not at all
/// once no watch may skip.
class LoopWatch {
public:
  /// `enclosing`: the watch of the innermost enclosing loop that is watched.
  LoopWatch(const Program &P, const LoopShapes::Info &info, const Loop &loop, TimingScheduler &sched,
            const LoopWatch *enclosing);
  ~LoopWatch();
  /// At the start of iteration `it` (0-based): the number of iterations
  /// skipped (the caller moves past them), or 0. `vars` holds the current
  /// loop variables; `allocCount` and `instrsDone` are advanced here.
  int64_t boundary(int64_t it, const std::vector<int64_t> &vars, std::vector<int64_t> &allocCount,
                   uint64_t &instrsDone);

  /// Whether the watch skipped iterations.
  bool skipped() const { return didSkip; }

  static constexpr int MaxPeriod = 8;
  /// A loop too short to win back what watching it costs is not watched,
  /// nor one too short for any skip: two periods of the smallest after a
  /// warm-up iteration, then at least one to skip and one more period and
  /// iteration to simulate.
  static bool worthWatching(const Loop &loop, const LoopShapes::Info &info) {
    return loop.tripCount() >= std::max<int64_t>(6, 4 * info.period + 2) &&
           uint64_t(loop.tripCount()) * info.instrsPerIteration >= 512;
  }
  /// A loop not steady after this many iterations is left alone: watching
  /// costs a mark per iteration, and keeping the hazard-record log.
  static constexpr int64_t GiveUpAfter = 4 * MaxPeriod + 8;
  /// The most hazard records the log keeps for a watch (1.75 MiB): a loop
  /// whose iterations make so many records that two periods exceed it is
  /// an outer loop that rarely settles, and keeping its log cost more than
  /// simulating (page faults and cache misses on every record).
  static constexpr uint64_t LogBudget = uint64_t(1) << 15;

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
  const LoopWatch *enclosing;
  /// ownsLog: no enclosing watch may still skip, so this one keeps the log.
  bool ownsLog, done = false, didSkip = false;
  std::deque<Boundary> history; ///< boundaries first() .. it
  int64_t first = 0;
  /// The longest period tried: the largest multiple of info.period up to
  /// MaxPeriod whose two periods of records fit LogBudget.
  int64_t maxPeriod;

  /// No iteration will be skipped any more: the log is no longer needed.
  void finish();

  bool sameRotation(const Boundary &b, const Boundary &c) const;
  /// Comparing the shared resources' tails costs at most a few times what
  /// simulating an iteration does.
  size_t maxTail() const { return std::max<size_t>(64, 2 * info.instrsPerIteration); }
  /// Whether every tile shape is the same in iterations [from, to).
  bool sameShapes(int64_t from, int64_t to, const std::vector<int64_t> &vars) const;
};

/// Which executions of each loop are watched. A loop whose execution was
/// watched without a skip (its iterations never settled, e.g. one unit drifts
/// against another all along) is watched again only after skipping 1, 2, 4,
/// ... executions, so that watching costs O(log n) of its n executions; a
/// skip makes every execution watched again.
class WatchBackoff {
public:
  explicit WatchBackoff(size_t loops) : state(loops) {}
  bool shouldWatch(uint32_t loop) {
    State &s = state[loop];
    if (s.wait == 0)
      return true;
    --s.wait;
    return false;
  }
  void watched(uint32_t loop, bool skipped) {
    State &s = state[loop];
    s.wait = skipped ? 0 : uint64_t(1) << std::min<unsigned>(s.misses, 62);
    s.misses = skipped ? 0 : s.misses + 1;
  }

private:
  struct State {
    uint64_t wait = 0; ///< executions still to leave unwatched
    unsigned misses = 0; ///< watched executions in a row without a skip
  };
  std::vector<State> state;
};

} // namespace tessel::runtime

#endif

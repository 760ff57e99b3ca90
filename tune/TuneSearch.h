//===- tune/TuneSearch.h - The tuner's search over a block space -*- C++ -*-===//
//
// 1. Compile every configuration not already cached (in parallel) and ask
//    the cost model for its roofline latency, a lower bound on its simulated
//    latency. Configurations the compiler rejects are excluded (Illegal).
// 2. Simulate the rest in increasing order of predicted latency, `jobs`
//    at a time. A configuration whose bound is no better than the best
//    latency measured so far cannot win and is skipped (Pruned); so are those
//    the predicted latency rules out (spilling, far behind the front runner or
//    the best so far: TuneSearch.cpp, docs/tuning.md), measured to keep the
//    exhaustive best. `budget` caps the simulations; `stop` (Ctrl-C) stops dispatching,
//    lets the simulations in flight finish, and marks the rest Interrupted.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_TUNE_TUNESEARCH_H
#define TESSEL_TUNE_TUNESEARCH_H

#include "tune/TuneEval.h"
#include "tune/TuneResult.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace tessel::tune {

struct SearchOptions {
  unsigned jobs = 1;
  uint64_t budget = std::numeric_limits<uint64_t>::max();
  bool prune = true; ///< false: simulate every legal configuration (--exhaustive)
  /// skip the steady state of loops arithmetically (runtime/FastForward.h); false: --exact
  bool fastForward = true;
};

/// Where the search stands; passed to the progress callback.
struct SearchState {
  size_t total = 0;    ///< configurations in the space
  size_t decided = 0;  ///< configurations with their final status
  size_t compiled = 0; ///< compiled or read from the cache (step 1)
  size_t simulated = 0, fromCache = 0, pruned = 0, illegal = 0, failed = 0, overBudget = 0;
  size_t toSimulate = 0; ///< still pending in step 2, at most (pruning may skip some)
  double bestUs = 0;     ///< 0 = nothing measured yet
  BlockConfig best;
  double simSeconds = 0; ///< wall time of the simulations this process ran
  bool interrupted = false;
  std::vector<std::string> warnings;
};

/// Called after each configuration is decided (`result` set) or compiled
/// (`result` null), under the search's lock.
using ProgressCallback = std::function<void(const SearchState &, const ConfigResult *result)>;

/// Cached results of earlier runs, by formatBlock(config).
using CachedResults = std::map<std::string, ConfigResult>;

/// Evaluates `space`; returns one result per configuration, in space order.
std::vector<ConfigResult> runSearch(const TuneJob &job, const std::vector<BlockConfig> &space,
                                    const CachedResults &cached, const SearchOptions &options,
                                    const std::atomic<bool> &stop, const ProgressCallback &progress,
                                    SearchState &state);

} // namespace tessel::tune

#endif

#include "tune/TuneSearch.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/ThreadPool.h"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <optional>

namespace tessel::tune {
namespace {

/// The search's shared state; every member is guarded by `mu`.
class Search {
public:
  Search(const TuneJob &job, const std::vector<BlockConfig> &space, const SearchOptions &options,
         const std::atomic<bool> &stop, const ProgressCallback &progress, SearchState &state)
      : job(job), options(options), stop(stop), progress(progress), state(state),
        results(space.size()), programs(space.size()) {
    state = SearchState{};
    state.total = space.size();
    for (size_t i = 0; i < space.size(); ++i)
      results[i].block = space[i];
  }

  std::vector<ConfigResult> run(const CachedResults &cached) {
    std::vector<size_t> toCompile = useCache(cached);
    llvm::ThreadPool pool(llvm::hardware_concurrency(options.jobs));
    for (size_t i : toCompile)
      pool.async([this, i] { compile(i); });
    pool.wait();

    for (size_t i = 0; i < results.size(); ++i)
      if (!decided(i) && results[i].model)
        order.push_back(i);
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return std::tie(results[a].model->predictedUs, results[a].block) <
             std::tie(results[b].model->predictedUs, results[b].block);
    });
    if (options.prune) {
      pruneSpilling();
      pruneByEstimate();
    }
    state.toSimulate = order.size() - next;
    for (unsigned j = 0; j < options.jobs; ++j)
      pool.async([this] { simulateInOrder(); });
    pool.wait();

    // Left uncompiled by Ctrl-C.
    for (size_t i = 0; i < results.size(); ++i)
      if (!decided(i)) {
        state.interrupted = true;
        decide(i, ConfigStatus::Interrupted);
      }
    return std::move(results);
  }

private:
  bool decided(size_t i) const { return isDecided[i]; }

  /// Records the final status of configuration `i` (caller holds `mu`, or
  /// no worker runs).
  void decide(size_t i, ConfigStatus status) {
    ConfigResult &r = results[i];
    r.status = status;
    isDecided[i] = true;
    ++state.decided;
    switch (status) {
    case ConfigStatus::Simulated:
      ++(r.fromCache ? state.fromCache : state.simulated);
      if (r.model && r.sim && r.sim->latencyUs > 0)
        overestimate = std::max(overestimate, r.model->predictedUs / r.sim->latencyUs - 1);
      if (state.bestUs == 0 || r.sim->latencyUs < state.bestUs ||
          (r.sim->latencyUs == state.bestUs && r.block < state.best)) {
        state.bestUs = r.sim->latencyUs;
        state.best = r.block;
      }
      break;
    case ConfigStatus::Pruned: ++state.pruned; break;
    case ConfigStatus::OverBudget: ++state.overBudget; break;
    case ConfigStatus::Illegal: ++state.illegal; break;
    case ConfigStatus::Failed: ++state.failed; break;
    case ConfigStatus::Interrupted: break;
    }
    if (progress)
      progress(state, &r);
  }

  /// Takes what earlier runs learned; returns the configurations to compile.
  std::vector<size_t> useCache(const CachedResults &cached) {
    isDecided.assign(results.size(), false);
    std::vector<size_t> toCompile;
    for (size_t i = 0; i < results.size(); ++i) {
      auto it = cached.find(formatBlock(results[i].block));
      if (it == cached.end() || !(it->second.model || it->second.status == ConfigStatus::Illegal)) {
        toCompile.push_back(i);
        continue;
      }
      const ConfigResult &c = it->second;
      ++state.compiled;
      results[i].model = c.model;
      if (c.status == ConfigStatus::Illegal) {
        results[i].reason = c.reason;
        decide(i, ConfigStatus::Illegal);
      } else if (c.status == ConfigStatus::Simulated && c.sim) {
        results[i].sim = c.sim;
        results[i].fromCache = true;
        decide(i, ConfigStatus::Simulated);
      }
    }
    return toCompile;
  }

  void compile(size_t i) {
    if (stop)
      return;
    CompiledConfig c = compileConfig(job, results[i].block);
    std::lock_guard<std::mutex> lock(mu);
    ++state.compiled;
    if (!c.program) {
      results[i].reason = c.error;
      decide(i, ConfigStatus::Illegal);
      return;
    }
    results[i].model = c.model;
    programs[i] = std::move(c.program);
    if (progress)
      progress(state, nullptr);
  }

  /// The model's second rule (docs/cost-models.md, the paper's Table 3): a block whose
  /// buffers spill pays the spill traffic and waits on its reloads, so while
  /// some configuration fits SBUF, those that spill are not simulated. Not a
  /// bound like the first rule: bench/paper_tables.py measures that it keeps
  /// the exhaustive best.
  void pruneSpilling() {
    auto spills = [&](size_t i) { return results[i].model->spillBytes > 0; };
    if (std::all_of(order.begin(), order.end(), spills))
      return;
    for (size_t i : order)
      if (spills(i)) {
        results[i].reason = llvm::formatv("the model predicts {0} bytes of spill traffic, and "
                                          "other configurations fit SBUF",
                                          results[i].model->spillBytes)
                                .str();
        decide(i, ConfigStatus::Pruned);
      }
    llvm::erase_if(order, spills);
  }

  /// The model's third rule: configurations whose latency estimate
  /// (KernelCost::predictedUs) is more than kEstimateMargin above the lowest
  /// estimate, or above what that configuration simulates if more, are not
  /// simulated. Measured, like the second rule.
  void pruneByEstimate() {
    // Over every configuration with a model, those answered from the cache
    // included, so a second run prunes exactly what the first did.
    // (Those the spill rule pruned do not count.)
    double lowest = 0;
    for (size_t i = 0; i < results.size(); ++i) {
      const ConfigResult &r = results[i];
      bool pruned = decided(i) && r.status == ConfigStatus::Pruned;
      if (r.model && !pruned && (lowest == 0 || r.model->predictedUs < lowest))
        lowest = r.model->predictedUs;
    }
    // The lowest estimate's own configuration, simulated first (or from the
    // cache): where the model underestimates it, the others' estimates are
    // compared with what it measured, so a configuration the model ranks
    // behind it by less than the model's error is still simulated.
    if (std::optional<double> measured = measureLowest(lowest))
      lowest = std::max(lowest, *measured);
    double limit = lowest * (1 + kEstimateMargin);
    auto far = [&](size_t i) { return results[i].model->predictedUs > limit; };
    for (size_t i : order)
      if (far(i)) {
        results[i].reason = llvm::formatv("the predicted latency {0:f1} us is over {1:f0}% above "
                                          "the lowest, {2:f1} us",
                                          results[i].model->predictedUs, kEstimateMargin * 100,
                                          lowest)
                                .str();
        decide(i, ConfigStatus::Pruned);
      }
    llvm::erase_if(order, far);
  }

  /// The simulated latency of a configuration whose estimate is `lowest`:
  /// from the cache, or simulated now as the first of `order`.
  std::optional<double> measureLowest(double lowest) {
    for (const ConfigResult &r : results)
      if (r.model && r.sim && r.model->predictedUs == lowest)
        return r.sim->latencyUs;
    if (order.empty() || results[order.front()].model->predictedUs != lowest)
      return std::nullopt;
    simulateInOrder(1);
    const ConfigResult &first = results[order.front()];
    return first.sim ? std::optional<double>(first.sim->latencyUs) : std::nullopt;
  }

  /// How far above the lowest estimate a configuration is still simulated: a
  /// policy -- the estimate ranks configurations well but is not exact. It
  /// covers the estimate's measured error (at most 7% from the simulator on
  /// bench/mlp_table.py's 216 MLP shapes), so a configuration the model ranks
  /// behind by less than its own error is still simulated (the bench's
  /// tuner-quality table measures that the best survives and how many run).
  static constexpr double kEstimateMargin = 0.08;

  /// The model's fourth rule, as simulations come in: a configuration whose
  /// estimate is more than this above the best latency simulated so far is
  /// not simulated. It could beat that latency only if the estimate
  /// overestimated it by more, so the margin is the most the estimate has
  /// overestimated this kernel's configurations simulated so far (the
  /// model's error is largely the kernel's: its loop nests' overlap), plus
  /// kOverestimateSlack, and at least kOverestimateFloor. A policy, measured
  /// like the others: on 15 kernels x 2 targets it kept the exhaustive best
  /// (bench/paper_tables.py's tuner-quality table reports the rest).
  double runningMargin() const { return std::max(kOverestimateFloor, overestimate + kOverestimateSlack); }
  static constexpr double kOverestimateFloor = 0.03, kOverestimateSlack = 0.02;

  /// One worker of step 2: takes the next configuration in estimate order.
  void simulateInOrder(size_t upTo = SIZE_MAX) {
    std::unique_lock<std::mutex> lock(mu);
    while (next < std::min(order.size(), upTo)) {
      size_t i = order[next++];
      ConfigResult &r = results[i];
      if (state.toSimulate > 0)
        --state.toSimulate;
      if (stop) {
        state.interrupted = true;
        decide(i, ConfigStatus::Interrupted);
        continue;
      }
      if (options.prune && state.bestUs > 0 && r.model->predictedUs > state.bestUs * (1 + runningMargin())) {
        r.reason = llvm::formatv("the predicted latency {0:f1} us is over {1:f0}% above the best "
                                 "simulated, {2:f1} us",
                                 r.model->predictedUs, runningMargin() * 100, state.bestUs)
                       .str();
        decide(i, ConfigStatus::Pruned);
        continue;
      }
      if (options.prune && state.bestUs > 0 && r.model->boundUs >= state.bestUs) {
        r.reason = llvm::formatv("model bound {0:f1} us >= best {1:f1} us", r.model->boundUs,
                                 state.bestUs)
                       .str();
        decide(i, ConfigStatus::Pruned);
        continue;
      }
      if (started >= options.budget) {
        decide(i, ConfigStatus::OverBudget);
        continue;
      }
      ++started;
      lock.unlock();
      auto begin = std::chrono::steady_clock::now();
      std::string error;
      bool illegal = false;
      std::optional<SimMeasure> measured;
      if (!programs[i]) { // the model came from the cache
        CompiledConfig c = compileConfig(job, r.block);
        error = c.error;
        illegal = !c.program;
        programs[i] = std::move(c.program);
      }
      if (programs[i]) {
        llvm::Expected<SimMeasure> m = simulateConfig(*programs[i], job.target, options.fastForward);
        if (m)
          measured = *m;
        else
          error = llvm::toString(m.takeError());
        programs[i].reset();
      }
      double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
      lock.lock();
      state.simSeconds += seconds;
      if (!measured) {
        r.reason = error;
        decide(i, illegal ? ConfigStatus::Illegal : ConfigStatus::Failed);
        continue;
      }
      r.sim = measured;
      // The pruning is safe only if the model's bound holds; say so if not.
      if (r.model->boundUs > measured->latencyUs * (1 + 1e-9))
        state.warnings.push_back(llvm::formatv("the cost model's lower bound {0:f1} us exceeds the "
                                               "simulated {1:f1} us of {2}; pruning may be unsafe",
                                               r.model->boundUs, measured->latencyUs,
                                               formatBlock(r.block)));
      decide(i, ConfigStatus::Simulated);
    }
  }

  const TuneJob &job;
  const SearchOptions &options;
  const std::atomic<bool> &stop;
  const ProgressCallback &progress;
  SearchState &state;

  std::mutex mu;
  std::vector<ConfigResult> results;
  std::vector<std::optional<runtime::Program>> programs;
  std::vector<bool> isDecided;
  std::vector<size_t> order; ///< step 2: undecided configurations by bound
  size_t next = 0;
  uint64_t started = 0;
  /// The most a simulated configuration's estimate exceeded its latency
  /// (estimate / simulated - 1; negative while the model underestimates).
  double overestimate = -1;
};

} // namespace

std::vector<ConfigResult> runSearch(const TuneJob &job, const std::vector<BlockConfig> &space,
                                    const CachedResults &cached, const SearchOptions &options,
                                    const std::atomic<bool> &stop, const ProgressCallback &progress,
                                    SearchState &state) {
  return Search(job, space, options, stop, progress, state).run(cached);
}

} // namespace tessel::tune

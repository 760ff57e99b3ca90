//===- driver/TuneCommand.cpp - `tessel tune` and `tessel tune merge` -----===//
//
// tessel tune FILE.tsl: enumerate the kernel's block configurations
// (TuneSpace.h), take what the cache knows (TuneCache.h), search the rest
// (TuneSearch.h) with a progress display (TuneProgress.h), save to the cache,
// print the ranked report (TuneReport.h) and optionally plot it (TunePlot.h).
// tessel tune merge A.json B.json ...: combine the --report=json reports of
// the shards of one tuning. docs/tuning.md is the user's guide.
//
//===----------------------------------------------------------------------===//
#include "driver/Commands.h"
#include "driver/CommonOptions.h"
#include "driver/CompileOptions.h"
#include "compiler/Compile.h"
#include "compiler/TensorParallel.h"
#include "driver/LoadProgram.h"
#include "driver/OptionChecks.h"
#include "tune/TuneCache.h"
#include "tune/TuneEval.h"
#include "tune/TunePlot.h"
#include "tune/TuneProgress.h"
#include "tune/TuneReport.h"
#include "tune/TuneSearch.h"
#include "tune/TuneSpace.h"

#include "passes/TargetGeometry.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace cl = llvm::cl;

namespace tessel::driver {
using namespace compiler;
using namespace tune;
namespace {

/// Exit status after Ctrl-C, as a shell reports a SIGINT death (128 + 2).
constexpr int kInterruptedStatus = 130;

enum class TuneFormat { Text, JSON, CSV };

bool error(const llvm::Twine &msg) {
  llvm::WithColor::error(llvm::errs(), "tessel tune") << msg << "\n";
  return false;
}

int fail(const llvm::Twine &msg) {
  error(msg);
  return 1;
}

void warning(const llvm::Twine &msg) {
  llvm::WithColor::warning(llvm::errs(), "tessel tune") << msg << "\n";
}

/// Options `tune` and `tune merge` share.
struct OutputOptions {
  SharedOptions shared{"tessel tune"};
  cl::opt<TuneFormat> format{
      "report", cl::desc("Report format (default: text)"), cl::init(TuneFormat::Text),
      cl::values(clEnumValN(TuneFormat::Text, "text", "a ranked table"),
                 clEnumValN(TuneFormat::JSON, "json",
                            "one JSON object: results, best, counts (docs/tuning.md); the input "
                            "of tessel tune merge"),
                 clEnumValN(TuneFormat::CSV, "csv", "one row per configuration")),
      cl::cat(toolCategory())};
  cl::opt<std::string> plot{
      "plot",
      cl::desc("Also write an SVG plot of the simulated latency against the row strip m, one "
               "line per output block n (needs gnuplot)"),
      cl::value_desc("FILE.svg"), cl::cat(toolCategory())};
  cl::opt<std::string> cache{
      "cache",
      cl::desc("The results cache (default: $XDG_CACHE_HOME/tessel/tune.json, else "
               "~/.cache/tessel/tune.json)"),
      cl::value_desc("FILE"), cl::cat(toolCategory())};
  cl::opt<bool> noCache{"no-cache", cl::desc("Neither read nor write the results cache"),
                        cl::cat(toolCategory())};

  OutputOptions() { shared.addOutput("Write the report to FILE ('-' for stdout, the default)"); }
  const std::string &output() const { return shared.output(); }

  /// `inputs`: the files the command reads, which no output may replace.
  bool check(llvm::ArrayRef<std::string> inputs) const {
    if (noCache && cache.getNumOccurrences())
      return error("give --cache or --no-cache, not both");
    if (!shared.validate() || !rejectEmptyValue(cache) || !rejectEmptyValue(plot))
      return false;
    // The cache is read and written: no other output may replace it (or its lock).
    std::vector<std::string> read(inputs.begin(), inputs.end());
    std::vector<NamedOutput> outputs = {{"-o", output()}, {"--plot", plot}};
    if (!noCache) {
      outputs.push_back({"--cache", cachePath()});
      read.push_back(cachePath() + ".lock");
    }
    return rejectUnwritableOutput(outputs[0]) && rejectUnwritableOutput(outputs[1], /*allowStdout=*/false) &&
           rejectClashingOutputs(outputs, read);
  }
  std::string cachePath() const { return cache.empty() ? defaultTuneCachePath() : cache.getValue(); }

  bool write(const TuneReport &report) const {
    std::error_code ec;
    llvm::ToolOutputFile out(output(), ec, llvm::sys::fs::OF_Text);
    if (ec)
      return error("cannot write the report '" + output() + "': " + ec.message());
    switch (format) {
    case TuneFormat::Text: printReportTable(report, out.os()); break;
    case TuneFormat::JSON: out.os() << llvm::formatv("{0:2}", reportToJSON(report)) << "\n"; break;
    case TuneFormat::CSV: printReportCSV(report, out.os()); break;
    }
    out.keep();
    return true;
  }

  bool writePlot(const TuneReport &report) const {
    if (plot.empty())
      return true;
    if (llvm::Error err = writeLatencyPlot(report, plot))
      return error(llvm::toString(std::move(err)));
    return true;
  }
};

/// Stores `r` in the cache entry when a later run can reuse it.
void recordResult(CacheEntry &entry, const ConfigResult &r) {
  bool known = r.status == ConfigStatus::Illegal || r.model;
  if (r.status == ConfigStatus::Failed || !known)
    return;
  ConfigResult stored = r;
  stored.fromCache = false;
  entry.configs[formatBlock(r.block)] = std::move(stored);
}

/// Stores `results` in the cache entry; a finished run also records its best.
void recordInCache(CacheEntry &entry, const std::vector<ConfigResult> &results, bool finished) {
  for (const ConfigResult &r : results)
    recordResult(entry, r);
  if (finished)
    if (const ConfigResult *best = bestResult(results))
      entry.best = best->block;
}

bool saveCache(TuneCache &cache) {
  if (llvm::Error err = cache.save()) {
    warning(llvm::toString(std::move(err)));
    return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// tessel tune merge
//===----------------------------------------------------------------------===//

/// The shards' reports merged so far.
struct Merge {
  TuneReport merged;
  std::string firstName;
  std::map<std::string, ConfigResult> byConfig;
  std::set<std::pair<unsigned, unsigned>> shardsSeen;

  /// Adds the report at `path`; false after reporting.
  bool add(const std::string &path);
  /// Completes the merged report; `complete` tells whether it covers the
  /// whole space with every result. False after reporting.
  bool finish(bool &complete);
};

bool Merge::add(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/true);
  if (!buffer)
    return error("cannot read '" + path + "': " + buffer.getError().message());
  llvm::Expected<TuneReport> report = parseReportJSON((*buffer)->getBuffer(), path);
  if (!report)
    return error(llvm::toString(report.takeError()));
  if (llvm::Error err = checkShardResults(*report, path).takeError())
    return error(llvm::toString(std::move(err)));
  if (firstName.empty()) {
    firstName = path;
    merged.key = report->key;
    merged.params = report->params;
    merged.spaceSize = report->spaceSize;
    merged.space = report->space;
    merged.version = report->version;
  } else if (report->key.hash != merged.key.hash || report->spaceSize != merged.spaceSize) {
    return error(llvm::formatv("'{0}' is the tuning of kernel '{1}' ({2}) on '{3}' with "
                               "--passes={4} (tessel {5}), '{6}' of kernel '{7}' ({8}) on "
                               "'{9}' with --passes={10} (tessel {11}); merge only the shards "
                               "of one tuning",
                               path, report->key.kernel, report->key.shapes, report->key.target,
                               report->key.pipeline, report->version, firstName, merged.key.kernel,
                               merged.key.shapes, merged.key.target, merged.key.pipeline, merged.version));
  } else if (report->space != merged.space) {
    return error(llvm::formatv("'{0}' and '{1}' split different spaces of {2} configurations "
                               "(tuned with different --space?); merge only the shards of one "
                               "tuning",
                               path, firstName, merged.spaceSize));
  }
  for (Shard s : report->shards) {
    if (!shardsSeen.insert({s.index, s.count}).second) {
      warning(llvm::formatv("shard {0}/{1} is given twice ('{2}'); its results are merged once", s.index,
                            s.count, path));
      continue;
    }
    merged.shards.push_back(s);
  }
  merged.pruning &= report->pruning;
  for (ConfigResult &r : report->results) {
    std::string name = formatBlock(r.block);
    auto it = byConfig.find(name);
    bool better = it == byConfig.end() || (!it->second.sim && r.sim) ||
                  (it->second.status == ConfigStatus::Interrupted && r.status != ConfigStatus::Interrupted);
    if (better)
      byConfig[name] = std::move(r);
  }
  return true;
}

bool Merge::finish(bool &complete) {
  for (auto &kv : byConfig)
    merged.results.push_back(std::move(kv.second));
  // What is still missing or unfinished once every report is in (a shard
  // given twice, or claimed by a report that lacks its results, may have
  // them from another report).
  llvm::Expected<ShardGaps> gaps = checkShardResults(merged, "the merged reports");
  if (!gaps)
    return error(llvm::toString(gaps.takeError()));
  const std::vector<std::string> &missing = gaps->missing, &unfinished = gaps->unfinished;
  merged.interrupted = !unfinished.empty();
  merged.rank();
  std::sort(merged.shards.begin(), merged.shards.end(), [](Shard a, Shard b) {
    return std::tie(a.count, a.index) < std::tie(b.count, b.index);
  });
  auto some = [](const std::vector<std::string> &names) {
    constexpr size_t kShown = 4;
    std::string s = llvm::join(llvm::make_range(names.begin(), names.begin() + std::min(names.size(), kShown)), ", ");
    return names.size() > kShown ? s + ", ..." : s;
  };
  complete = merged.coversSpace() && !merged.interrupted && missing.empty() && unfinished.empty();
  if (!merged.coversSpace()) {
    unsigned count = merged.shards.empty() ? 1 : merged.shards.front().count;
    std::vector<std::string> absent;
    for (unsigned i = 0; i < count; ++i)
      if (!shardsSeen.count({i, count}))
        absent.push_back(llvm::formatv("{0}/{1}", i, count));
    warning(llvm::formatv("these reports do not cover every shard of the space (missing: {0}); "
                          "the best is only over the shards given",
                          absent.empty() ? "shards of one count" : some(absent)));
  }
  if (!missing.empty())
    warning(llvm::formatv("{0} configurations of the shards given have no result: {1}", missing.size(),
                          some(missing)));
  if (merged.interrupted || !unfinished.empty())
    warning(llvm::formatv("a shard was interrupted; {0} of its configurations are unfinished{1}{2}",
                          unfinished.size(), unfinished.empty() ? "" : ": ", some(unfinished)));
  if (!complete)
    warning("the tuning is not complete: `--tuned` will not use it until the missing results "
            "are merged");
  return true;
}

int runTuneMerge(int argc, char **argv) {
  cl::list<std::string> inputs(cl::Positional, cl::OneOrMore,
                               cl::desc("<reports of the shards (tessel tune --report=json)>"),
                               cl::cat(toolCategory()));
  OutputOptions out;
  if (!parseCommandLine(argc, argv,
                        "tessel tune merge: combine the JSON reports of the shards of one tuning\n\n"
                        "Each input is the --report=json output of `tessel tune --shard I/N` on the\n"
                        "same kernel, shapes, target and pipeline. Prints the combined ranked report\n"
                        "(the same best as one unsharded run) and records it in the results cache,\n"
                        "so that `tessel compile|run --tuned` can use it (docs/tuning.md).\n") ||
      !out.check(std::vector<std::string>(inputs.begin(), inputs.end())))
    return 1;
  Merge merge;
  for (const std::string &path : inputs)
    if (!merge.add(path))
      return 1;
  bool complete = false;
  if (!merge.finish(complete))
    return 1;
  if (!out.noCache) {
    TuneCache cache(out.cachePath());
    if (llvm::Error err = cache.check())
      return fail(llvm::toString(std::move(err)));
    cache.load();
    recordInCache(cache.update(merge.merged.key), merge.merged.results, complete);
    saveCache(cache);
  }
  return out.write(merge.merged) && out.writePlot(merge.merged) ? 0 : 1;
}

//===----------------------------------------------------------------------===//
// tessel tune
//===----------------------------------------------------------------------===//

/// The options of `tessel tune` and their checks (validate).
struct TuneOptions {
  cl::opt<std::string> input{cl::Positional, cl::desc("<kernel source .tsl ('-' for stdin)>"),
                             cl::cat(toolCategory())};
  SourceOptions source;
  PipelineOptions pipeline;
  OutputOptions out;
  cl::list<std::string> spaceSpecs{
      "space",
      cl::desc("Try only these values of a block parameter, e.g. --space m=256,512 --space n=512 "
               "(default: P, 2P, 4P, ... for the target's P partitions -- 128, 256, 512, ... on trn1 "
               "-- up to the dimension it tiles, at most 4096)"),
      cl::value_desc("NAME=INT,..."), cl::cat(toolCategory())};
  // Text, so a bad value gets tessel's error (parseCount), not LLVM's.
  cl::opt<std::string> budget{"budget", cl::desc("Simulate at most N configurations (default: no limit)"),
                              cl::value_desc("N"), cl::cat(toolCategory())};
  cl::opt<std::string> shardSpec{
      "shard",
      cl::desc("Evaluate only shard I of N of the space (0-based; for array jobs: I = "
               "$SLURM_ARRAY_TASK_ID or $JOB_COMPLETION_INDEX); combine the shards' "
               "--report=json with tessel tune merge"),
      cl::value_desc("I/N"), cl::cat(toolCategory())};
  cl::opt<bool> exhaustive{"exhaustive",
                           cl::desc("Simulate every legal configuration: no pruning by the cost "
                                    "model (to check that pruning keeps the best)"),
                           cl::cat(toolCategory())};
  cl::opt<bool> exact{"exact",
                      cl::desc("Simulate every instruction of every configuration. By default the "
                               "simulator advances the steady-state iterations of loops arithmetically "
                               "(latencies within 0.1% of exact ones: docs/simulator.md)"),
                      cl::cat(toolCategory())};
  /// The pipeline's flags tune does not take: the dump and instrumentation
  /// flags make no sense over many concurrent compiles; --block and --tuned
  /// are what tune computes. Hidden from --help.
  std::vector<cl::Option *> notForTune;

  /// Filled by validate().
  std::optional<uint64_t> budgetCount;
  Shard shard;
  SpaceRestriction restriction;

  TuneOptions();
  const SharedOptions &shared() const { return out.shared; }
  /// The checks of the options alone, before the kernel is read. Returns
  /// false after reporting.
  bool validate();
};

TuneOptions::TuneOptions() {
  out.shared.addTarget("Default: trn1");
  out.shared.addJobs("Compile and simulate N configurations at a time (default: the number of hardware "
                     "threads)");
  // (cl::list overloads operator&, hence std::addressof.)
  notForTune = {std::addressof(pipeline.block),
                &pipeline.tuned,
                &pipeline.tuneCache,
                &pipeline.printIRAfterAll,
                std::addressof(pipeline.printIRBefore),
                std::addressof(pipeline.printIRAfter),
                &pipeline.printChanged,
                &pipeline.dumpDir,
                &pipeline.printPipeline,
                &pipeline.timePasses};
  auto &registered = cl::getRegisteredOptions();
  if (auto it = registered.find("stats"); it != registered.end())
    notForTune.push_back(it->second);
  for (cl::Option *o : notForTune)
    o->setHiddenFlag(cl::ReallyHidden);
}

bool TuneOptions::validate() {
  for (cl::Option *o : notForTune)
    if (o->getNumOccurrences())
      return error("--" + o->ArgStr + " does not apply to tessel tune" +
                   (o == std::addressof(pipeline.block)
                        ? ": it chooses the blocks (restrict them with --space NAME=INT,...)"
                        : ""));
  if (input.empty())
    return error("no input file (usage: tessel tune [options] FILE.tsl; see tessel tune --help)");
  if (!rejectRepeatedDefines(source.defines))
    return false;
  if (budget.getNumOccurrences()) {
    llvm::Expected<uint64_t> count = parseCount(
        "--budget", budget, "the budget is a positive count of configurations to simulate, e.g. --budget 20");
    if (!count)
      return error(llvm::toString(count.takeError()));
    if (*count == 0)
      return error("--budget 0: the budget must allow at least one simulation");
    budgetCount = *count;
  }
  if (!out.check({input, shared().targetFile()}))
    return false;
  if (shardSpec.getNumOccurrences()) {
    llvm::Expected<Shard> parsed = parseShard(shardSpec);
    if (!parsed)
      return error(llvm::toString(parsed.takeError()));
    shard = *parsed;
  }
  // two-kernel is a pass list (tuned and cached as such); one-kernel is a
  // constraint on the planner's strips, which the tuner's space does not
  // apply, so it would tune and cache configurations of either form.
  if (pipeline.mlpForm == MlpForm::OneKernel)
    return error("--mlp-form=one-kernel is not supported by tessel tune: the tuner explores the "
                 "blocks of the pipeline's forms; tune with --mlp-form=two-kernel or auto, or run "
                 "with --mlp-form=one-kernel and --block");
  for (const std::string &spec : spaceSpecs)
    if (llvm::Error err = parseSpaceSpec(spec, restriction))
      return error(llvm::toString(std::move(err)));
  return true;
}

/// The kernel as the frontend and the default TileGen see it.
struct TuneSubject {
  Frontend fe;
  TuneJob job;
  SpaceBounds bounds;
  /// -O2's own choice when the pipeline plans the blocks (select-blocks):
  /// the blocks it builds and their simulated latency (0: not known).
  BlockConfig planned;
  double plannedUs = 0;
};

/// What the pipeline's planner chooses for the kernel, simulated, so the
/// space can hold it and the best be compared with it. Nothing when the
/// pipeline does not plan (it starts without select-blocks) or the choice
/// cannot be built or run (each configuration then says why).
void planAsTheCompilerDoes(TuneSubject &s, const TuneOptions &o) {
  if (s.job.passes.empty() || s.job.passes.front() != "select-blocks")
    return;
  CompiledConfig c = compileConfig(s.job, BlockConfig{});
  if (!c.program)
    return;
  llvm::Expected<SimMeasure> m = simulateConfig(*c.program, s.job.target, /*fastForward=*/!o.exact);
  if (!m)
    return llvm::consumeError(m.takeError());
  s.planned = c.blocks;
  s.plannedUs = m->latencyUs;
}

/// The planner's choice as a configuration of the space: its values of the
/// parameters the space enumerates (k and the projections' own column
/// blocks only when --space names them); nullopt when --space leaves one
/// of its values out.
std::optional<BlockConfig> plannedConfig(const TuneSubject &s, const SpaceRestriction &restriction,
                                         const std::vector<BlockConfig> &space) {
  if (s.planned.empty() || space.empty())
    return std::nullopt;
  BlockConfig c;
  for (const auto &[name, ignored] : space.front()) {
    std::optional<int64_t> v = s.planned.get(name);
    if (!v)
      return std::nullopt;
    if (auto it = restriction.find(name); it != restriction.end() && !llvm::is_contained(it->second, *v))
      return std::nullopt;
    c.set(name, *v);
  }
  return c;
}

bool prepareSubject(TuneSubject &s, const TuneOptions &o) {
  llvm::Expected<LoadedProgram> in = loadProgram(o.input);
  if (!in)
    return error(llvm::toString(in.takeError()));
  if (in->kind != ProgramKind::Tsl)
    return error(llvm::formatv("'{0}' is {1}, whose blocks are fixed already: tessel tune chooses the "
                               "blocks of a .tsl kernel source",
                               o.input,
                               in->kind == ProgramKind::Tir    ? ".tir tile IR"
                               : in->kind == ProgramKind::Tasm ? "a .tasm program"
                                                               : "an NKI kernel (.py)"));
  // runFrontend reads the buffer already loaded (stdin can be read once).
  s.fe.sourceMgr.AddNewSourceBuffer(std::move(in->buffer), llvm::SMLoc());
  if (!o.source.collectDefines(s.job.defines) || !runFrontend(s.fe, o.input, s.job.defines, o.source.kernel))
    return false;
  llvm::Expected<runtime::Target> target = o.shared().loadTarget();
  if (!target)
    return error(llvm::toString(target.takeError()));
  if (llvm::Error err = passes::checkCodegenGeometry(*target))
    return error(llvm::toString(std::move(err)));
  s.job.target = std::move(*target);
  s.job.tp = o.source.tp;
  frontend::TensorParallelPlan plan;
  if (o.source.tp != 1 && !shardForTensorParallel(s.fe, o.source.tp, s.job.target, plan))
    return false;
  if (!o.pipeline.resolvePasses(s.job.passes, /*defaultPipeline=*/"O2"))
    return false;
  s.job.verifyEach = o.pipeline.verifyEach;
  s.job.path = o.input;
  s.job.sourceText = s.fe.sourceMgr.getMemoryBuffer(s.fe.sourceMgr.getMainFileID())->getBuffer().str();
  s.job.kernelName = s.fe.kernel->name;
  std::map<std::string, int64_t> projectionColumns;
  int64_t contraction = 0;
  s.job.blockParams = tileGenBlockParams(s.fe, s.job.target, &projectionColumns, &contraction);
  s.bounds = spaceBoundsOf(*s.fe.kernel, s.job.blockParams);
  s.bounds.projectionColumns = std::move(projectionColumns);
  s.bounds.contraction = contraction;
  return true;
}

/// The space (restricted by --space), this shard of it, and the report's
/// header. False after reporting.
bool prepareSpace(const TuneOptions &o, const TuneSubject &subject, std::vector<BlockConfig> &mine,
                  TuneReport &report) {
  const TuneJob &job = subject.job;
  if (llvm::Error err = validateSpace(o.restriction, subject.bounds, job.target))
    return error(llvm::toString(std::move(err)));
  std::vector<BlockConfig> space = enumerateSpace(subject.bounds, o.restriction, job.target);
  // -O2's own choice is a configuration of the space, or --tuned could lose
  // to plain -O2 (e.g. a row strip over 4096 rows the planner takes).
  if (std::optional<BlockConfig> planned = plannedConfig(subject, o.restriction, space);
      planned && !llvm::is_contained(space, *planned)) {
    llvm::errs() << llvm::formatv("note: -O2 chooses {0}, which the default space does not hold; it is tried too\n",
                                  formatBlock(*planned));
    space.push_back(*planned);
  }
  mine = selectShard(space, o.shard);
  if (mine.empty())
    return error(llvm::formatv("empty search space: shard {0}/{1} of a space of {2} "
                               "configurations holds none (use at most {2} shards)",
                               o.shard.index, o.shard.count, space.size()));
  report.key = makeTuneKey(subject.fe, job.target, job.passes);
  report.params = subject.bounds.names;
  report.spaceSize = space.size();
  for (const BlockConfig &config : space)
    report.space.push_back(formatBlock(config));
  report.shards = {o.shard};
  report.pruning = !o.exhaustive;
  return true;
}

/// Simulates `mine` (what the cache does not know), saving each result as it
/// finishes: a second Ctrl-C, or a kill, loses at most the ones in flight.
SearchState search(const TuneOptions &o, const TuneJob &job, const std::vector<BlockConfig> &mine,
                   TuneCache *cache, TuneReport &report) {
  CachedResults cached;
  if (cache)
    if (const CacheEntry *entry = cache->find(report.key.hash))
      cached = entry->configs;
  SearchOptions options;
  options.jobs = o.shared().jobs();
  if (o.budgetCount)
    options.budget = *o.budgetCount;
  options.prune = !o.exhaustive;
  options.fastForward = !o.exact;
  SearchState state;
  InterruptCatcher catcher;
  TuneProgress progress(llvm::errs(), llvm::errs().is_displayed(), options.jobs);
  bool checkpoints = cache != nullptr; // off after a failed save (warned once)
  auto onResult = [&](const SearchState &s, const ConfigResult *r) {
    if (r && checkpoints) {
      recordResult(cache->update(report.key), *r);
      if (r->status == ConfigStatus::Simulated && !r->fromCache)
        checkpoints = saveCache(*cache);
    }
    progress.update(s, r);
  };
  report.results = runSearch(job, mine, cached, options, InterruptCatcher::interrupted(), onResult, state);
  progress.finish();
  return state;
}

/// Records the results, writes the report and the plot; the exit status.
int finish(const TuneOptions &o, const TuneSubject &subject, const SearchState &state, size_t evaluated,
           TuneCache *cache, TuneReport &report) {
  report.interrupted = state.interrupted;
  report.rank();
  for (const std::string &w : state.warnings)
    warning(w);
  if (cache) {
    recordInCache(cache->update(report.key), report.results,
                  /*finished=*/!state.interrupted && o.shard.isWhole());
    saveCache(*cache);
  }
  if (!o.out.write(report))
    return 1;
  if (state.interrupted) {
    error(llvm::formatv("interrupted: {0} of {1} configurations were evaluated{2}; run the same "
                        "command again to finish",
                        state.decided - report.count(ConfigStatus::Interrupted), state.total,
                        cache ? " and saved in '" + cache->filePath() + "'" : std::string()));
    return kInterruptedStatus;
  }
  const ConfigResult *best = bestResult(report.results);
  if (!best)
    return fail(llvm::formatv("no configuration could be simulated: of the {0} configurations{1}, "
                              "the compiler rejected {2} and the simulator {3} (reasons above)",
                              evaluated, o.shard.isWhole() ? "" : " of this shard",
                              report.count(ConfigStatus::Illegal), report.count(ConfigStatus::Failed)));
  // Never a best worse than plain -O2 without saying so (a budget, a shard
  // or --space may leave -O2's own choice out).
  if (subject.plannedUs > 0 && best->sim->latencyUs > subject.plannedUs * (1 + 1e-9)) {
    bool leftOut = !o.restriction.empty() || o.budgetCount || !o.shard.isWhole();
    std::string msg = llvm::formatv("plain -O2 (its own choice, {0}) simulates {1:f1} us, faster than the best "
                                    "configuration tried here ({2}: {3:f1} us)",
                                    formatBlock(subject.planned), subject.plannedUs, formatBlock(best->block),
                                    best->sim->latencyUs);
    // Where --space, --budget or --shard left it out, that is what was asked.
    if (leftOut)
      llvm::errs() << "note: " << msg << "; the --space, --budget or --shard given left it out\n";
    else
      warning(msg + "; compile without --tuned");
  }
  return o.out.writePlot(report) ? 0 : 1;
}

} // namespace

int runTuneCommand(int argc, char **argv) {
  if (argc >= 2 && llvm::StringRef(argv[1]) == "merge") {
    std::string name = std::string(argv[0]) + " merge";
    std::vector<char *> args{name.data()};
    args.insert(args.end(), argv + 2, argv + argc);
    args.push_back(nullptr);
    return runTuneMerge(argc - 1, args.data());
  }
  TuneOptions o;
  if (!parseCommandLine(argc, argv,
                        "tessel tune: find the fastest block configuration of a kernel\n\n"
                        "Enumerates the kernel's block parameters (m, n: docs/passes.md), compiles each\n"
                        "configuration (-O2 unless -O/--pipeline/--passes say otherwise), ranks them by\n"
                        "the cost model's latency lower bound and simulates them in that order, skipping\n"
                        "any whose bound cannot beat the best simulated so far. Results are cached;\n"
                        "`tessel compile|run --tuned` uses the best. Ctrl-C keeps what finished.\n"
                        "Also: tessel tune merge SHARD.json... (see docs/tuning.md).\n"))
    return 1;
  int status = 0;
  if (o.pipeline.handleInfoFlags(status))
    return status;
  TuneSubject subject;
  std::vector<BlockConfig> mine;
  TuneReport report;
  if (!o.validate() || !prepareSubject(subject, o))
    return 1;
  planAsTheCompilerDoes(subject, o);
  if (!prepareSpace(o, subject, mine, report))
    return 1;
  std::unique_ptr<TuneCache> cache;
  if (!o.out.noCache) {
    cache = std::make_unique<TuneCache>(o.out.cachePath());
    if (llvm::Error err = cache->check())
      return fail(llvm::toString(std::move(err)));
    cache->load();
  }
  SearchState state = search(o, subject.job, mine, cache.get(), report);
  return finish(o, subject, state, mine.size(), cache.get(), report);
}

} // namespace tessel::driver

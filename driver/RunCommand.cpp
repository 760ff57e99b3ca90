//===- driver/RunCommand.cpp - `tessel run` -------------------------------===//
//
// Runs a program on the NeuronCore simulator (runtime/Simulator.h) and writes
// the profile report. Structure:
//   runRunCommand  parses the command line, loads the program (.tasm, or a
//                  .tsl compiled through compiler/Compile.h) and calls
//   runProgram     simulate + report; an optional CheckHook (for --check)
//                  gets the SimResult (inputs used, outputs computed), fills
//                  the report's "check" object and decides pass/fail.
//
//===----------------------------------------------------------------------===//
#include "driver/Commands.h"
#include "compiler/Check.h"
#include "driver/CommonOptions.h"
#include "driver/CompileOptions.h"
#include "compiler/Compile.h"
#include "compiler/TensorParallel.h"
#include "compiler/NkiInput.h"
#include "driver/LoadProgram.h"
#include "driver/OptionChecks.h"
#include "driver/RunDescription.h"
#include "compiler/RandomInputs.h"
#include "compiler/TirInput.h"
#include "tune/TuneCache.h"

#include "runtime/Program.h"
#include "runtime/Report.h"
#include "runtime/ReportSensitivity.h"
#include "runtime/Simulator.h"
#include "runtime/Target.h"
#include "runtime/TargetProvenance.h"
#include "support/HostMemory.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

#include <functional>
#include <string>

namespace cl = llvm::cl;
using namespace tessel::runtime;

namespace tessel::driver {
using namespace compiler;
using namespace tune;

enum class ReportFormat { Text, JSON };

/// Everything `tessel run` needs besides the program.
struct RunSettings {
  Target target;
  SimOptions sim;
  ReportFormat format = ReportFormat::Text;
  std::string reportPath = "-";
  std::optional<TargetProvenance> sensitivityOf; ///< --sensitivity: the target's provenance
};

/// Called after a successful simulation (functional mode) for --check: fills
/// `check` (added to the JSON report as "check") and returns whether it passed.
using CheckHook = std::function<bool(const SimResult &, llvm::json::Object &check)>;

static void reportError(llvm::StringRef msg) {
  // Located errors (parser, simulator) already say "file:line:col: error:".
  if (msg.contains(": error: ") || msg.startswith("error: "))
    llvm::errs() << msg << "\n";
  else
    llvm::WithColor::error(llvm::errs(), "tessel run") << msg << "\n";
}

/// Simulates `prog` and writes the report. Returns the exit status.
int runProgram(const Program &prog, const RunSettings &s, const CheckHook &check = nullptr) {
  llvm::Expected<SimResult> res = simulate(prog, s.target, s.sim);
  if (!res) {
    reportError(llvm::toString(res.takeError()));
    return 1;
  }
  if (s.sensitivityOf)
    if (llvm::Error e = addLatencySensitivity(prog, s.target, *s.sensitivityOf, s.sim, res->report))
      return reportError(llvm::toString(std::move(e))), 1;
  llvm::json::Object checkObj;
  bool passed = true, checked = false;
  if (check && !s.sim.timingOnly) {
    checked = true;
    passed = check(*res, checkObj);
  }
  std::error_code ec;
  llvm::ToolOutputFile out(s.reportPath, ec, llvm::sys::fs::OF_Text);
  if (ec) {
    reportError(llvm::formatv("cannot write report '{0}': {1}", s.reportPath, ec.message()).str());
    return 1;
  }
  if (s.format == ReportFormat::JSON) {
    llvm::json::Object obj = reportToJSON(res->report);
    if (checked)
      obj["check"] = llvm::json::Value(std::move(checkObj));
    out.os() << llvm::formatv("{0:2}", llvm::json::Value(std::move(obj))) << "\n";
  } else {
    printReportText(res->report, out.os());
    if (checked) {
      out.os() << "\n  check: " << (passed ? "PASSED" : "FAILED") << "\n";
      for (const auto &kv : checkObj)
        out.os() << llvm::formatv("    {0}: {1}\n", kv.first, kv.second);
    }
  }
  out.keep();
  for (const std::string &w : res->report.warnings)
    llvm::WithColor::warning(llvm::errs(), "tessel run") << w << "\n";
  if (!passed) {
    llvm::Optional<llvm::StringRef> why = checkObj.getString("error");
    llvm::WithColor::error(llvm::errs(), "tessel run")
        << "check failed: " << (why ? *why : "the outputs differ from the reference") << "\n";
    return 1;
  }
  return 0;
}

namespace {

/// The options of `tessel run` and their checks (validate, validateFor).
struct RunOptions {
  cl::opt<std::string> input{cl::Positional,
                             cl::desc("<program: .tasm, or a .tsl kernel, .tir tile IR or NKI .py kernel "
                                      "compiled first; '-' for stdin>"),
                             cl::cat(toolCategory())};
  SourceOptions source;
  PipelineOptions pipeline;
  NkiOptions nki;
  SharedOptions shared{"tessel run"};
  cl::opt<bool> check{"check",
                      cl::desc("Compare the outputs with a plain fp32 reference: for .tsl, of the "
                               "kernel's DSL semantics, failing when an element differs by more "
                               "than 8x the reference's estimate of its rounding (docs/tasm.md); "
                               "for NKI kernels (.py), the --reference function on the same inputs, "
                               "failing when the largest error exceeds 2% of the largest |reference| "
                               "(docs/nki.md). Without --reference, an NKI kernel's check only checks "
                               "the lowering: its own trace re-executed in Python, which a kernel with "
                               "wrong math passes"),
                      cl::cat(toolCategory())};
  cl::opt<std::string> reference{"reference",
                                 cl::desc("NKI kernels (.py), with --check: the reference, a numpy function "
                                          "FUNC in FILE.py called with the kernel's inputs in parameter "
                                          "order, returning its outputs (docs/nki.md)"),
                                 cl::value_desc("FILE.py:FUNC"), cl::cat(toolCategory())};
  cl::list<std::string> inputs{
      "input",
      cl::desc("Feed input tensor NAME from FILE.npy (float32, rounded to bf16 for bf16 tensors; or float16; "
               "little-endian, C order). Repeatable. Inputs not given are seeded random"),
      cl::value_desc("NAME=FILE.npy"), cl::cat(toolCategory())};
  // Text, so a bad value gets tessel's error (parseCount), not LLVM's.
  cl::opt<std::string> seed{"seed",
                            cl::desc("Seed of the random inputs: uniform in [-s, s) per (seed, tensor "
                                     "name); of a .tsl kernel, s = sqrt(3 / fan-in) for weights (right "
                                     "matmul operands), sqrt(3) for activations; else sqrt(3 / rows) "
                                     "(default 0)"),
                            cl::value_desc("N"), cl::init("0"), cl::cat(toolCategory())};
  cl::opt<std::string> outputDir{"output-dir",
                                 cl::desc("Write each output tensor as float32 DIR/<name>.npy (created if missing)"),
                                 cl::value_desc("DIR"), cl::cat(toolCategory())};
  cl::opt<uint64_t> maxInstructions{
      "max-instructions",
      cl::desc("Refuse, before simulating, a program that would execute more dynamic instructions than N "
               "(0: no limit; default 4000000000, about 30 minutes timing-only)"),
      cl::value_desc("N"), cl::init(SimOptions::DefaultMaxInstructions), cl::cat(toolCategory())};
  cl::opt<bool> timingOnly{"timing-only",
                           cl::desc("Skip the numerics (no inputs read, no outputs, no never-written "
                                    "checks): only the timing model and the bounds/shape checks run"),
                           cl::cat(toolCategory())};
  cl::opt<bool> fastForward{"fast-forward",
                            cl::desc("With --timing-only: advance the steady-state iterations of loops "
                                     "arithmetically instead of simulating them (latencies within 0.1% of "
                                     "exact ones, counters exact: docs/simulator.md)"),
                            cl::cat(toolCategory())};
  cl::opt<bool> exact{"exact",
                      cl::desc("Simulate every instruction (the default for run; overrides --fast-forward)"),
                      cl::cat(toolCategory())};
  cl::opt<ReportFormat> format{
      "report", cl::desc("Report format (default: text)"), cl::init(ReportFormat::Text),
      cl::values(clEnumValN(ReportFormat::Text, "text", "a human-readable table"),
                 clEnumValN(ReportFormat::JSON, "json", "one JSON object (keys: docs/tasm.md, Report)")),
      cl::cat(toolCategory())};
  cl::opt<std::string> tracePath{"trace",
                                 cl::desc("Write a Chrome trace-event timeline (open in Perfetto): one track "
                                          "per engine and DMA queue, one slice per instruction"),
                                 cl::value_desc("FILE.json"), cl::cat(toolCategory())};
  cl::opt<LatencyKind> latency{
      "latency", cl::desc("Which latency the report predicts (default: device; docs/calibration.md)"),
      cl::init(LatencyKind::Device),
      cl::values(clEnumValN(LatencyKind::Device, "device",
                            "one execution's device timeline, as a profile's total_time (+ launch_device_ns)"),
                 clEnumValN(LatencyKind::Benchmark, "benchmark",
                            "one iteration of a benchmark loop, as nki.benchmark (+ launch_benchmark_ns)")),
      cl::cat(toolCategory())};
  cl::opt<bool> printStreams{"print-streams",
                             cl::desc("Print the program's per-engine instruction streams (the projections "
                                      "of its body onto each engine and DMA queue) and exit"),
                             cl::cat(toolCategory())};
  cl::opt<bool> printProgram{"print-program", cl::desc("Print the program in canonical .tasm form and exit"),
                             cl::cat(toolCategory())};
  cl::opt<bool> sensitivity{"sensitivity",
                            cl::desc("Also name the non-published target value the latency depends on most: "
                                     "re-times the program (timing only, fast-forward) with each such value "
                                     "it uses moved by +-10% (docs/calibration.md)"),
                            cl::cat(toolCategory())};
  cl::opt<bool> dumpTarget{"dump-target",
                           cl::desc("Print the selected target description as JSON (a template for "
                                    "--target=FILE.json), with each value's provenance, and exit; "
                                    "FILE is not needed"),
                           cl::cat(toolCategory())};

  /// --input NAME=FILE, filled by validate().
  std::map<std::string, std::string> inputFiles;
  /// --seed, filled by validate().
  uint64_t seedValue = 0;

  RunOptions() {
    shared.addTarget("Default: the program's `target` line", "");
    shared.addOutput("Write the report to FILE ('-' for stdout, the default)");
    shared.addJobs("Threads of the functional simulation (tile products, random inputs; default: the "
                   "number of hardware threads). The numbers are the same for any N",
                   "thread");
  }

  /// The checks of the options alone, before the program is read. Returns
  /// false after reporting.
  bool validate();
  /// The checks that depend on the program's kind.
  bool validateFor(ProgramKind kind) const;
};

bool fail(const std::string &msg) {
  reportError(msg);
  return false;
}

bool RunOptions::validate() {
  if (input.empty())
    return fail("no program given (usage: tessel run [options] FILE.tasm|FILE.tsl|FILE.tir; see "
                "tessel run --help)");
  if (!shared.validate() || !rejectEmptyValue(outputDir) || !rejectEmptyValue(tracePath) ||
      !rejectRepeatedDefines(source.defines))
    return false;
  llvm::Expected<uint64_t> seedCount =
      parseCount("--seed", seed, "the seed is a non-negative integer, e.g. --seed 7");
  if (!seedCount)
    return fail(llvm::toString(seedCount.takeError()));
  seedValue = *seedCount;
  if (timingOnly && (!inputs.empty() || outputDir.getNumOccurrences()))
    return fail(llvm::formatv("--timing-only skips the numerics, so {0} would have no effect; drop "
                              "one of them",
                              inputs.empty() ? "--output-dir" : "--input"));
  for (const std::string &spec : inputs) {
    auto [name, file] = llvm::StringRef(spec).split('=');
    if (name.empty() || file.empty())
      return fail(llvm::formatv("malformed --input '{0}': expected --input NAME=FILE.npy", spec));
    if (!inputFiles.emplace(name.str(), file.str()).second)
      return fail(llvm::formatv("input '{0}' given twice", name));
  }
  if (check && timingOnly)
    return fail("--check needs the numerics; drop --timing-only");
  if (!reference.empty() && !check)
    return fail("--reference is the reference of --check; add --check");
  if (sensitivity && source.tp != 1)
    return fail("--sensitivity re-times one core's program; it does not apply with --tp");
  if (fastForward && !timingOnly)
    return fail("--fast-forward skips instructions, so it needs --timing-only (the numerics run every one)");
  return true;
}

bool RunOptions::validateFor(ProgramKind kind) const {
  if (kind != ProgramKind::Nki && !nki.args.empty())
    return fail("--arg applies to NKI kernels (.py) only");
  if (kind != ProgramKind::Nki && !nki.grid.empty())
    return fail("--grid applies to NKI kernels (.py) only");
  if (kind != ProgramKind::Nki && !reference.empty())
    return fail("--reference applies to NKI kernels (.py); a .tsl kernel's --check has its own reference");
  if (kind == ProgramKind::Nki && source.tp != 1)
    return fail("--tp splits a .tsl kernel; an NKI kernel (.py) runs as written, on one core");
  if (kind == ProgramKind::Nki && (!source.defines.empty() || !pipeline.compileFlagsGiven().empty()))
    return fail("-D and compile flags do not apply to NKI kernels (.py): they run as written");
  if (kind == ProgramKind::Tsl || kind == ProgramKind::Nki)
    return true;
  llvm::StringRef ext = kindExtension(kind);
  if (check)
    return fail(llvm::formatv("--check needs the kernel's .tsl source (a {0} program has no DSL "
                              "semantics to compare with)",
                              ext));
  if (source.tp != 1)
    return fail(llvm::formatv("--tp splits a .tsl kernel; a {0} program is one core's already", ext));
  if (!source.defines.empty())
    return fail("-D applies to .tsl sources only");
  if (kind == ProgramKind::Tasm && !source.kernel.empty())
    return fail("-k applies to .tsl sources and .tir tile IR only (a .tasm program holds one kernel)");
  if (std::string flags = pipeline.compileFlagsGiven(); kind == ProgramKind::Tasm && !flags.empty())
    return fail(flags + ": compile flags apply to .tsl sources and .tir tile IR only (a .tasm "
                        "program is already compiled)");
  return true;
}

/// The kernel `tessel run` compiled, traced or read, and what --check and
/// --tp need of it.
struct BuiltKernel {
  Frontend fe;    ///< .tsl (under --tp, one core's shard)
  Frontend whole; ///< .tsl under --tp: the kernel as written (the inputs' shapes, the reference)
  frontend::TensorParallelPlan tpPlan;
  TirInput tir;
  NkiSource nki;
  llvm::SourceMgr nkiSources;
  std::unique_ptr<ir::Kernel> kernel; ///< a compiled .tsl or traced .py
  /// Under --tp: the kernel as written compiled for one core (same pipeline,
  /// its own blocks), which the report compares with; null when it cannot be.
  std::unique_ptr<ir::Kernel> oneCore;
  Target target;                      ///< the one it was compiled for
  std::string outputName;

  int64_t kBlock() const { return kernel ? smallestContractionBlock(kernel->blockParams) : 0; }
  /// The blocks the program was compiled with (none for NKI and .tasm).
  const ir::BlockConfig *blocks(ProgramKind kind) const {
    if (kind == ProgramKind::Tsl && kernel)
      return &kernel->blockParams;
    return kind == ProgramKind::Tir && tir.kernel ? &tir.kernel->blockParams : nullptr;
  }
};

bool loadTargetOrReport(const RunOptions &o, Target &t) {
  llvm::Expected<Target> loaded = o.shared.loadTarget();
  if (!loaded)
    return fail(llvm::toString(loaded.takeError()));
  t = std::move(*loaded);
  return true;
}

/// A .tsl compiled as -O/--passes/--block/--tuned say (split under --tp).
bool compileTsl(const RunOptions &o, LoadedProgram &in, BuiltKernel &b) {
  // runFrontend reads the buffer already loaded (stdin can be read once).
  if (o.source.tp != 1)
    b.whole.sourceMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(in.buffer->getBuffer(), in.buffer->getBufferIdentifier()),
        llvm::SMLoc());
  b.fe.sourceMgr.AddNewSourceBuffer(std::move(in.buffer), llvm::SMLoc());
  std::vector<Define> defines;
  CompileOptions options;
  if (!o.source.collectDefines(defines) || !runFrontend(b.fe, o.input, defines, o.source.kernel) ||
      !loadTargetOrReport(o, b.target) ||
      (o.source.tp != 1 && (!runFrontend(b.whole, o.input, defines, o.source.kernel) ||
                            !shardForTensorParallel(b.fe, o.source.tp, b.target, b.tpPlan))) ||
      !resolveCompileOptions(b.fe, o.pipeline, b.target, options))
    return false;
  b.kernel = compileKernel(b.fe, options, b.target);
  if (b.kernel && o.source.tp != 1) {
    CompileOptions whole;
    whole.passes = options.passes;
    whole.params = options.params;
    b.oneCore = compileKernel(b.whole, whole, b.target);
  }
  return b.kernel != nullptr;
}

/// The kernel of a .tsl, .py or .tir input, compiled; false after reporting.
bool buildKernel(const RunOptions &o, LoadedProgram &in, BuiltKernel &b) {
  switch (in.kind) {
  case ProgramKind::Nki:
    b.nki = NkiSource{in.path, o.source.kernel, {o.nki.args.begin(), o.nki.args.end()}, o.inputFiles, o.reference,
                     o.nki.grid};
    return loadTargetOrReport(o, b.target) && (b.kernel = traceNkiKernel(b.nki, b.target, b.nkiSources));
  case ProgramKind::Tsl:
    if (!compileTsl(o, in, b))
      return false;
    for (const ir::Value *arg : b.kernel->args)
      if (arg->role == ir::TensorRole::Output)
        b.outputName = arg->name;
    return true;
  case ProgramKind::Tir: {
    CompileOptions options;
    return loadTargetOrReport(o, b.target) && resolveTirOptions(o.pipeline, options) &&
           loadTirKernel(b.tir, std::move(in.buffer), o.source.kernel, options, b.target);
  }
  case ProgramKind::Tasm:
    return true;
  }
  return true;
}

/// The program of the input: a .tasm parsed, any other kind compiled first.
llvm::Expected<Program> emit(LoadedProgram &in, BuiltKernel &b) {
  switch (in.kind) {
  case ProgramKind::Nki:
    return emitNkiProgram(*b.kernel, b.target, &b.nkiSources);
  case ProgramKind::Tsl:
    return emitProgram(*b.kernel, b.target, &b.fe.sourceMgr);
  case ProgramKind::Tir:
    return emitProgram(*b.tir.kernel, b.target, &b.tir.sourceMgr);
  case ProgramKind::Tasm:
    break;
  }
  return parseProgram(in.buffer->getBuffer(), in.buffer->getBufferIdentifier());
}

/// The target the program runs on: --target, else the program's own.
bool runTarget(const RunOptions &o, const Program &prog, Target &out) {
  if (o.shared.targetGiven())
    return loadTargetOrReport(o, out);
  llvm::Expected<Target> named = loadTarget(prog.target);
  if (!named) {
    llvm::consumeError(named.takeError());
    return fail(llvm::formatv("the program names target '{0}', which is not built in ({1}); give "
                              "its description with --target=FILE.json",
                              prog.target, llvm::join(builtinTargetNames(), ", ")));
  }
  out = std::move(*named);
  return true;
}

/// No output may replace an input or another output, or be unwritable.
bool checkFiles(const RunOptions &o, const Program &prog) {
  std::vector<std::string> read{o.input, o.shared.targetFile()};
  if (o.pipeline.tuned)
    read.push_back(o.pipeline.tuneCache.empty() ? defaultTuneCachePath() : o.pipeline.tuneCache.getValue());
  for (const auto &[name, file] : o.inputFiles)
    read.push_back(file);
  std::vector<NamedOutput> written = {{"-o", o.shared.output()}, {"--trace", o.tracePath}};
  // --output-dir writes DIR/NAME.npy for each output tensor.
  if (!o.outputDir.empty())
    for (const runtime::TensorDecl &t : prog.tensors)
      if (t.role == runtime::TensorRole::Output) {
        llvm::SmallString<256> path(o.outputDir.getValue());
        llvm::sys::path::append(path, t.name + ".npy");
        written.push_back({"--output-dir", std::string(path)});
      }
  return rejectUnwritableOutput(written[0]) && rejectUnwritableOutput(written[1]) &&
         rejectClashingOutputs(written, read);
}

/// The simulation's settings; false after reporting.
bool settle(const RunOptions &o, ProgramKind kind, const Program &prog, const BuiltKernel &b, RunSettings &s) {
  if (!runTarget(o, prog, s.target) || !checkFiles(o, prog))
    return false;
  s.sim.run = describeRun(o.input, o.pipeline, kind, b.blocks(kind));
  s.sim.inputFiles = o.inputFiles;
  s.sim.seed = o.seedValue;
  // Weights are fan-in scaled by the kernel as written (under --tp, not
  // one core's shard: the whole inputs are drawn, then sliced).
  if (b.fe.kernel)
    s.sim.randomHalfWidth = randomInputHalfWidths(o.source.tp != 1 ? *b.whole.kernel : *b.fe.kernel);
  s.sim.outputDir = o.outputDir;
  s.sim.timingOnly = o.timingOnly;
  s.sim.fastForward = o.fastForward && !o.exact;
  s.sim.maxInstructions = o.maxInstructions;
  if (llvm::sys::Process::StandardErrIsDisplayed())
    s.sim.progress = terminalProgress(llvm::errs(), prog.kernel);
  s.sim.latency = o.latency;
  s.sim.tracePath = o.tracePath;
  s.sim.threads = o.shared.jobs();
  s.format = o.format;
  s.reportPath = o.shared.output();
  if (o.sensitivity) {
    llvm::Expected<TargetProvenance> p =
        loadTargetProvenance(o.shared.targetGiven() ? o.shared.targetName() : prog.target, s.target);
    if (!p)
      return fail(llvm::toString(p.takeError()));
    s.sensitivityOf = std::move(*p);
  }
  return true;
}

/// The bytes a functional --tp run holds at least: the whole inputs (float32,
/// drawn before they are sliced), one core's slices of them, that core's
/// simulation, the first core's inputs and outputs kept for the report, and
/// the summed result with its rounding bound (float32 each).
uint64_t shardedMemoryBytes(const Program &core, const ast::Kernel &whole, const SimOptions &sim) {
  uint64_t bytes = 0;
  for (const ast::Param &p : whole.params)
    bytes += uint64_t(p.type.rows) * uint64_t(p.type.cols) * sizeof(float);
  bytes += uint64_t(whole.resultType.rows) * uint64_t(whole.resultType.cols) * 2 * sizeof(float);
  for (const runtime::TensorDecl &t : core.tensors)
    if (t.role == runtime::TensorRole::Input || t.role == runtime::TensorRole::Output)
      bytes += uint64_t(t.numElements()) * sizeof(float) * (t.role == runtime::TensorRole::Input ? 2 : 1);
  return bytes + functionalMemoryBytes(core, sim);
}

/// A functional --tp run that cannot fit is refused before it allocates
/// (the simulator checks one core's program only; the whole inputs come first).
bool checkShardedMemory(const RunOptions &o, const Program &core, const BuiltKernel &b, const SimOptions &sim) {
  if (sim.timingOnly)
    return true;
  llvm::Expected<std::optional<MemoryLimit>> limit = hostMemoryLimit();
  if (!limit)
    return fail(llvm::toString(limit.takeError()));
  const uint64_t need = shardedMemoryBytes(core, *b.whole.kernel, sim);
  if (!*limit || need <= (*limit)->bytes)
    return true;
  return fail(llvm::formatv("{0}: a functional run of this kernel over {1} cores holds at least {2} (the whole "
                            "inputs in float32, one core's shard and its simulation, the summed result), more "
                            "than the {3} of {4}; use --timing-only (no values are held), a smaller shape, or "
                            "set TESSEL_MEMORY_LIMIT (e.g. 64G) to try anyway",
                            o.input, o.source.tp, formatBytes(double(need)), (*limit)->source,
                            formatBytes(double((*limit)->bytes))));
}

/// The kernel as written on one core, timed, for the --tp report to compare
/// with (left at 0 when it could not be built or run).
void timeOneCore(const BuiltKernel &b, const RunSettings &s, TensorParallelRun &run) {
  if (!b.oneCore)
    return;
  llvm::Expected<Program> prog = emitProgram(*b.oneCore, b.target, &b.whole.sourceMgr);
  if (!prog)
    return llvm::consumeError(prog.takeError());
  SimOptions sim;
  sim.timingOnly = true;
  sim.fastForward = s.sim.fastForward;
  sim.latency = s.sim.latency;
  sim.threads = s.sim.threads;
  llvm::Expected<runtime::SimResult> r = runtime::simulate(*prog, s.target, sim);
  if (!r)
    return llvm::consumeError(r.takeError());
  run.oneCoreUs = r->report.latencyNs * 1e-3;
  run.oneCoreFlops = r->report.flops;
}

/// --tp: the shards run on their cores and an AllReduce combines them.
int runSharded(const RunOptions &o, const Program &prog, const BuiltKernel &b, const RunSettings &s) {
  if (!checkShardedMemory(o, prog, b, s.sim))
    return 1;
  TensorParallelRun run;
  run.coreProgram = &prog;
  run.wholeKernel = b.whole.kernel;
  run.plan = b.tpPlan;
  run.target = s.target;
  run.sim = s.sim;
  run.json = o.format == ReportFormat::JSON;
  run.reportPath = o.shared.output();
  run.check = o.check;
  run.kBlock = b.kBlock();
  run.outputName = b.outputName;
  timeOneCore(b, s, run);
  return runTensorParallel(run);
}

/// --dump-target: the target and where each of its values comes from.
int printTarget(const RunOptions &o) {
  std::string name = o.shared.targetName().empty() ? "trn1" : o.shared.targetName();
  Target t;
  if (!loadTargetOrReport(o, t))
    return 1;
  llvm::Expected<TargetProvenance> provenance = loadTargetProvenance(name, t);
  if (!provenance)
    return fail(llvm::toString(provenance.takeError())), 1;
  llvm::outs() << withProvenanceJSON(targetToJSONText(t), t, *provenance);
  return 0;
}

} // namespace

int runRunCommand(int argc, char **argv) {
  RunOptions o;
  if (!parseCommandLine(argc, argv,
                        "tessel run: run a kernel on the NeuronCore simulator\n\n"
                        "Executes the program functionally (bf16 storage, fp32 PSUM accumulation) and with\n"
                        "the discrete-event timing model of the target, then prints the profile report.\n"
                        "Program format: docs/tasm.md. A .tsl source is compiled first, through the\n"
                        "pass pipeline (-O0 by default; docs/passes.md).\n"))
    return 1;
  int status = 0;
  if (o.pipeline.handleInfoFlags(status))
    return status;
  if (o.dumpTarget)
    return printTarget(o);
  if (!o.validate())
    return 1;
  llvm::Expected<LoadedProgram> in = loadProgram(o.input);
  if (!in)
    return fail(llvm::toString(in.takeError())), 1;
  if (!o.validateFor(in->kind))
    return 1;
  BuiltKernel b;
  if (!buildKernel(o, *in, b))
    return 1;
  llvm::Expected<Program> prog = emit(*in, b);
  if (!prog)
    return fail(llvm::toString(prog.takeError())), 1;
  if (o.printProgram || o.printStreams) {
    o.printProgram ? printProgram(*prog, llvm::outs()) : printEngineStreams(*prog, llvm::outs());
    return 0;
  }
  RunSettings s;
  if (!settle(o, in->kind, *prog, b, s))
    return 1;
  if (o.source.tp != 1)
    return runSharded(o, *prog, b, s);
  // The report and --check read bf16 results in the simulator's own storage.
  s.sim.bf16Results = true;
  if (!o.check)
    return runProgram(*prog, s);
  return runProgram(*prog, s, [&](const SimResult &result, llvm::json::Object &check) {
    if (in->kind == ProgramKind::Nki)
      return checkNkiKernel(b.nki, b.target, result, check);
    return checkAgainstReference(*b.fe.kernel, result, b.outputName, check, b.kBlock());
  });
}

} // namespace tessel::driver

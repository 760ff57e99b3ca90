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
#include "compiler/InputFormat.h"
#include "driver/OptionChecks.h"
#include "compiler/RandomInputs.h"
#include "compiler/TirInput.h"
#include "tune/TuneCache.h"

#include "runtime/Program.h"
#include "runtime/Report.h"
#include "runtime/Simulator.h"
#include "runtime/Target.h"
#include "runtime/TargetProvenance.h"

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

/// --jobs beyond this is a mistake, not a machine: each job is a thread.
constexpr unsigned kMaxJobs = 1024;

/// Everything `tessel run` needs besides the program.
struct RunSettings {
  Target target;
  SimOptions sim;
  ReportFormat format = ReportFormat::Text;
  std::string reportPath = "-";
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

int runRunCommand(int argc, char **argv) {
  cl::opt<std::string> input(cl::Positional,
                             cl::desc("<program: .tasm, or a .tsl kernel, .tir tile IR or NKI .py kernel "
                                      "compiled first; '-' for stdin>"),
                             cl::cat(toolCategory()));
  SourceOptions source;
  PipelineOptions pipeline;
  NkiOptions nki;
  cl::opt<bool> checkFlag("check",
                          cl::desc("Compare the outputs with a plain fp32 reference: for .tsl, of the "
                                   "kernel's DSL semantics, failing when an element differs by more "
                                   "than 8x the reference's estimate of bf16 rounding (docs/tasm.md); "
                                   "for NKI kernels (.py), numpy on the same inputs, failing when the "
                                   "largest error exceeds 2% of the largest |reference| (docs/nki.md)"),
                          cl::cat(toolCategory()));
  cl::list<std::string> inputs(
      "input",
      cl::desc("Feed input tensor NAME from FILE.npy (float32, rounded to bf16 for bf16 tensors; or float16; "
               "little-endian, C order). Repeatable. Inputs not given are seeded random"),
      cl::value_desc("NAME=FILE.npy"), cl::cat(toolCategory()));
  cl::opt<uint64_t> seed("seed",
                         cl::desc("Seed of the random inputs: uniform in [-s, s) per (seed, tensor "
                                  "name); of a .tsl kernel, s = sqrt(3 / fan-in) for weights (right "
                                  "matmul operands), sqrt(3) for activations; else sqrt(3 / rows) "
                                  "(default 0)"),
                         cl::value_desc("N"), cl::init(0), cl::cat(toolCategory()));
  cl::opt<std::string> outputDir("output-dir",
                                 cl::desc("Write each output tensor as float32 DIR/<name>.npy (created if missing)"),
                                 cl::value_desc("DIR"), cl::cat(toolCategory()));
  cl::opt<uint64_t> maxInstructions(
      "max-instructions",
      cl::desc("Refuse, before simulating, a program that would execute more dynamic instructions than N "
               "(0: no limit; default 4000000000, about 30 minutes timing-only)"),
      cl::value_desc("N"), cl::init(SimOptions::DefaultMaxInstructions), cl::cat(toolCategory()));
  cl::opt<unsigned> jobs("jobs",
                         cl::desc("Threads of the functional simulation (tile products, random inputs; "
                                  "default: the number of hardware threads). The numbers are the same "
                                  "for any N"),
                         cl::value_desc("N"), cl::init(llvm::hardware_concurrency().compute_thread_count()),
                         cl::cat(toolCategory()));
  cl::opt<bool> timingOnly("timing-only",
                           cl::desc("Skip the numerics (no inputs read, no outputs, no never-written "
                                    "checks): only the timing model and the bounds/shape checks run"),
                           cl::cat(toolCategory()));
  cl::opt<bool> fastForward("fast-forward",
                             cl::desc("With --timing-only: advance the steady-state iterations of loops "
                                      "arithmetically instead of simulating them (latencies within 0.1% of "
                                      "exact ones, counters exact: docs/simulator.md)"),
                             cl::cat(toolCategory()));
  cl::opt<bool> exact("exact",
                      cl::desc("Simulate every instruction (the default for run; overrides --fast-forward)"),
                      cl::cat(toolCategory()));
  cl::opt<ReportFormat> format(
      "report", cl::desc("Report format (default: text)"), cl::init(ReportFormat::Text),
      cl::values(clEnumValN(ReportFormat::Text, "text", "a human-readable table"),
                 clEnumValN(ReportFormat::JSON, "json", "one JSON object (keys: docs/tasm.md, Report)")),
      cl::cat(toolCategory()));
  cl::opt<std::string> tracePath("trace",
                                 cl::desc("Write a Chrome trace-event timeline (open in Perfetto): one track "
                                          "per engine and DMA queue, one slice per instruction"),
                                 cl::value_desc("FILE.json"), cl::cat(toolCategory()));
  cl::opt<std::string> targetName(
      "target",
      cl::desc("Hardware description: trn1 (built in), trn2 (built in), or a JSON file "
               "(template: --dump-target; or a \"base\" built-in and the fields it changes, "
               "docs/targets.md). Default: the program's `target` line"),
      cl::value_desc("trn1|trn2|FILE.json"), cl::cat(toolCategory()));
  cl::opt<LatencyKind> latency(
      "latency", cl::desc("Which latency the report predicts (default: device; docs/calibration.md)"),
      cl::init(LatencyKind::Device),
      cl::values(clEnumValN(LatencyKind::Device, "device",
                            "one execution's device timeline, as a profile's total_time (+ launch_device_ns)"),
                 clEnumValN(LatencyKind::Benchmark, "benchmark",
                            "one iteration of a benchmark loop, as nki.benchmark (+ launch_benchmark_ns)")),
      cl::cat(toolCategory()));
  cl::opt<std::string> output("o", cl::desc("Write the report to FILE ('-' for stdout, the default)"),
                              cl::value_desc("FILE"), cl::init("-"), cl::cat(toolCategory()));
  cl::opt<bool> printStreams("print-streams",
                             cl::desc("Print the program's per-engine instruction streams (the projections "
                                      "of its body onto each engine and DMA queue) and exit"),
                             cl::cat(toolCategory()));
  cl::opt<bool> printProg("print-program",
                          cl::desc("Print the program in canonical .tasm form and exit"),
                          cl::cat(toolCategory()));
  cl::opt<bool> dumpTarget("dump-target",
                           cl::desc("Print the selected target description as JSON (a template for "
                                    "--target=FILE.json), with each value's provenance, and exit; "
                                    "FILE is not needed"),
                           cl::cat(toolCategory()));
  if (!parseCommandLine(argc, argv,
                        "tessel run: run a kernel on the NeuronCore simulator\n\n"
                        "Executes the program functionally (bf16 storage, fp32 PSUM accumulation) and with\n"
                        "the discrete-event timing model of the target, then prints the profile report.\n"
                        "Program format: docs/tasm.md. A .tsl source is compiled first, through the\n"
                        "pass pipeline (-O0 by default; docs/passes.md).\n"))
    return 1;

  auto loadTargetOrReport = [&](llvm::StringRef name, Target &t) {
    llvm::Expected<Target> loaded = loadTarget(name);
    if (!loaded) {
      reportError(llvm::toString(loaded.takeError()));
      return false;
    }
    t = std::move(*loaded);
    return true;
  };

  int status = 0;
  if (pipeline.handleInfoFlags(status))
    return status;
  if (dumpTarget) {
    Target t;
    llvm::StringRef name = targetName.empty() ? "trn1" : llvm::StringRef(targetName);
    if (!loadTargetOrReport(name, t))
      return 1;
    llvm::Expected<TargetProvenance> provenance = loadTargetProvenance(name, t);
    if (!provenance) {
      reportError(llvm::toString(provenance.takeError()));
      return 1;
    }
    llvm::outs() << withProvenanceJSON(targetToJSONText(t), t, *provenance);
    return 0;
  }
  if (input.empty()) {
    reportError("no program given (usage: tessel run [options] FILE.tasm|FILE.tsl|FILE.tir; see "
                "tessel run --help)");
    return 1;
  }
  if (!rejectEmptyValue(targetName) || !rejectEmptyValue(outputDir) || !rejectEmptyValue(tracePath))
    return 1;
  if (timingOnly && (!inputs.empty() || outputDir.getNumOccurrences())) {
    reportError(llvm::formatv("--timing-only skips the numerics, so {0} would have no effect; drop "
                              "one of them",
                              inputs.empty() ? "--output-dir" : "--input")
                    .str());
    return 1;
  }
  const bool isNki = isNkiSource(input);
  if (!isNki && !nki.args.empty()) {
    reportError("--arg applies to NKI kernels (.py) only");
    return 1;
  }
  if (isNki && source.tp != 1) {
    reportError("--tp splits a .tsl kernel; an NKI kernel (.py) runs as written, on one core");
    return 1;
  }
  if (isNki && (!source.defines.empty() || !pipeline.compileFlagsGiven().empty())) {
    reportError("-D and compile flags do not apply to NKI kernels (.py): they run as written");
    return 1;
  }
  std::map<std::string, std::string> inputFiles; // --input NAME=FILE
  for (const std::string &spec : inputs) {
    auto [name, file] = llvm::StringRef(spec).split('=');
    if (name.empty() || file.empty()) {
      reportError(llvm::formatv("malformed --input '{0}': expected --input NAME=FILE.npy", spec).str());
      return 1;
    }
    if (!inputFiles.emplace(name.str(), file.str()).second) {
      reportError(llvm::formatv("input '{0}' given twice", name).str());
      return 1;
    }
  }
  NkiSource nkiSource{input, source.kernel, {nki.args.begin(), nki.args.end()}, inputFiles};
  llvm::SourceMgr nkiSourceMgr;
  // An NKI kernel is traced by python (docs/nki.md); every other input's
  // format is told from its name or, on stdin, its first bytes.
  InputFormat inputFormat = InputFormat::Tsl;
  std::unique_ptr<llvm::MemoryBuffer> inputBuffer;
  if (!isNki) {
    llvm::Expected<ProgramInput> programInput = readProgramInput(input);
    if (!programInput) {
      reportError(llvm::toString(programInput.takeError()));
      return 1;
    }
    inputFormat = programInput->format;
    inputBuffer = std::move(programInput->buffer);
  }
  const bool isSource = isNki || inputFormat == InputFormat::Tsl;
  const bool isTir = !isNki && inputFormat == InputFormat::Tir;
  if (checkFlag && !isSource) {
    reportError(llvm::formatv("--check needs the kernel's .tsl source (a {0} program has no DSL "
                              "semantics to compare with)",
                              formatExtension(inputFormat))
                    .str());
    return 1;
  }
  if (!isSource && source.tp != 1) {
    reportError(llvm::formatv("--tp splits a .tsl kernel; a {0} program is one core's already",
                              formatExtension(inputFormat))
                    .str());
    return 1;
  }
  if (!isSource && !source.defines.empty()) {
    reportError("-D applies to .tsl sources only");
    return 1;
  }
  if (!isSource && !isTir && !source.kernel.empty()) {
    reportError("-k applies to .tsl sources and .tir tile IR only (a .tasm program holds one kernel)");
    return 1;
  }
  if (std::string flags = pipeline.compileFlagsGiven();
      inputFormat == InputFormat::Tasm && !flags.empty()) {
    reportError(flags + ": compile flags apply to .tsl sources and .tir tile IR only (a .tasm "
                        "program is already compiled)");
    return 1;
  }
  Frontend fe;
  // Under --tp, `fe` holds one core's shard and `whole` the kernel as written
  // (its inputs' shapes and --check's reference).
  Frontend whole;
  frontend::TensorParallelPlan tpPlan;
  std::string outputName;
  // A .tsl is compiled (frontend errors are reported here and yield null).
  Target compileTarget;
  auto compileSource = [&]() -> std::unique_ptr<ir::Kernel> {
    std::vector<Define> defines;
    Target &target = compileTarget;
    CompileOptions options;
    if (isNki)
      return loadTargetOrReport(targetName.empty() ? "trn1" : llvm::StringRef(targetName), target)
                 ? traceNkiKernel(nkiSource, target, nkiSourceMgr)
                 : nullptr;
    if (!source.collectDefines(defines) || !runFrontend(fe, input, defines, source.kernel) ||
        !loadTargetOrReport(targetName.empty() ? "trn1" : llvm::StringRef(targetName), target) ||
        (source.tp != 1 && (!runFrontend(whole, input, defines, source.kernel) ||
                            !shardForTensorParallel(fe, source.tp, target, tpPlan))) ||
        !resolveCompileOptions(fe, pipeline, target, options))
      return nullptr;
    return compileKernel(fe, options, target);
  };
  std::unique_ptr<ir::Kernel> kernel;
  TirInput tir;
  if (isSource) {
    // runFrontend reads the buffer already loaded (stdin can be read once).
    if (!isNki) {
      if (source.tp != 1)
        whole.sourceMgr.AddNewSourceBuffer(
            llvm::MemoryBuffer::getMemBufferCopy(inputBuffer->getBuffer(), inputBuffer->getBufferIdentifier()),
            llvm::SMLoc());
      fe.sourceMgr.AddNewSourceBuffer(std::move(inputBuffer), llvm::SMLoc());
    }
    kernel = compileSource();
    if (!kernel)
      return 1;
    for (const ir::Value *arg : kernel->args)
      if (arg->role == ir::TensorRole::Output)
        outputName = arg->name;
  } else if (isTir) {
    CompileOptions tirOptions;
    if (!loadTargetOrReport(targetName.empty() ? "trn1" : llvm::StringRef(targetName), compileTarget) ||
        !resolveTirOptions(pipeline, tirOptions) ||
        !loadTirKernel(tir, std::move(inputBuffer), source.kernel, tirOptions, compileTarget))
      return 1;
  }
  llvm::Expected<Program> prog =
      isNki      ? emitNkiProgram(*kernel, compileTarget, &nkiSourceMgr)
      : isSource ? emitProgram(*kernel, compileTarget, &fe.sourceMgr)
      : isTir    ? emitProgram(*tir.kernel, compileTarget, &tir.sourceMgr)
                 : parseProgram(inputBuffer->getBuffer(), inputBuffer->getBufferIdentifier());
  if (!prog) {
    reportError(llvm::toString(prog.takeError()));
    return 1;
  }
  if (printProg) {
    printProgram(*prog, llvm::outs());
    return 0;
  }
  if (printStreams) {
    printEngineStreams(*prog, llvm::outs());
    return 0;
  }

  RunSettings s;
  if (targetName.empty()) {
    llvm::Expected<Target> named = loadTarget(prog->target);
    if (!named) {
      llvm::consumeError(named.takeError());
      reportError(llvm::formatv("the program names target '{0}', which is not built in ({1}); give "
                                "its description with --target=FILE.json",
                                prog->target, llvm::join(builtinTargetNames(), ", "))
                      .str());
      return 1;
    }
    s.target = std::move(*named);
  } else if (!loadTargetOrReport(targetName, s.target)) {
    return 1;
  }
  s.sim.inputFiles = inputFiles;
  std::vector<std::string> read{input, targetFile(targetName)};
  if (pipeline.tuned)
    read.push_back(pipeline.tuneCache.empty() ? defaultTuneCachePath() : pipeline.tuneCache.getValue());
  for (const auto &[name, file] : s.sim.inputFiles)
    read.push_back(file);
  std::vector<NamedOutput> written = {{"-o", output}, {"--trace", tracePath}};
  // --output-dir writes DIR/NAME.npy for each output tensor.
  if (!outputDir.empty())
    for (const runtime::TensorDecl &t : prog->tensors)
      if (t.role == runtime::TensorRole::Output) {
        llvm::SmallString<256> path(outputDir.getValue());
        llvm::sys::path::append(path, t.name + ".npy");
        written.push_back({"--output-dir", std::string(path)});
      }
  if (!rejectUnwritableOutput(written[0]) || !rejectUnwritableOutput(written[1]) ||
      !rejectClashingOutputs(written, read))
    return 1;
  s.sim.seed = seed;
  // Weights are fan-in scaled by the kernel as written (under --tp, not
  // one core's shard: the whole inputs are drawn, then sliced).
  if (isSource && !isNki)
    s.sim.randomHalfWidth = randomInputHalfWidths(source.tp != 1 ? *whole.kernel : *fe.kernel);
  s.sim.outputDir = outputDir;
  s.sim.timingOnly = timingOnly;
  s.sim.fastForward = fastForward && !exact;
  s.sim.maxInstructions = maxInstructions;
  if (llvm::sys::Process::StandardErrIsDisplayed())
    s.sim.progress = terminalProgress(llvm::errs(), prog->kernel);
  s.sim.latency = latency;
  s.sim.tracePath = tracePath;
  s.format = format;
  s.reportPath = output;
  if (jobs == 0 || jobs > kMaxJobs) {
    reportError(jobs == 0 ? "--jobs 0: at least one thread is needed"
                          : llvm::formatv("--jobs {0}: at most {1} threads", unsigned(jobs), kMaxJobs).str());
    return 1;
  }
  s.sim.threads = jobs;
  if (checkFlag && timingOnly) {
    reportError("--check needs the numerics; drop --timing-only");
    return 1;
  }
  if (fastForward && !timingOnly) {
    reportError("--fast-forward skips instructions, so it needs --timing-only (the numerics run every one)");
    return 1;
  }
  if (source.tp != 1) {
    TensorParallelRun run;
    run.coreProgram = &*prog;
    run.wholeKernel = whole.kernel;
    run.plan = tpPlan;
    run.target = s.target;
    run.sim = s.sim;
    run.json = format == ReportFormat::JSON;
    run.reportPath = output;
    run.check = checkFlag;
    run.kBlock = kernel ? smallestContractionBlock(kernel->blockParams) : 0;
    run.outputName = outputName;
    return runTensorParallel(run);
  }
  // The report and --check read bf16 results in the simulator's own storage.
  s.sim.bf16Results = true;
  if (!checkFlag)
    return runProgram(*prog, s);
  return runProgram(*prog, s, [&](const SimResult &result, llvm::json::Object &check) {
    if (isNki)
      return checkNkiKernel(nkiSource, compileTarget, result, check);
    return checkAgainstReference(*fe.kernel, result, outputName, check,
                                 kernel ? smallestContractionBlock(kernel->blockParams) : 0);
  });
}

} // namespace tessel::driver

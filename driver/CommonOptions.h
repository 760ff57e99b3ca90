//===- driver/CommonOptions.h - Options shared by tessel commands -*- C++ -*-===//
//
// Option groups a command constructs as local objects before parsing the
// command line (see Commands.h).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_DRIVER_COMMONOPTIONS_H
#define TESSEL_DRIVER_COMMONOPTIONS_H

#include "frontend/Frontend.h"
#include "passes/BlockParams.h"
#include "passes/PassManager.h"
#include "passes/Pipelines.h"
#include "runtime/Target.h"

#include "llvm/Support/CommandLine.h"

#include <optional>
#include <string>
#include <vector>

namespace tessel::driver {

llvm::cl::OptionCategory &toolCategory();

/// Parses argv after hiding LLVM's own library options, so --help shows only
/// the command's options. Returns false (after printing) on a bad flag.
bool parseCommandLine(int argc, char **argv, const char *overview);

/// The options every command shares, declared here once: --target (the
/// hardware description), -o (where the result goes) and --jobs (threads),
/// the way MLIR's tools register the pass manager's options with one call.
/// A command adds those it has, saying in its own words what each is for;
/// their checks (validate) are the same in every command.
class SharedOptions {
public:
  /// `command` ("tessel run") prefixes the errors.
  explicit SharedOptions(const char *command) : command(command) {}

  /// --target; `use` says what the command reads it for. `byDefault` is the
  /// target without --target ("": the command decides, e.g. from the program).
  void addTarget(const char *use, const char *byDefault = "trn1");
  /// -o; `required` when the command has no default output.
  void addOutput(const char *help, const char *valueName = "FILE", const char *byDefault = "-",
                 bool required = false);
  /// --jobs (default: the machine's hardware threads); `unit` names one job
  /// in the errors ("thread").
  void addJobs(const char *help, const char *unit = "job");

  /// An empty --target or -o, and a --jobs of 0 or more than kMaxJobs, are
  /// errors.
  /// Returns false after reporting.
  bool validate() const;

  /// The --target value, else the default.
  std::string targetName() const { return target ? target->getValue() : std::string(); }
  bool targetGiven() const { return target && target->getNumOccurrences(); }
  /// The file --target reads ("" for a built-in target): an input no output may replace.
  std::string targetFile() const;
  /// Loads --target (`fallback` when it is not given and has no default).
  llvm::Expected<runtime::Target> loadTarget(llvm::StringRef fallback = "trn1") const;
  const std::string &output() const { return output_->getValue(); }
  bool outputGiven() const { return output_ && output_->getNumOccurrences(); }
  /// --jobs as a number (validate() checked it).
  unsigned jobs() const;

  /// --jobs beyond this is a mistake, not a machine: each job is a thread.
  static constexpr unsigned kMaxJobs = 1024;

private:
  const char *command;
  const char *jobUnit = "job";
  std::string targetHelp;
  std::optional<llvm::cl::opt<std::string>> target, output_;
  /// Read as text so a negative or non-numeric value gets parseCount's
  /// message, not LLVM's.
  std::optional<llvm::cl::opt<std::string>> jobs_;
};

/// Options of commands that read .tsl source: -k, -D.
struct SourceOptions {
  llvm::cl::opt<std::string> kernel{
      "k", llvm::cl::desc("Kernel to compile (may be omitted when the file has one kernel)"),
      llvm::cl::value_desc("KERNEL"), llvm::cl::cat(toolCategory())};
  llvm::cl::list<std::string> defines{
      "D", llvm::cl::desc("Override a `const` of the source, e.g. -D M=8192 (repeatable)"),
      llvm::cl::value_desc("NAME=INT"), llvm::cl::Prefix, llvm::cl::cat(toolCategory())};

  llvm::cl::opt<int> tp{
      "tp",
      llvm::cl::desc("Tensor parallelism: split the kernel over N NeuronCores (up to the target's "
                     "neuron_cores_per_chip, or whole chips up to chips_per_instance) and combine "
                     "them with an AllReduce (docs/tensor-parallel.md)"),
      llvm::cl::value_desc("N"), llvm::cl::init(1), llvm::cl::cat(toolCategory())};

  /// Splits the -D flags into name/value pairs; reports a malformed one.
  bool collectDefines(std::vector<Define> &out) const;
};

using passes::MlpForm;

/// The pass pipeline and its instrumentation (docs/passes.md), shared by
/// `tessel compile`, `tessel run` and `tessel opt`.
struct PipelineOptions {
  llvm::cl::opt<std::string> optLevel{
      "O",
      llvm::cl::desc("Optimization level: -O0 = the straightforward form, unoptimised (the "
                     "default: every intermediate through HBM), -O2 = the fusing pipeline "
                     "(--print-pipeline shows it)"),
      llvm::cl::value_desc("0|2"), llvm::cl::Prefix, llvm::cl::cat(toolCategory())};
  llvm::cl::opt<std::string> pipeline{
      "pipeline", llvm::cl::desc("Run a named pipeline: O0, O2, naive-fused"),
      llvm::cl::value_desc("NAME"), llvm::cl::cat(toolCategory())};
  llvm::cl::opt<std::string> passes{
      "passes",
      llvm::cl::desc("Run exactly these passes, in order (instead of -O/--pipeline); see "
                     "--list-passes"),
      llvm::cl::value_desc("a,b,c"), llvm::cl::cat(toolCategory())};
  llvm::cl::list<std::string> block{
      "block",
      llvm::cl::desc("Override block (tiling) parameters: m = row-strip height (the paper's bs), "
                     "n = output column block, k = contraction block (K-blocked accumulation); multiples of the target's partitions, 128 on trn1 "
                     "(docs/passes.md)"),
      llvm::cl::value_desc("NAME=INT,..."), llvm::cl::CommaSeparated, llvm::cl::cat(toolCategory())};
  llvm::cl::opt<MlpForm> mlpForm{
      "mlp-form",
      llvm::cl::desc("How an MLP block's gated result reaches its down projection (docs/passes.md, "
                     "\"The MLP kernel\")"),
      llvm::cl::values(
          clEnumValN(MlpForm::Auto, "auto",
                     "the cost model chooses (the default; the select-blocks notes show each "
                     "strip's predicted latency and form)"),
          clEnumValN(MlpForm::OneKernel, "one-kernel",
                     "each row strip of the result stays in SBUF and the down projection runs in "
                     "the same kernel; an error when no strip fits"),
          clEnumValN(MlpForm::TwoKernel, "two-kernel",
                     "the paper's UpGate + Down: the transposed result goes through HBM (the "
                     "-O2 built without fuse-handoff)")),
      llvm::cl::init(MlpForm::Auto), llvm::cl::cat(toolCategory())};
  llvm::cl::opt<bool> tuned{
      "tuned",
      llvm::cl::desc("Use the block parameters `tessel tune` found for this kernel, its shapes and "
                     "the target (read from the tune cache; implies -O2 unless a pipeline is "
                     "given, as tessel tune does)"),
      llvm::cl::cat(toolCategory())};
  llvm::cl::opt<std::string> tuneCache{
      "tune-cache",
      llvm::cl::desc("The tune cache --tuned reads (default: $XDG_CACHE_HOME/tessel/tune.json, "
                     "else ~/.cache/tessel/tune.json)"),
      llvm::cl::value_desc("FILE"), llvm::cl::cat(toolCategory())};
  llvm::cl::opt<bool> printIRAfterAll{
      "print-ir-after-all", llvm::cl::desc("Print the IR (to stderr) after every pass"),
      llvm::cl::cat(toolCategory())};
  llvm::cl::list<std::string> printIRBefore{
      "print-ir-before", llvm::cl::desc("Print the IR (to stderr) before the named passes"),
      llvm::cl::value_desc("PASS,..."), llvm::cl::CommaSeparated, llvm::cl::cat(toolCategory())};
  llvm::cl::list<std::string> printIRAfter{
      "print-ir-after", llvm::cl::desc("Print the IR (to stderr) after the named passes"),
      llvm::cl::value_desc("PASS,..."), llvm::cl::CommaSeparated, llvm::cl::cat(toolCategory())};
  llvm::cl::opt<bool> printChanged{
      "print-changed",
      llvm::cl::desc("Print the input IR, then the IR after each pass that changed it; a pass "
                     "that changed nothing prints one '(unchanged)' banner line"),
      llvm::cl::cat(toolCategory())};
  llvm::cl::opt<std::string> dumpDir{
      "dump-dir",
      llvm::cl::desc("Write DIR/00-input.tir and one numbered file per pass (01-allocate.tir, "
                     "...), each valid input for tessel opt"),
      llvm::cl::value_desc("DIR"), llvm::cl::cat(toolCategory())};
  llvm::cl::opt<bool> verifyEach{
      "verify-each",
      llvm::cl::desc("Verify the IR after every pass that changed it (default: on; "
                     "--verify-each=false turns it off)"),
      llvm::cl::init(true), llvm::cl::cat(toolCategory())};
  llvm::cl::opt<bool> printPipeline{
      "print-pipeline",
      llvm::cl::desc("Print the selected pipeline as a --passes= value and exit"),
      llvm::cl::cat(toolCategory())};
  llvm::cl::opt<bool> listPasses{
      "list-passes", llvm::cl::desc("List the registered passes and exit"),
      llvm::cl::cat(toolCategory())};
  llvm::cl::opt<bool> timePasses{
      "time-passes", llvm::cl::desc("Print the time each pass took (to stderr)"),
      llvm::cl::cat(toolCategory())};

  /// Also shows LLVM's own -stats flag (the passes' statistics, to stderr).
  PipelineOptions();

  /// --mlp-form against a pass list: a named pipeline (built without a
  /// form) must have fuse-handoff, which -O2 built with two-kernel leaves
  /// out; a list given with --passes (`listed`) is the form itself: it has
  /// fuse-handoff for one-kernel and lacks it for two-kernel. Reports and
  /// returns false.
  bool checkMlpForm(llvm::ArrayRef<std::string> names, bool listed) const;

  /// The passes to run: --passes, else --pipeline, else -O, else
  /// `defaultPipeline` (O2 under --tuned). Reports conflicting flags or
  /// unknown names and returns false.
  bool resolvePasses(std::vector<std::string> &out, llvm::StringRef defaultPipeline = "O0") const;
  /// Whether -O, --pipeline or --passes was given.
  bool pipelineGiven() const;
  /// The compile flags given ("-O, --block"), for a command to reject when
  /// it compiles nothing (a .tasm program, --emit=ast); empty if none.
  std::string compileFlagsGiven() const;
  /// The dump/verify/timing options; an unknown pass in --print-ir-* is an error.
  bool instrumentation(passes::InstrumentationOptions &out) const;
  /// Parses --block (syntax only; see passes::validateBlockConfig).
  bool blockOverrides(ir::BlockConfig &out) const;
  /// --list-passes and --print-pipeline print to stdout; returns true when
  /// one was given (the command then exits with `status`).
  bool handleInfoFlags(int &status) const;
};

/// The --arg and --grid options of commands that read NKI kernels.
struct NkiOptions {
  NkiOptions();
  llvm::cl::list<std::string> args;
  llvm::cl::opt<std::string> grid;
};

} // namespace tessel::driver

#endif

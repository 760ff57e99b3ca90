#include "driver/CommonOptions.h"
#include "driver/OptionChecks.h"

#include "passes/PassRegistry.h"
#include "passes/Pipelines.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Statistic.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/WithColor.h"

namespace cl = llvm::cl;

namespace tessel::driver {

cl::OptionCategory &toolCategory() {
  static cl::OptionCategory category("tessel options");
  return category;
}

bool parseCommandLine(int argc, char **argv, const char *overview) {
  cl::HideUnrelatedOptions(toolCategory());
  return cl::ParseCommandLineOptions(argc, argv, overview, &llvm::errs());
}

void SharedOptions::addTarget(const char *use, const char *byDefault) {
  // The option keeps a reference to its help text, so the text is a member.
  targetHelp = std::string("Hardware description: trn1 or trn2 (built in), or a JSON file (template: "
                           "tessel run --dump-target; or a \"base\" built-in and the fields it "
                           "changes, docs/targets.md). ") + use;
  target.emplace("target", cl::desc(targetHelp), cl::value_desc("trn1|trn2|FILE.json"), cl::init(byDefault),
                 cl::cat(toolCategory()));
}

void SharedOptions::addOutput(const char *help, const char *valueName, const char *byDefault, bool required) {
  output_.emplace("o", cl::desc(help), cl::value_desc(valueName), cl::init(byDefault), cl::cat(toolCategory()));
  if (required)
    output_->setNumOccurrencesFlag(cl::Required);
}

void SharedOptions::addJobs(const char *help, const char *unit) {
  jobUnit = unit;
  jobs_.emplace("jobs", cl::desc(help), cl::value_desc("N"),
                cl::init(std::to_string(llvm::hardware_concurrency().compute_thread_count())),
                cl::cat(toolCategory()));
}

bool SharedOptions::validate() const {
  if (target && !rejectEmptyValue(*target))
    return false;
  if (outputGiven() && output().empty()) {
    llvm::WithColor::error(llvm::errs(), command)
        << "-o was given an empty value; give " << output_->ValueStr << " or leave the option out\n";
    return false;
  }
  if (!jobs_)
    return true;
  llvm::Expected<uint64_t> n =
      parseCount("--jobs", *jobs_, llvm::formatv("the number of {0}s to run at once, e.g. --jobs 4", jobUnit).str());
  if (!n) {
    llvm::WithColor::error(llvm::errs(), command) << llvm::toString(n.takeError()) << "\n";
    return false;
  }
  if (*n != 0 && *n <= kMaxJobs)
    return true;
  llvm::WithColor::error(llvm::errs(), command)
      << (*n == 0 ? llvm::formatv("--jobs 0: at least one {0} is needed", jobUnit).str()
                  : llvm::formatv("--jobs {0}: at most {1} {2}s", *n, kMaxJobs, jobUnit).str())
      << "\n";
  return false;
}

unsigned SharedOptions::jobs() const {
  unsigned n = 1;
  llvm::StringRef(*jobs_).getAsInteger(10, n);
  return n;
}

std::string SharedOptions::targetFile() const { return driver::targetFile(targetName()); }

llvm::Expected<runtime::Target> SharedOptions::loadTarget(llvm::StringRef fallback) const {
  std::string name = targetName();
  return runtime::loadTarget(name.empty() ? fallback : llvm::StringRef(name));
}

bool SourceOptions::collectDefines(std::vector<Define> &out) const {
  for (const std::string &d : defines) {
    size_t eq = d.find('=');
    if (eq == std::string::npos || eq == 0) {
      llvm::WithColor::error(llvm::errs(), "tessel")
          << "malformed -D '" << d << "': expected -D NAME=INT, e.g. -D M=8192\n";
      return false;
    }
    out.push_back({d.substr(0, eq), d.substr(eq + 1)});
  }
  return true;
}

static bool reportError(const llvm::Twine &msg) {
  llvm::WithColor::error(llvm::errs(), "tessel") << msg << "\n";
  return false;
}

PipelineOptions::PipelineOptions() {
  // LLVM Support registers -stats (its STATISTIC counters); show it with ours.
  auto &registered = cl::getRegisteredOptions();
  auto it = registered.find("stats");
  if (it != registered.end() && !llvm::is_contained(it->second->Categories, &toolCategory())) {
    it->second->addCategory(toolCategory());
    it->second->setDescription("Print the passes' statistics (to stderr)");
    it->second->setHiddenFlag(cl::NotHidden);
  }
}

bool PipelineOptions::pipelineGiven() const {
  return optLevel.getNumOccurrences() || pipeline.getNumOccurrences() ||
         passes.getNumOccurrences();
}

std::string PipelineOptions::compileFlagsGiven() const {
  std::vector<std::string> given;
  auto check = [&](const cl::Option &o, const char *spelling) {
    if (o.getNumOccurrences())
      given.push_back(spelling);
  };
  check(optLevel, "-O");
  check(pipeline, "--pipeline");
  check(passes, "--passes");
  check(block, "--block");
  check(tuned, "--tuned");
  check(tuneCache, "--tune-cache");
  check(printIRAfterAll, "--print-ir-after-all");
  check(printIRBefore, "--print-ir-before");
  check(printIRAfter, "--print-ir-after");
  check(printChanged, "--print-changed");
  check(dumpDir, "--dump-dir");
  check(verifyEach, "--verify-each");
  check(timePasses, "--time-passes");
  return llvm::join(given, ", ");
}

bool PipelineOptions::resolvePasses(std::vector<std::string> &out,
                                    llvm::StringRef defaultPipeline) const {
  int given = (optLevel.getNumOccurrences() > 0) + (pipeline.getNumOccurrences() > 0) +
              (passes.getNumOccurrences() > 0);
  if (given > 1)
    return reportError("give only one of -O, --pipeline and --passes");
  if (passes.getNumOccurrences()) {
    auto names = tessel::passes::parsePassList(passes);
    if (!names)
      return reportError(llvm::toString(names.takeError()));
    out = std::move(*names);
    return checkMlpForm(out, /*listed=*/true);
  }
  // The blocks `tessel tune` found are those of its default pipeline.
  std::string name = pipeline.getNumOccurrences() ? pipeline.getValue()
                     : tuned                      ? std::string("O2")
                                                  : defaultPipeline.str();
  if (optLevel.getNumOccurrences()) {
    if (optLevel != "0" && optLevel != "2")
      return reportError("unknown optimization level -O" + optLevel + "; use -O0 or -O2");
    name = "O" + optLevel;
  }
  // The pipeline as built without a form says whether it has the forms.
  auto names = tessel::passes::buildPipeline(name);
  if (!names)
    return reportError(llvm::toString(names.takeError()));
  if (!checkMlpForm(*names, /*listed=*/false))
    return false;
  out = std::move(*tessel::passes::buildPipeline(name, {mlpForm}));
  return true;
}

bool PipelineOptions::checkMlpForm(llvm::ArrayRef<std::string> names, bool listed) const {
  if (mlpForm == MlpForm::Auto)
    return true;
  std::string flag = std::string("--mlp-form=") +
                     (mlpForm == MlpForm::OneKernel ? "one-kernel" : "two-kernel");
  bool handoff = llvm::is_contained(names, "fuse-handoff");
  if (listed && mlpForm == MlpForm::TwoKernel && handoff)
    return reportError(flag + " keeps the MLP's gated result in HBM, but --passes lists "
                              "fuse-handoff, which keeps it in SBUF: drop one of them");
  if (!handoff && !(listed && mlpForm == MlpForm::TwoKernel))
    return reportError(flag + " chooses between the MLP kernel's forms, which the fusing passes "
                              "build: use -O2 (its pipeline has fuse-handoff)");
  return true;
}

bool PipelineOptions::instrumentation(tessel::passes::InstrumentationOptions &out) const {
  auto collect = [](const cl::list<std::string> &list, std::set<std::string> &into) {
    for (const std::string &name : list) {
      if (!tessel::passes::lookupPass(name))
        return reportError("--" + list.ArgStr + ": " + tessel::passes::unknownPassMessage(name));
      into.insert(name);
    }
    return true;
  };
  if (!collect(printIRBefore, out.printIRBefore) || !collect(printIRAfter, out.printIRAfter))
    return false;
  out.printIRAfterAll = printIRAfterAll;
  out.printChanged = printChanged;
  out.dumpDir = dumpDir;
  out.verifyEach = verifyEach;
  out.timePasses = timePasses;
  out.stats = llvm::AreStatisticsEnabled();
  return true;
}

bool PipelineOptions::blockOverrides(tessel::ir::BlockConfig &out) const {
  for (const std::string &item : block)
    if (llvm::Error err = tessel::passes::parseBlockSpec(item, out))
      return reportError(llvm::toString(std::move(err)));
  return true;
}

bool PipelineOptions::handleInfoFlags(int &status) const {
  if (!listPasses && !printPipeline)
    return false;
  status = 0;
  if (listPasses)
    tessel::passes::printPassList(llvm::outs());
  if (printPipeline) {
    std::vector<std::string> names;
    if (!resolvePasses(names)) {
      status = 1;
      return true;
    }
    llvm::outs() << "--passes=" << tessel::passes::joinPassList(names) << "\n";
  }
  return true;
}

NkiOptions::NkiOptions()
    : args("arg",
           llvm::cl::desc("NKI kernels (.py): kernel argument NAME: a tensor's dtype and shape, e.g. "
                    "--arg lhsT=bf16[8192,4096] (dtype bf16 or f32; `NAME=bf16` takes the shape of "
                    "its --input file), or the value of another parameter: an int, float, tuple, None, "
                    "True/False or dtype (--arg eps=1e-5, --arg dims=(2,3), --arg dt=nl.float32). "
                    "Parameters not given keep their defaults. Repeatable"),
           llvm::cl::value_desc("NAME=DTYPE[D0,D1,...]|NAME=VALUE"), llvm::cl::cat(toolCategory())),
      grid("grid",
           llvm::cl::desc("NKI kernels (.py): the SPMD launch grid, e.g. --grid 2,2 for kernel[2, 2]: every "
                          "program instance runs on the one NeuronCore, in row-major grid order (docs/nki.md)"),
           llvm::cl::value_desc("G0,G1,..."), llvm::cl::cat(toolCategory())) {}

} // namespace tessel::driver

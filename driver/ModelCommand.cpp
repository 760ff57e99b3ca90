//===- driver/ModelCommand.cpp - `tessel model` ---------------------------===//
//
// tessel model CONFIG.json: a Hugging Face config's prefill and decode
// latency, dense and factorised, over --tp cores (model/Model.h does the
// work; docs/model.md).
//
//===----------------------------------------------------------------------===//
#include "driver/Commands.h"
#include "driver/CommonOptions.h"
#include "driver/CompileOptions.h"
#include "driver/OptionChecks.h"
#include "model/EmitKernels.h"
#include "model/Model.h"
#include "model/ModelPlot.h"
#include "model/ModelReport.h"
#include "support/AtomicFile.h"
#include "support/Progress.h"

#include "fmt/format.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

namespace cl = llvm::cl;

namespace tessel::driver {
namespace {

bool fail(const llvm::Twine &message) {
  const std::string m = message.str();
  if (llvm::StringRef(m).contains(": error: "))
    llvm::errs() << m << "\n"; // located already
  else
    llvm::WithColor::error(llvm::errs(), "tessel model") << m << "\n";
  return false;
}

struct ModelOptions {
  cl::opt<std::string> config{cl::Positional, cl::desc("<config.json>"), cl::cat(toolCategory())};
  cl::opt<int64_t> seq{"seq", cl::desc("Prompt length: prefill runs batch x seq rows (default 640)"),
                       cl::value_desc("S"), cl::init(640), cl::cat(toolCategory())};
  cl::opt<int64_t> batch{"batch", cl::desc("Sequences at once (default 1)"), cl::value_desc("B"), cl::init(1),
                         cl::cat(toolCategory())};
  cl::opt<int64_t> decodeTokens{"decode-tokens",
                                cl::desc("Decode steps after the prompt, for the end-to-end time (default 128)"),
                                cl::value_desc("T"), cl::init(128), cl::cat(toolCategory())};
  cl::opt<int> tp{"tp", cl::desc("Tensor parallelism over N NeuronCores of one chip (default 1)"),
                  cl::value_desc("N"), cl::init(1), cl::cat(toolCategory())};
  cl::opt<double> ratio{"ratio",
                        cl::desc("Also predict the MLP factorised at this compression ratio, in (0, 1) "
                                 "(paper eq. 4-5: the fraction of each weight's parameters removed)"),
                        cl::value_desc("R"), cl::cat(toolCategory())};
  cl::opt<std::string> rankFile{"rank-file",
                                cl::desc("Also predict the MLP factorised at these ranks: {\"gate_proj\", "
                                         "\"up_proj\", \"down_proj\"}, each `tessel factorize --json`'s "
                                         "report or a rank (docs/model.md)"),
                                cl::value_desc("ranks.json"), cl::cat(toolCategory())};
  cl::opt<std::string> emitKernels{"emit-kernels", cl::desc("Write the generated .tsl kernels to DIR"),
                                   cl::value_desc("DIR"), cl::cat(toolCategory())};
  enum class Format { Text, JSON };
  cl::opt<Format> format{"report", cl::desc("Report format (default: text)"), cl::init(Format::Text),
                         cl::values(clEnumValN(Format::Text, "text", "a table"),
                                    clEnumValN(Format::JSON, "json", "one JSON object (docs/model.md)")),
                         cl::cat(toolCategory())};
  cl::opt<std::string> plot{"plot", cl::desc("Write a stacked-bar SVG of the phases"), cl::value_desc("FILE.svg"),
                            cl::cat(toolCategory())};
  SharedOptions shared{"tessel model"}; // --target, -o
  PipelineOptions pipeline;             // -O2 unless given; --tuned reads the tune cache

  ModelOptions() {
    shared.addTarget("Every kernel is compiled for it and simulated on it (default: trn1)");
    shared.addOutput("Write the report to FILE (default: stdout)");
  }

  bool validate() const {
    if (config.empty())
      return fail("no config given (usage: tessel model CONFIG.json [options]; see tessel model --help)");
    for (auto [flag, value] : {std::pair{"--seq", seq.getValue()}, {"--batch", batch.getValue()},
                               {"--decode-tokens", decodeTokens.getValue()}, {"--tp", int64_t(tp)}})
      if (value < 1)
        return fail(fmt::format("{} {}: must be at least 1", flag, value));
    if (pipeline.printPipeline || pipeline.listPasses)
      return fail("--print-pipeline and --list-passes are tessel compile's: tessel model compiles every "
                  "kernel at -O2 unless -O, --pipeline or --passes say otherwise");
    if (ratio.getNumOccurrences() && !rankFile.empty())
      return fail("give --ratio or --rank-file, not both: each sets the factorised MLP's ranks");
    std::vector<NamedOutput> outs{{"-o", shared.output()}, {"--plot", plot}};
    return shared.validate() && rejectEmptyValue(rankFile) && rejectEmptyValue(emitKernels) &&
           rejectEmptyValue(plot) && rejectUnwritableOutput(outs[0]) && rejectUnwritableOutput(outs[1], false) &&
           rejectClashingOutputs(outs, {config.getValue(), rankFile.getValue(), shared.targetFile()});
  }
};

} // namespace

int runModelCommand(int argc, char **argv) {
  ModelOptions o;
  if (!parseCommandLine(argc, argv, "tessel model: predict an LLM's prefill and decode latency from its "
                                    "config.json (docs/model.md)\n\nThe compile flags (-O, --tuned, "
                                    "--mlp-form, --block, ...) apply to every kernel; -O2 unless given.\n") ||
      !o.validate())
    return 1;
  llvm::Expected<runtime::Target> target = o.shared.loadTarget();
  if (!target)
    return fail(llvm::toString(target.takeError())), 1;
  model::ModelSettings s{o.seq, o.batch, o.decodeTokens, o.tp, o.shared.targetName(), std::nullopt, "", o.pipeline.tuned ? "--tuned" : "-O2"};
  if (llvm::Error e = model::checkSettings(s, *target))
    return fail(llvm::toString(std::move(e))), 1;
  llvm::Expected<model::ModelConfig> config = model::readModelConfig(o.config, o.tp);
  if (!config)
    return fail(llvm::toString(config.takeError())), 1;
  if (o.ratio.getNumOccurrences() || !o.rankFile.empty()) {
    llvm::Expected<model::MlpRanks> ranks = o.rankFile.empty() ? model::ranksForRatio(*config, o.ratio, target->pe_rows)
                                                               : model::readRankFile(o.rankFile, *config);
    if (!ranks)
      return fail(llvm::toString(ranks.takeError())), 1;
    s.ranks = *ranks;
    s.ranksFrom = o.rankFile.empty() ? fmt::format("--ratio {}", o.ratio.getValue()) : o.rankFile.getValue();
  }
  const std::vector<model::LayerKernel> kernels = model::modelKernels(*config, s);
  if (llvm::Error e = o.emitKernels.empty() ? llvm::Error::success() : model::checkKernelFiles(o.emitKernels, kernels))
    return fail(llvm::toString(std::move(e))), 1;

  model::KernelRunner runner(*target, o.tp, [&](compiler::Frontend &fe, compiler::CompileOptions &out) {
    return resolveCompileOptions(fe, o.pipeline, *target, out, "O2");
  });
  support::StageProgress progress(llvm::errs(), llvm::errs().is_displayed(), "model");
  llvm::Expected<model::ModelPrediction> pred =
      model::predictModel(*config, s, runner, [&](const model::LayerKernel &k, size_t i, size_t n) {
        progress.stage(fmt::format("{} ({} of {})", k.fileName, i + 1, n));
      });
  progress.finish();
  if (!pred)
    return fail(llvm::toString(pred.takeError())), 1;
  if (llvm::Error e = o.emitKernels.empty() ? llvm::Error::success() : model::emitKernelFiles(o.emitKernels, kernels))
    return fail(llvm::toString(std::move(e))), 1;
  if (llvm::Error e = o.plot.empty() ? llvm::Error::success() : support::writeFileAtomically(o.plot, model::predictionSvg(*pred)))
    return fail(llvm::toString(std::move(e))), 1;
  std::error_code ec;
  llvm::ToolOutputFile out(o.shared.output(), ec, llvm::sys::fs::OF_Text);
  if (ec)
    return fail("cannot write '" + o.shared.output() + "': " + ec.message()), 1;
  if (o.format == ModelOptions::Format::JSON)
    out.os() << llvm::formatv("{0:2}", llvm::json::Value(model::predictionToJSON(*pred))) << "\n";
  else
    model::printPredictionText(*pred, out.os());
  out.keep();
  return 0;
}

} // namespace tessel::driver

//===- driver/RunDescription.cpp - What a report says was run -------------===//
#include "driver/RunDescription.h"

namespace tessel::driver {

/// -O0 is the default, and its numbers are 2-5x -O2's: the header says why.
static constexpr const char *kO0 = "-O0 (unoptimised; -O2 fuses)";

/// The pass list's name: the flag that chose it.
static std::string pipelineFlag(const PipelineOptions &o, ProgramKind kind) {
  if (o.passes.getNumOccurrences())
    return "--passes=" + o.passes.getValue();
  std::string level;
  if (o.optLevel.getNumOccurrences())
    level = o.optLevel.getValue();
  else if (o.pipeline.getNumOccurrences() && (o.pipeline == "O0" || o.pipeline == "O2"))
    level = o.pipeline.getValue().substr(1);
  else if (o.pipeline.getNumOccurrences())
    return "--pipeline=" + o.pipeline.getValue();
  else
    level = o.tuned ? "2" : "0";
  if (level != "0")
    return "-O" + level;
  // Tile IR may have been optimised before: -O0 adds nothing to it.
  return kind == ProgramKind::Tir ? "-O0 (the tile IR as read)" : kO0;
}

std::string describePipeline(const PipelineOptions &o, ProgramKind kind) {
  if (kind == ProgramKind::Nki)
    return "none: the NKI kernel runs as written";
  if (kind == ProgramKind::Tasm)
    return "none: a .tasm program is compiled already";
  std::string out = pipelineFlag(o, kind);
  if (o.tuned)
    out += ", --tuned blocks";
  if (o.mlpForm == MlpForm::OneKernel)
    out += ", --mlp-form=one-kernel";
  else if (o.mlpForm == MlpForm::TwoKernel)
    out += ", --mlp-form=two-kernel";
  return out;
}

runtime::RunDescription describeRun(llvm::StringRef source, const PipelineOptions &options, ProgramKind kind,
                                    const ir::BlockConfig *blocks) {
  runtime::RunDescription d;
  d.source = source.str();
  d.pipeline = describePipeline(options, kind);
  if (blocks)
    d.blocks = blocks->str();
  return d;
}

} // namespace tessel::driver

//===- driver/CompileOptions.cpp - The command line's compile options -----===//
#include "driver/CompileOptions.h"
#include "driver/OptionChecks.h"
#include "tune/TuneCache.h"

#include "llvm/Support/WithColor.h"

namespace tessel::driver {

bool resolveCompileOptions(compiler::Frontend &fe, const PipelineOptions &options,
                           const runtime::Target &target, compiler::CompileOptions &out,
                           llvm::StringRef defaultPipeline) {
  if (!options.resolvePasses(out.passes, defaultPipeline) || !options.instrumentation(out.instrumentation) ||
      !options.blockOverrides(out.blocks))
    return false;
  out.params.mlpForm = options.mlpForm;
  // A leading select-blocks runs before TileGen (compiler/Compile.h): the
  // pass manager numbers the passes after it, as --print-pipeline lists them.
  if (!out.passes.empty() && out.passes.front() == "select-blocks")
    out.instrumentation.takenBefore = {out.passes.front()};
  if (!options.tuned)
    return true;
  if (!rejectEmptyValue(options.tuneCache))
    return false;
  std::string cache =
      options.tuneCache.empty() ? tune::defaultTuneCachePath() : options.tuneCache.getValue();
  return tune::tunedBlocks(fe, cache, out.passes, target, out.blocks);
}

bool resolveTirOptions(const PipelineOptions &options, compiler::CompileOptions &out) {
  if (options.tuned) {
    llvm::WithColor::error(llvm::errs(), "tessel")
        << "--tuned needs the kernel's .tsl source (tessel compile or tessel run): tile IR has "
           "no tuning of its own\n";
    return false;
  }
  return options.resolvePasses(out.passes) && options.instrumentation(out.instrumentation) &&
         options.blockOverrides(out.blocks);
}

} // namespace tessel::driver

//===- driver/RunDescription.h - What a report says was run ------*- C++ -*-===//
//
// A report's numbers depend on the pipeline, the blocks and the input; the
// simulator sees only the program, so the driver says what it compiled, in
// the words a user typed (runtime::RunDescription, printed in the header).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_DRIVER_RUNDESCRIPTION_H
#define TESSEL_DRIVER_RUNDESCRIPTION_H

#include "driver/CommonOptions.h"
#include "driver/LoadProgram.h"
#include "ir/BlockConfig.h"
#include "runtime/Report.h"

#include <string>

namespace tessel::driver {

/// The pipeline a program of `kind` was compiled with, as the flags chose
/// it: "-O2", "-O0 (unoptimised; -O2 fuses)" (also the default), "--passes=a,b",
/// "--pipeline=naive-fused", with ", --tuned blocks" and ", --mlp-form=F"
/// when given; for an NKI kernel or a .tasm program, that none ran.
std::string describePipeline(const PipelineOptions &options, ProgramKind kind);

/// `source` (the input as given), the pipeline, and `blocks` (none: "").
runtime::RunDescription describeRun(llvm::StringRef source, const PipelineOptions &options, ProgramKind kind,
                                    const ir::BlockConfig *blocks);

} // namespace tessel::driver

#endif

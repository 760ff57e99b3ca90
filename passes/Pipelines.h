//===- passes/Pipelines.h - The named pipelines (-O0, -O2, ...) -*- C++ -*-===//
//
// A pipeline is a flat list of registered pass names, written out one `add`
// per line in passes/Pipelines.cpp (Triton's make_ttgir style) so a change to
// a pipeline is a one-line diff. --print-pipeline prints one as a --passes=
// string, so any run can be reproduced with `tessel opt --passes=...`.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_PASSES_PIPELINES_H
#define TESSEL_PASSES_PIPELINES_H

#include "passes/Pass.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace tessel::passes {

/// Names accepted by buildPipeline: "O0", "O2", "naive-fused".
std::vector<std::string> pipelineNames();

/// The pass names of pipeline `name` built with `params`; an unknown name is
/// an error listing the known ones.
llvm::Expected<std::vector<std::string>> buildPipeline(llvm::StringRef name,
                                                       const PipelineParams &params = {});

} // namespace tessel::passes

#endif

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

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include "llvm/ADT/ArrayRef.h"

#include <string>
#include <vector>

namespace tessel::passes {

/// Names accepted by buildPipeline: "O0", "O2", "naive-fused".
std::vector<std::string> pipelineNames();

/// The pass names of pipeline `name`; an unknown name is an error listing
/// the known ones.
llvm::Expected<std::vector<std::string>> buildPipeline(llvm::StringRef name);

/// How an MLP block's gated result reaches its down projection (--mlp-form).
enum class MlpForm { Auto, OneKernel, TwoKernel };

/// `passes` without fuse-handoff: an MLP's two-kernel form (the gated result
/// through HBM between UpGate and Down, docs/passes.md).
std::vector<std::string> twoKernelForm(llvm::ArrayRef<std::string> passes);

} // namespace tessel::passes

#endif

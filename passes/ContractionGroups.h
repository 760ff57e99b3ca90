//===- passes/ContractionGroups.h - W^T tiles loaded from W's rows, g at a time -*- C++ -*-===//
#ifndef TESSEL_PASSES_CONTRACTIONGROUPS_H
#define TESSEL_PASSES_CONTRACTIONGROUPS_H

#include "ir/Kernel.h"

#include <string>

namespace tessel::passes {

/// io-transpose's tensor-engine form of a contraction loop that starts by
/// loading `input`'s tile transposed (a weight used as W.T, streamed): the
/// loop takes `groups` steps at once, their tiles transposed from plain
/// loads of `groups` partition tiles of W's rows
/// (passes/ContractionGroups.cpp). False, unchanged, when `loop` is not
/// of that form.
bool groupAlongContraction(ir::Kernel &kernel, ir::ForOp &loop, const std::string &input, int64_t groups);

} // namespace tessel::passes

#endif

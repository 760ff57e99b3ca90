//===- ir/LoopDeps.h - Whether a loop's iterations are independent -*- C++ -*-===//
#ifndef TESSEL_IR_LOOPDEPS_H
#define TESSEL_IR_LOOPDEPS_H

#include "ir/Kernel.h"

#include <optional>

namespace tessel::ir {

/// A constant an index extent never exceeds (a partial tile `min(128, ...)`:
/// 128), if it has one.
std::optional<int64_t> extentBound(const IndexExpr &e);

/// Whether the iterations of `loop` may run in any order or interleaved: no
/// loop-carried dependence other than a matmul accumulation group of the
/// loop (NKI's nl.affine_range; passes that interleave iterations). Every
/// buffer the body writes and does not allocate itself is written at places
/// disjoint between iterations and not also read in the body. Conservative:
/// a loop of fewer than two iterations is not.
bool iterationsIndependent(const ForOp &loop);

} // namespace tessel::ir

#endif

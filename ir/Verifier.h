//===- ir/Verifier.h - Structural and semantic checks of the tile IR -*- C++ -*-===//
//
// Checks a kernel against the rules in docs/tile-ir.md ("Verifier rules"):
// types (partitions, PSUM bank, dtypes), definitions and scoping, access ranks
// and bounds for every loop iteration, memory spaces per op, layout (dimension
// labels; the matmul contraction on partitions) and the engines' shape limits.
// Reports ALL violations it finds, each located at the op or access (or, for
// ops built in memory without a location, naming the kernel and op).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_IR_VERIFIER_H
#define TESSEL_IR_VERIFIER_H

#include "ir/Diagnostics.h"
#include "ir/Kernel.h"

#include <cstdint>

namespace tessel::ir {

struct VerifierOptions {
  /// Loop-nest points enumerated per op to check the bounds and per-iteration
  /// shape agreement the symbolic analysis leaves unproven; beyond it the op
  /// gets a "could not verify" warning.
  uint64_t maxPointsPerOp = uint64_t(1) << 22;
};

/// Returns true when the kernel is valid; otherwise reports every violation.
bool verifyKernel(Kernel &kernel, DiagnosticEngine &diags, const VerifierOptions &opts = {});
bool verifyModule(Module &module, DiagnosticEngine &diags, const VerifierOptions &opts = {});

} // namespace tessel::ir

#endif

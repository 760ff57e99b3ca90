//===- driver/Check.h - `tessel run --check` against the reference -*- C++ -*-===//
#ifndef TESSEL_DRIVER_CHECK_H
#define TESSEL_DRIVER_CHECK_H

#include "frontend/AST.h"
#include "runtime/Simulator.h"

#include "llvm/Support/JSON.h"

namespace tessel::driver {

/// bf16 tolerance of --check: the simulated output passes when
///   max_abs_err <= kCheckTolerance * max(|reference|)
/// i.e. the error normalised by the output's magnitude (max_rel_err) is at
/// most 2%. bf16 keeps 8 significant bits (relative rounding 2^-9); every
/// stored intermediate of a chain adds about that much, and the fp32
/// reference rounds nothing, so a correct kernel lands near 1% or below.
constexpr double kCheckTolerance = 2e-2;

/// Evaluates `kernel` with the plain reference on the simulator's inputs and
/// compares with its output `outputName`. Fills `check` (max_abs_err,
/// max_rel_err, tolerance, passed) and returns whether it passed.
bool checkAgainstReference(const ast::Kernel &kernel, const runtime::SimResult &result,
                           const std::string &outputName, llvm::json::Object &check);

} // namespace tessel::driver

#endif

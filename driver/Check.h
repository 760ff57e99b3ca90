//===- driver/Check.h - `tessel run --check` against the reference -*- C++ -*-===//
#ifndef TESSEL_DRIVER_CHECK_H
#define TESSEL_DRIVER_CHECK_H

#include "frontend/AST.h"
#include "runtime/Simulator.h"

#include "llvm/Support/JSON.h"

namespace tessel::driver {

/// How --check decides, as the report says it ("method").
constexpr const char *kCheckMethod =
    "error bound: each element within 8x the reference's estimate of bf16 rounding at every "
    "stored intermediate and fp32 accumulation (docs/tasm.md)";

/// Evaluates `kernel` with the plain reference on the simulator's inputs and
/// compares with its output `outputName`: every element must lie within
/// kErrorBoundFactor times its error estimate (Reference.h, ErrorModel) of
/// the reference. Fills `check` (method, max_abs_err, max_rel_err,
/// max_err_over_bound, passed; or error) and returns whether it passed.
/// Inputs holding Inf or NaN are not compared: `error` names them.
bool checkAgainstReference(const ast::Kernel &kernel, const runtime::SimResult &result,
                           const std::string &outputName, llvm::json::Object &check);

} // namespace tessel::driver

#endif

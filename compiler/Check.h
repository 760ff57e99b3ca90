//===- compiler/Check.h - `tessel run --check` against the reference -*- C++ -*-===//
#ifndef TESSEL_COMPILER_CHECK_H
#define TESSEL_COMPILER_CHECK_H

#include "frontend/AST.h"
#include "ir/BlockConfig.h"
#include "runtime/Simulator.h"

#include "llvm/Support/JSON.h"

namespace tessel::compiler {

/// How --check decides for `kernel`, as the report says it ("method"): the
/// rounding estimated is bf16's at every stored intermediate and fp32's in
/// accumulation; for a kernel whose tensors are all fp32, fp32's throughout
/// (storeRoundoff, Reference.h).
std::string checkMethod(const ast::Kernel &kernel);

/// Evaluates `kernel` with the plain reference on the simulator's inputs and
/// compares with its output `outputName`: every element must lie within
/// kErrorBoundFactor times its error estimate (Reference.h, ErrorModel) of
/// the reference. Fills `check` (method, max_abs_err, max_rel_err,
/// max_err_over_bound, passed; or error) and returns whether it passed.
/// Inputs holding Inf or NaN are not compared: `error` names them.
/// `kBlock`: the compiled kernel's smallest contraction block (0: none), see
/// evaluateReference. `extraError`: per element, the estimate of roundings
/// the result holds that the reference does not model (--tp's bf16
/// partials), added to the reference's as a root sum of squares; empty: none.
bool checkAgainstReference(const ast::Kernel &kernel, const runtime::SimResult &result,
                           const std::string &outputName, llvm::json::Object &check,
                           int64_t kBlock = 0, llvm::ArrayRef<float> extraError = {});

/// The smallest contraction block of `blocks` (a kernel's block attribute):
/// every parameter but the row strip and the column blocks; 0 when none.
int64_t smallestContractionBlock(const ir::BlockConfig &blocks);

} // namespace tessel::compiler

#endif

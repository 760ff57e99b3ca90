//===- driver/Reference.h - Plain fp32 evaluation of a kernel --*- C++ -*-===//
//
// The reference `tessel run --check` compares the simulator against: the typed
// AST evaluated directly on the host, in fp32, with no bf16 rounding of
// intermediates (inputs are expected already rounded to bf16 by the caller).
//
//   @          cblas_sgemm (OpenBLAS), fp32 accumulation
//   * +        elementwise in fp32
//   silu, ...  applyActFn: the formula in support/Activations.def, the same
//              definition the simulator's scalar engine evaluates
//   e.T        transpose
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_DRIVER_REFERENCE_H
#define TESSEL_DRIVER_REFERENCE_H

#include "frontend/AST.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tessel::driver {

/// A row-major host matrix: shape is {rows, cols}, data has rows*cols floats.
struct HostTensor {
  std::vector<int64_t> shape;
  std::vector<float> data;
};

/// The key of the kernel's return value in evaluateReference's result.
constexpr const char *kReferenceResultKey = "result";

/// Evaluates `kernel` (which Sema has typed) on `inputs`, one per parameter by
/// name, each of the parameter's shape. Returns {"result": the return value}.
/// Fails (without evaluating) on a missing, unknown or mis-shaped input.
llvm::Expected<std::map<std::string, HostTensor>>
evaluateReference(const ast::Kernel &kernel, const std::map<std::string, HostTensor> &inputs);

} // namespace tessel::driver

#endif

//===- compiler/Reference.h - Plain fp32 evaluation of a kernel --*- C++ -*-===//
//
// The reference `tessel run --check` compares the simulator against: the typed
// AST evaluated directly on the host, in fp32, with no bf16 rounding of
// intermediates (inputs are expected already rounded to bf16 by the caller).
// Alongside each value it carries an error estimate: how far a kernel that
// stores every intermediate in bf16 (and accumulates in fp32) may be from it,
// element by element (see ErrorModel below).
//
//   @          cblas_sgemm (OpenBLAS), fp32 accumulation; an operand held as
//              bf16 is converted a panel (rows of the left, columns of the
//              right operand) at a time
//   * +        elementwise in fp32
//   silu, ...  applyActFn: the formula in support/Activations.def, the same
//              definition the simulator's scalar engine evaluates
//   e.T        transpose
//   - / < ...  elementwise in fp64 with numpy broadcasting of [m, 1], [1, n]
//              and numbers; comparisons give 1 or 0 (an estimate of 1/8
//              where the operands' errors may flip them)
//   sum, ...   rows folded in fp64 (sum/mean: errors as a root sum of
//              squares; max/min: the row's largest error)
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_COMPILER_REFERENCE_H
#define TESSEL_COMPILER_REFERENCE_H

#include "frontend/AST.h"
#include "runtime/BF16.h"

#include "llvm/ADT/ArrayRef.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tessel::compiler {

/// A row-major host matrix: shape is {rows, cols}, data has rows*cols floats.
/// An input may instead be read in place (no copy): its float32 values in
/// `f32`, or its bf16 bit patterns in `bf16` (non-owning), with `data` empty.
struct HostTensor {
  std::vector<int64_t> shape;
  std::vector<float> data;
  /// Per element, the error estimate of `data` (empty: exact, as inputs are).
  std::vector<float> error;
  llvm::ArrayRef<float> f32 = {};
  llvm::ArrayRef<uint16_t> bf16 = {};

  /// The float32 values, or null when they are bf16 bit patterns.
  const float *floats() const { return !data.empty() ? data.data() : !f32.empty() ? f32.data() : nullptr; }
  float at(size_t i) const { return !bf16.empty() ? runtime::bf16BitsToFloat(bf16[i]) : floats()[i]; }
};

/// The error estimate of the reference. Each operation's result is rounded
/// to bf16 (unit roundoff 2^-8) where a kernel may store it; the errors of
/// its operands propagate to first order; a matmul adds its fp32 accumulation
/// error (2^-24 per addition). Independent errors add as a root sum of
/// squares: the typical size, not the worst case, so that a wrong kernel
/// (whose error is of the size of the values) cannot hide under it.
/// `tessel run --check` allows kErrorBoundFactor times the estimate; a sum of
/// up to 64 terms is then covered even in the worst case (Cauchy-Schwarz).
struct ErrorModel {
  static constexpr double kStoreRoundoff = 1.0 / 256; // bf16: 8 significant bits
  static constexpr double kAccumRoundoff = 1.0 / 16777216; // fp32: 24 bits
  /// A kernel whose tensors are all fp32 stores its intermediates in fp32.
  static constexpr double kF32StoreRoundoff = kAccumRoundoff;
};

/// Whether every tensor of `kernel` (its parameters and result) is fp32.
bool allF32(const ast::Kernel &kernel);
/// The unit roundoff of `kernel`'s stored intermediates: fp32's for an
/// all-fp32 kernel (allF32), else bf16's.
double storeRoundoff(const ast::Kernel &kernel);
constexpr double kErrorBoundFactor = 8;

/// The key of the kernel's return value in evaluateReference's result.
constexpr const char *kReferenceResultKey = "result";

/// Evaluates `kernel` (which Sema has typed) on `inputs`, one per parameter by
/// name, each of the parameter's shape. Returns {"result": the return value}.
/// Fails (without evaluating) on a missing, unknown or mis-shaped input.
/// `kBlock` > 0: the kernel K-blocks contractions by it, storing the running
/// sums in bf16 between blocks (strip-accumulate), whose roundings every
/// longer contraction's estimate then holds.
llvm::Expected<std::map<std::string, HostTensor>>
evaluateReference(const ast::Kernel &kernel, const std::map<std::string, HostTensor> &inputs,
                  int64_t kBlock = 0);

} // namespace tessel::compiler

#endif

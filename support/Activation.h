//===- support/Activation.h - Activation functions and ALU operations -*- C++ -*-===//
//
// The scalar engine's functions (Activations.def) and the vector engine's
// binary operations (AluOps.def): their enums, names and the one definition
// of their math, inline because the simulator applies them per element.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_SUPPORT_ACTIVATION_H
#define TESSEL_SUPPORT_ACTIVATION_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cmath>
#include <cstdint>
#include <optional>

namespace tessel {

enum class ActFn : uint8_t {
#define TESSEL_ACTIVATION(ENUM, NAME, IN_DSL, FORMULA) ENUM,
#include "support/Activations.def"
};

llvm::ArrayRef<ActFn> allActFns();
llvm::StringRef actFnName(ActFn f);
std::optional<ActFn> parseActFn(llvm::StringRef name);
/// Whether the DSL has the function (`silu(e)`); the others exist below it.
bool isDslFunction(ActFn f);

inline double applyActFn(ActFn f, double x) {
  switch (f) {
#define TESSEL_ACTIVATION(ENUM, NAME, IN_DSL, FORMULA)                                             \
  case ActFn::ENUM:                                                                                \
    return FORMULA;
#include "support/Activations.def"
  }
  return x;
}

enum class AluOp : uint8_t {
#define TESSEL_ALU(ENUM, NAME, FORMULA) ENUM,
#include "support/AluOps.def"
};

llvm::ArrayRef<AluOp> allAluOps();
llvm::StringRef aluOpName(AluOp op);
std::optional<AluOp> parseAluOp(llvm::StringRef name);

/// is_equal, not_equal, is_gt, is_ge, is_lt, is_le: a 1.0/0.0 result
/// (affine_select compares with these).
bool isComparison(AluOp op);
/// add, max, min: what tensor_reduce may fold with.
bool isReduction(AluOp op);

inline float applyAluOp(AluOp op, float a, float b) {
  switch (op) {
#define TESSEL_ALU(ENUM, NAME, FORMULA)                                                            \
  case AluOp::ENUM:                                                                                \
    return FORMULA;
#include "support/AluOps.def"
  }
  return a;
}

} // namespace tessel

#endif

//===- support/Activation.cpp - Names of activations and ALU operations ---===//
#include "support/Activation.h"
#include "support/Registry.h"

namespace tessel {

llvm::ArrayRef<ActFn> allActFns() {
  static const ActFn all[] = {
#define TESSEL_ACTIVATION(ENUM, NAME, IN_DSL, FORMULA) ActFn::ENUM,
#include "support/Activations.def"
  };
  return all;
}

llvm::StringRef actFnName(ActFn f) {
  switch (f) {
#define TESSEL_ACTIVATION(ENUM, NAME, IN_DSL, FORMULA)                                             \
  case ActFn::ENUM:                                                                                \
    return NAME;
#include "support/Activations.def"
  }
  return "?";
}

std::optional<ActFn> parseActFn(llvm::StringRef name) { return lookupName(allActFns(), actFnName, name); }

bool isDslFunction(ActFn f) {
  switch (f) {
#define TESSEL_ACTIVATION(ENUM, NAME, IN_DSL, FORMULA)                                             \
  case ActFn::ENUM:                                                                                \
    return IN_DSL;
#include "support/Activations.def"
  }
  return false;
}

llvm::ArrayRef<AluOp> allAluOps() {
  static const AluOp all[] = {
#define TESSEL_ALU(ENUM, NAME, FORMULA) AluOp::ENUM,
#include "support/AluOps.def"
  };
  return all;
}

llvm::StringRef aluOpName(AluOp op) {
  switch (op) {
#define TESSEL_ALU(ENUM, NAME, FORMULA)                                                            \
  case AluOp::ENUM:                                                                                \
    return NAME;
#include "support/AluOps.def"
  }
  return "?";
}

std::optional<AluOp> parseAluOp(llvm::StringRef name) { return lookupName(allAluOps(), aluOpName, name); }

bool isComparison(AluOp op) {
  switch (op) {
  case AluOp::IsEqual:
  case AluOp::NotEqual:
  case AluOp::IsGt:
  case AluOp::IsGe:
  case AluOp::IsLt:
  case AluOp::IsLe:
    return true;
  default:
    return false;
  }
}

bool isReduction(AluOp op) { return op == AluOp::Add || op == AluOp::Max || op == AluOp::Min; }

} // namespace tessel

//===- frontend/AST.cpp - Names of AST enums and type formatting ---------===//
#include "frontend/AST.h"

#include <fmt/format.h>

namespace tessel::ast {

const char *binaryOpName(BinaryOp op) {
  switch (op) {
  case BinaryOp::Mul:
    return "*";
  case BinaryOp::Add:
    return "+";
  }
  return "?";
}

const char *exprKindName(ExprKind k) {
  switch (k) {
  case ExprKind::Ref:
    return "Ref";
  case ExprKind::MatMul:
    return "MatMul";
  case ExprKind::Binary:
    return "Binary";
  case ExprKind::Unary:
    return "Unary";
  case ExprKind::Transpose:
    return "Transpose";
  }
  return "?";
}

std::string formatShape(const TensorType &t) { return fmt::format("[{} x {}]", t.rows, t.cols); }

std::string formatType(const TensorType &t) {
  return fmt::format("{}{}", dtypeName(t.dtype).str(), formatShape(t));
}

} // namespace tessel::ast

//===- frontend/AST.cpp - Names of AST enums and type formatting ---------===//
#include "frontend/AST.h"

#include <fmt/format.h>

namespace tessel::ast {

const char *dtypeName(DType t) {
  switch (t) {
  case DType::BF16:
    return "bf16";
  case DType::F32:
    return "f32";
  }
  return "?";
}

const char *binaryOpName(BinaryOp op) {
  switch (op) {
  case BinaryOp::Mul:
    return "*";
  case BinaryOp::Add:
    return "+";
  }
  return "?";
}

const char *unaryFnName(UnaryFn fn) {
  switch (fn) {
  case UnaryFn::Silu:
    return "silu";
  case UnaryFn::Gelu:
    return "gelu";
  case UnaryFn::Relu:
    return "relu";
  case UnaryFn::Exp:
    return "exp";
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
  return fmt::format("{}{}", dtypeName(t.dtype), formatShape(t));
}

} // namespace tessel::ast

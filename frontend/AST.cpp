//===- frontend/AST.cpp - Names of AST enums and type formatting ---------===//
#include "frontend/AST.h"

#include <fmt/format.h>

namespace tessel::ast {

const char *binaryOpName(BinaryOp op) {
  switch (op) {
  case BinaryOp::Mul: return "*";
  case BinaryOp::Add: return "+";
  case BinaryOp::Sub: return "-";
  case BinaryOp::Div: return "/";
  case BinaryOp::Lt: return "<";
  case BinaryOp::Le: return "<=";
  case BinaryOp::Gt: return ">";
  case BinaryOp::Ge: return ">=";
  case BinaryOp::Eq: return "==";
  case BinaryOp::Ne: return "!=";
  }
  return "?";
}

bool isComparison(BinaryOp op) {
  switch (op) {
  case BinaryOp::Lt:
  case BinaryOp::Le:
  case BinaryOp::Gt:
  case BinaryOp::Ge:
  case BinaryOp::Eq:
  case BinaryOp::Ne:
    return true;
  default:
    return false;
  }
}

const char *reduceOpName(ReduceOp op) {
  switch (op) {
  case ReduceOp::Sum: return "sum";
  case ReduceOp::Max: return "max";
  case ReduceOp::Min: return "min";
  case ReduceOp::Mean: return "mean";
  }
  return "?";
}

const char *exprKindName(ExprKind k) {
  switch (k) {
  case ExprKind::Ref: return "Ref";
  case ExprKind::MatMul: return "MatMul";
  case ExprKind::Binary: return "Binary";
  case ExprKind::Unary: return "Unary";
  case ExprKind::Transpose: return "Transpose";
  case ExprKind::Number: return "Number";
  case ExprKind::Reduce: return "Reduce";
  case ExprKind::Call: return "Call";
  case ExprKind::Causal: return "Causal";
  case ExprKind::MergeHeads: return "MergeHeads";
  }
  return "?";
}

std::unique_ptr<Expr> Expr::clone() const {
  auto e = std::make_unique<Expr>(kind, loc);
  e->opLoc = opLoc;
  e->type = type;
  e->name = name;
  if (lhs)
    e->lhs = lhs->clone();
  if (rhs)
    e->rhs = rhs->clone();
  e->binOp = binOp;
  e->unaryFn = unaryFn;
  e->reduceOp = reduceOp;
  e->axis = axis;
  e->axisLoc = axisLoc;
  e->number = number;
  e->offset = offset;
  for (const Arg &a : args)
    e->args.push_back(Arg{a.keyword, a.keywordLoc, a.value ? a.value->clone() : nullptr});
  e->callLoc = callLoc;
  e->callee = callee;
  return e;
}

std::unique_ptr<Expr> wrapExpr(ExprKind kind, const Expr &like, std::unique_ptr<Expr> inner) {
  auto n = std::make_unique<Expr>(kind, like.loc);
  n->opLoc = like.opLoc;
  n->callLoc = like.callLoc;
  n->callee = like.callee;
  n->lhs = std::move(inner);
  return n;
}

std::string formatShape(const TensorType &t) {
  if (t.heads > 0)
    return fmt::format("[{} x {} x {}]", t.heads, t.rows, t.cols);
  return fmt::format("[{} x {}]", t.rows, t.cols);
}

std::string formatType(const TensorType &t) {
  return fmt::format("{}{}", dtypeName(t.dtype).str(), formatShape(t));
}

} // namespace tessel::ast

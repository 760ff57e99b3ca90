//===- frontend/AST.h - The typed AST of a .tsl kernel ---------*- C++ -*-===//
//
// The parser builds these nodes; Sema fills in every Expr's `type` (dtype and
// static 2-D shape) after constants are bound. TileGen consumes the typed AST.
// Every node keeps the SMLoc of its first token for diagnostics.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_FRONTEND_AST_H
#define TESSEL_FRONTEND_AST_H

#include "llvm/Support/SMLoc.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tessel::ast {

enum class DType { BF16, F32 };
const char *dtypeName(DType t);

/// A dimension as written: an integer literal or the name of a constant.
struct DimExpr {
  std::string constName; // empty for a literal
  int64_t literal = 0;
  llvm::SMLoc loc;
};

/// The static type of a value: every value of the DSL is a 2-D matrix.
struct TensorType {
  DType dtype = DType::BF16;
  int64_t rows = 0, cols = 0;
};

enum class ExprKind { Ref, MatMul, Binary, Unary, Transpose };
enum class BinaryOp { Mul, Add };
enum class UnaryFn { Silu, Gelu, Relu, Exp };
const char *binaryOpName(BinaryOp op);
const char *unaryFnName(UnaryFn fn);

struct Expr {
  ExprKind kind;
  llvm::SMLoc loc;
  TensorType type; // filled by Sema

  // Ref: the name of a kernel parameter or of an earlier assignment.
  std::string name;
  // MatMul (lhs @ rhs), Binary (lhs op rhs): both operands. Unary/Transpose: lhs only.
  std::unique_ptr<Expr> lhs, rhs;
  BinaryOp binOp = BinaryOp::Mul;
  UnaryFn unaryFn = UnaryFn::Silu;

  explicit Expr(ExprKind k, llvm::SMLoc l) : kind(k), loc(l) {}
};

struct Param {
  std::string name;
  DType dtype = DType::BF16;
  DimExpr rows, cols;
  TensorType type; // filled by Sema
  llvm::SMLoc loc;
};

/// `name = expr` or `return expr` (name empty).
struct Stmt {
  std::string name;
  std::unique_ptr<Expr> value;
  llvm::SMLoc loc;
  bool isReturn() const { return name.empty(); }
};

struct Kernel {
  std::string name;
  std::vector<Param> params;
  DType resultDType = DType::BF16;
  DimExpr resultRows, resultCols;
  TensorType resultType; // filled by Sema
  std::vector<Stmt> body; // the last statement is the return
  llvm::SMLoc loc;
};

struct Const {
  std::string name;
  int64_t value = 0;
  llvm::SMLoc loc;
};

struct Module {
  std::vector<Const> consts;
  std::vector<Kernel> kernels;
};

} // namespace tessel::ast

#endif

//===- frontend/AST.h - The typed AST of a .tsl kernel ---------*- C++ -*-===//
//
// The parser builds these nodes; Sema fills in every Expr's `type` (dtype and
// static 2-D shape) after constants are bound. TileGen consumes the typed AST.
// Every node keeps the SMLoc of its first token for diagnostics.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_FRONTEND_AST_H
#define TESSEL_FRONTEND_AST_H

#include "support/Activation.h"
#include "support/DType.h"

#include "llvm/Support/SMLoc.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tessel::ast {

// Dtypes and the DSL's unary functions come from the registries
// (support/DTypes.def, support/Activations.def: the entries marked IN_DSL).
using tessel::ActFn;
using tessel::DType;
using tessel::actFnName;
using tessel::dtypeName;

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

  bool operator==(const TensorType &o) const {
    return dtype == o.dtype && rows == o.rows && cols == o.cols;
  }
  bool operator!=(const TensorType &o) const { return !(*this == o); }
};

/// `[4096 x 7168]`: the shape alone, as in "inner dimensions differ" errors.
std::string formatShape(const TensorType &t);
/// `bf16[4096 x 7168]`: dtype and shape, as printed by --emit=ast and errors.
std::string formatType(const TensorType &t);

/// The largest dimension the language accepts (2^24), so that element and
/// byte counts of any value fit comfortably in int64.
constexpr int64_t kMaxDim = int64_t(1) << 24;

enum class ExprKind { Ref, MatMul, Binary, Unary, Transpose };
enum class BinaryOp { Mul, Add };
/// TileGen's spelling of ActFn, until it switches over.
using UnaryFn = ActFn;
const char *binaryOpName(BinaryOp op);

const char *exprKindName(ExprKind k);

struct Expr {
  ExprKind kind;
  llvm::SMLoc loc;   // first token of the expression
  llvm::SMLoc opLoc; // the operator token (`@`, `*`, `+`, `.T`, function name); == loc for Ref
  TensorType type; // filled by Sema

  // Ref: the name of a kernel parameter or of an earlier assignment.
  std::string name;
  // MatMul (lhs @ rhs), Binary (lhs op rhs): both operands. Unary/Transpose: lhs only.
  std::unique_ptr<Expr> lhs, rhs;
  BinaryOp binOp = BinaryOp::Mul;
  ActFn unaryFn = ActFn::Silu;

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

  /// The final `return` statement (Sema guarantees there is exactly one, last).
  const Stmt &returnStmt() const { return body.back(); }
};

struct Const {
  std::string name;
  int64_t value = 0;        // after Sema: the bound value (the -D override if any)
  bool overridden = false;  // set by Sema when a -D override replaced the source value
  llvm::SMLoc loc;
};

struct Module {
  std::vector<Const> consts;
  std::vector<Kernel> kernels;

  /// The kernel called `name`, or null.
  const Kernel *findKernel(const std::string &name) const {
    for (const Kernel &k : kernels)
      if (k.name == name)
        return &k;
    return nullptr;
  }
};

} // namespace tessel::ast

#endif

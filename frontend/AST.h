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

/// The static type of a value: a 2-D matrix, or `heads` of them (`bf16[H,
/// S, D]`: a leading batch/head dimension; 0 = none). Every operation applies
/// per head; rows and cols are one head's.
struct TensorType {
  DType dtype = DType::BF16;
  int64_t rows = 0, cols = 0;
  int64_t heads = 0;

  bool operator==(const TensorType &o) const {
    return dtype == o.dtype && rows == o.rows && cols == o.cols && heads == o.heads;
  }
  bool operator!=(const TensorType &o) const { return !(*this == o); }
};

/// `[4096 x 7168]` (`[8 x 128 x 64]` with heads): the shape alone, as in "inner dimensions differ" errors.
std::string formatShape(const TensorType &t);
/// `bf16[4096 x 7168]`: dtype and shape, as printed by --emit=ast and errors.
std::string formatType(const TensorType &t);

/// The largest dimension the language accepts (2^24), so that element and
/// byte counts of any value fit comfortably in int64.
constexpr int64_t kMaxDim = int64_t(1) << 24;

enum class ExprKind { Ref, MatMul, Binary, Unary, Transpose, Number, Reduce, Call, Causal, MergeHeads };
/// The elementwise binary operators: arithmetic, then the comparisons (1.0 where
/// true, 0.0 where false: a mask to multiply by).
enum class BinaryOp { Mul, Add, Sub, Div, Lt, Le, Gt, Ge, Eq, Ne };
/// The reductions along the columns (`sum(x, axis=1)`): the result is a column.
enum class ReduceOp { Sum, Max, Min, Mean };
/// TileGen's spelling of ActFn, until it switches over.
using UnaryFn = ActFn;
const char *binaryOpName(BinaryOp op);
const char *reduceOpName(ReduceOp op);
/// Comparisons bind loosest and give 0/1 masks.
bool isComparison(BinaryOp op);

const char *exprKindName(ExprKind k);

struct Expr;

/// One argument of a call: positional (`keyword` empty) or `keyword=value`.
struct Arg {
  std::string keyword;
  llvm::SMLoc keywordLoc;
  std::unique_ptr<Expr> value;
};

struct Expr {
  ExprKind kind;
  llvm::SMLoc loc;   // first token of the expression
  llvm::SMLoc opLoc; // the operator token (`@`, `*`, `+`, `.T`, function name); == loc for Ref
  TensorType type; // filled by Sema

  // Ref: the name of a kernel parameter or of an earlier assignment.
  // Call: the name of the function called.
  std::string name;
  // MatMul (lhs @ rhs), Binary (lhs op rhs): both operands. Unary/Transpose/Reduce/Causal/MergeHeads:
  // lhs only. MergeHeads (`merge_heads(x)`, x: [H, S, D]) is [S, H * D], head h in columns
  // h * D .. h * D + D - 1.
  std::unique_ptr<Expr> lhs, rhs;
  BinaryOp binOp = BinaryOp::Mul;
  ActFn unaryFn = ActFn::Silu;
  ReduceOp reduceOp = ReduceOp::Sum;
  // Reduce: the axis as written when it depends on the rank (0, 1, 2, -3:
  // Sema resolves it); -1 (the columns) otherwise.
  int64_t axis = -1;
  llvm::SMLoc axisLoc;
  // Number: the value of a literal (`0.125`, `1e-6`, `2`); typed as a 1 x 1
  // value of the other operand's dtype, applied to every element.
  double number = 0;
  // Causal (`causal(x, offset=0, fill=-1e9)`): x[i, j] where j <= i + offset,
  // `number` (the fill) elsewhere: a causal mask from indices, no mask tensor.
  int64_t offset = 0;
  // Call (before inlining, frontend/Inline.cpp): the arguments.
  std::vector<Arg> args;
  // Set on the nodes an inlined function body produced: the call (in the
  // kernel) they came from, for a note under errors inside the body.
  llvm::SMLoc callLoc;
  std::string callee;

  explicit Expr(ExprKind k, llvm::SMLoc l) : kind(k), loc(l) {}
  /// A deep copy (for inlining).
  std::unique_ptr<Expr> clone() const;
};

/// A new node of `kind` over `inner`, at `like`'s locations (and call note).
std::unique_ptr<Expr> wrapExpr(ExprKind kind, const Expr &like, std::unique_ptr<Expr> inner);

struct Param {
  std::string name;
  DType dtype = DType::BF16;
  std::optional<DimExpr> heads; // `bf16[H, S, D]`
  DimExpr rows, cols;
  TensorType type; // filled by Sema
  llvm::SMLoc loc;
};

/// `name = expr` or `return expr` (name empty).
struct Stmt {
  std::string name;
  std::unique_ptr<Expr> value;
  llvm::SMLoc loc;
  /// Made by inlining a call of `callee` at `callLoc` (a note under errors).
  llvm::SMLoc callLoc;
  std::string callee;
  bool isReturn() const { return name.empty(); }
};

struct Kernel {
  std::string name;
  std::vector<Param> params;
  DType resultDType = DType::BF16;
  std::optional<DimExpr> resultHeads;
  DimExpr resultRows, resultCols;
  TensorType resultType; // filled by Sema
  std::vector<Stmt> body; // the last statement is the return
  llvm::SMLoc loc;

  /// The final `return` statement (Sema guarantees there is exactly one, last).
  const Stmt &returnStmt() const { return body.back(); }
};

/// A parameter of a function: a value, or a number with a default (`axis=1`).
struct FnParam {
  std::string name;
  std::unique_ptr<Expr> defaultValue; // a Number, or null
  llvm::SMLoc loc;
};

/// `fn NAME(PARAMS) { STMTS; return EXPR }`: untyped, inlined at every call
/// (frontend/Inline.cpp) before Sema types the kernel. The prelude
/// (frontend/prelude.tsl) defines softmax, rmsnorm, where, ... this way.
struct Function {
  std::string name;
  std::vector<FnParam> params;
  std::vector<Stmt> body; // the last statement is the return
  llvm::SMLoc loc;
  bool fromPrelude = false;
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
  std::vector<Function> functions; // the prelude's, then the file's

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

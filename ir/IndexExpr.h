//===- ir/IndexExpr.h - Integer index expressions over loop vars -*- C++ -*-===//
//
// Loop bounds, slice starts and slice extents are small integer expressions
// over loop induction variables: constants, variables, +, -, multiplication by
// a constant, and min (partial tiles: `min(128, 647 - %m)`). Shapes are static,
// so a loop variable is the only free symbol. Expressions are immutable and
// cheap to copy (shared nodes); constructors fold constants (unless that
// overflows).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_IR_INDEXEXPR_H
#define TESSEL_IR_INDEXEXPR_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>

namespace tessel::ir {

struct Value;

class IndexExpr {
public:
  enum class Kind { Const, Var, Add, Sub, Mul, Min };

  IndexExpr() : IndexExpr(int64_t(0)) {}
  IndexExpr(int64_t c); // NOLINT: constants convert implicitly
  static IndexExpr var(const Value *v);

  Kind kind() const { return node->kind; }
  bool isConst() const { return node->kind == Kind::Const; }
  int64_t constValue() const { return node->constant; }
  const Value *varValue() const { return node->var; }
  IndexExpr lhs() const { return IndexExpr(node->lhs); }
  IndexExpr rhs() const { return IndexExpr(node->rhs); }

  friend IndexExpr operator+(const IndexExpr &a, const IndexExpr &b);
  friend IndexExpr operator-(const IndexExpr &a, const IndexExpr &b);
  friend IndexExpr operator*(const IndexExpr &a, int64_t c);
  friend IndexExpr min(const IndexExpr &a, const IndexExpr &b);

  /// Evaluates with `env[v->id]` as the value of each variable.
  int64_t eval(llvm::ArrayRef<int64_t> env) const;
  /// Like eval, but nullopt on overflow or a variable outside `env`.
  std::optional<int64_t> evalChecked(llvm::ArrayRef<int64_t> env) const;
  /// Appends each distinct variable the expression mentions.
  void collectVars(llvm::SmallVectorImpl<const Value *> &vars) const;
  bool mentions(const Value *v) const;
  /// Rewrites variable `from` into `to` everywhere.
  IndexExpr substitute(const Value *from, const IndexExpr &to) const;
  bool structurallyEqual(const IndexExpr &other) const;
  /// Collects affine sums into `c + a*%x + b*%y` (variables in order of first
  /// appearance), so `%mb + %mi - %mb` becomes `%mi`; min() operands likewise.
  IndexExpr simplified() const;
  /// Adds the expression as `constant + sum(coeff * var)` to the arguments;
  /// false when it holds a min() or the arithmetic overflows.
  bool linearForm(int64_t &constant,
                  llvm::SmallVectorImpl<std::pair<const Value *, int64_t>> &terms) const;
  /// True when linearForm succeeds: no min(), no overflow.
  bool isAffine() const;
  /// True when the expression is affine and `v` appears in it once with
  /// coefficient 1, whatever the other terms (`%k + 128`, `%kb + %k`): it
  /// advances one for one with `v`.
  bool advancesWith(const Value *v) const;

  void print(llvm::raw_ostream &os) const;
  std::string str() const;

private:
  struct Node {
    Kind kind;
    int64_t constant = 0;
    const Value *var = nullptr;
    std::shared_ptr<const Node> lhs, rhs;
  };
  explicit IndexExpr(std::shared_ptr<const Node> n) : node(std::move(n)) {}
  static IndexExpr make(Kind k, const IndexExpr &a, const IndexExpr &b);
  void printPrec(llvm::raw_ostream &os, int prec) const;

  std::shared_ptr<const Node> node;
};

inline llvm::raw_ostream &operator<<(llvm::raw_ostream &os, const IndexExpr &e) {
  e.print(os);
  return os;
}

} // namespace tessel::ir

#endif

//===- ir/IndexBounds.h - Extremes of index expressions over a loop nest -*- C++ -*-===//
//
// The verifier's symbolic check: the smallest and largest value an index
// expression takes over every iteration of a loop nest, found without
// enumerating the iterations. Loop bounds may depend on outer loop variables.
//
// An expression is first rewritten as a min of affine arms (sums distribute
// over min: `%m + min(96, 256 - %m)` is `min(%m + 96, 256)`). Loop variables
// are then eliminated innermost first: when every arm moves the same way with
// %x, the extreme over %x is at its first or last iteration, so %x is replaced
// by that bound, an expression in the outer variables. When the arms move
// opposite ways the maximum of the min is bounded by the min of the arms'
// maxima. Every result is therefore a sound bound; the iteration that reaches
// it (`iterationOf`) is a candidate the caller can evaluate to name a
// concrete failing iteration.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_IR_INDEXBOUNDS_H
#define TESSEL_IR_INDEXBOUNDS_H

#include "ir/Kernel.h"

#include "llvm/ADT/DenseMap.h"

#include <optional>

namespace tessel::ir {

struct Extreme {
  /// A bound on the expression over the nest (reached when the analysis was exact).
  int64_t value = 0;
  /// Per loop of the nest, outermost first, the iteration chosen to reach
  /// `value`, as an expression in the outer loop variables (none: the first).
  llvm::SmallVector<std::optional<IndexExpr>, 8> at;
};

class LoopNestBounds {
public:
  /// `loops`: the loops around the expressions, outermost first. Their bounds
  /// mention only loop variables of enclosing loops.
  explicit LoopNestBounds(llvm::ArrayRef<ForOp *> loops);

  /// A lower (min) or upper (max) bound of `e` over all iterations; nullopt
  /// when `e` has a shape the analysis does not handle (e.g. a subtracted
  /// min), mentions a variable outside the nest, or overflows.
  std::optional<Extreme> min(const IndexExpr &e);
  std::optional<Extreme> max(const IndexExpr &e);

  /// `e mod modulus`, when it is the same at every iteration (each variable's
  /// step times its coefficient is a multiple of the modulus).
  std::optional<int64_t> residue(const IndexExpr &e, int64_t modulus);

  /// True when `a` and `b` are provably equal at every iteration.
  bool equal(const IndexExpr &a, const IndexExpr &b);

  /// True when `loop` (one of the nest) provably never runs.
  bool neverRuns(const ForOp *loop);

  /// The iteration (one value per loop, outermost first) where `e` was
  /// found; nullopt when that is not an iteration of the nest (a bound that
  /// is not reached).
  std::optional<llvm::SmallVector<int64_t, 8>> iterationOf(const Extreme &e) const;

private:
  std::optional<Extreme> extreme(const IndexExpr &e, bool wantMax, unsigned &budget);
  std::optional<IndexExpr> lastIteration(unsigned loop);
  int loopOf(const Value *v) const;

  llvm::SmallVector<ForOp *, 8> loops;
  llvm::DenseMap<const Value *, unsigned> loopIndex;
  size_t envSize = 0;
};

} // namespace tessel::ir

#endif

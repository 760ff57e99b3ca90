//===- runtime/AccessPlan.h - Accesses planned once per program -*- C++ -*-===//
//
// Internal to the runtime. An access whose extents are all constants has the
// same tile shape in every iteration: its strides, its [P, F] shape and the
// size of the region it covers are derived once per program, and per dynamic
// instruction only two affine expressions are evaluated (the first row and
// the first column, which give the element offset). When every start stays
// in bounds over the ranges of the loops around the instruction, the
// per-iteration bounds check is not needed either. Accesses with a `min`
// extent or a size that depends on a loop variable are evaluated by the
// simulator's checked path (Simulator.cpp, makeView), as every access was
// before.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_ACCESSPLAN_H
#define TESSEL_RUNTIME_ACCESSPLAN_H

#include "runtime/Program.h"
#include "runtime/TileView.h"

#include <cstdint>
#include <vector>

namespace tessel::runtime {

/// Row-major strides, in elements, of an object of `shape` (at most MaxDims
/// dimensions are looked at).
void rowMajorStrides(const std::vector<int64_t> &shape, int64_t *stride);

/// Sets the tile shape of `v` (P, pStride, the coalesced free dimensions, F,
/// contig) from the extents of an access's dimensions, `isIndex` marking the
/// dropped ones.
void setTileShape(TileView &v, int rank, const int64_t *extent, const bool *isIndex, const int64_t *stride);

/// The tile shape of an access pattern (Access::pattern, at most MaxDims
/// dimensions), from the object's strides.
void setPatternShape(TileView &v, const Access &a, const int64_t *stride);

/// An affine form of at most MaxTerms loop variables, held inline (no
/// pointer to follow on every evaluation).
struct FlatAffine {
  static constexpr int MaxTerms = 4;
  int64_t constant = 0;
  uint32_t n = 0;
  uint32_t var[MaxTerms] = {};
  int64_t coeff[MaxTerms] = {};
  /// False if `e` has more than MaxTerms terms.
  bool assign(const AffineExpr &e);
  int64_t eval(const int64_t *vars) const {
    // Wrapping arithmetic, as AffineExpr::eval.
    uint64_t v = uint64_t(constant);
    for (uint32_t i = 0; i < n; ++i)
      v += uint64_t(coeff[i]) * uint64_t(vars[var[i]]);
    return int64_t(v);
  }
};

/// One access of one instruction, planned.
struct AccessPlan {
  /// Every extent constant: the view's shape is fixed and the fields below hold.
  bool fixedShape = false;
  /// Also every start in bounds for every iteration, and both forms below
  /// fit a FlatAffine: no check is needed.
  bool inBounds = false;
  FlatAffine row0; ///< first row (partition) of the region
  FlatAffine col0; ///< first element of the region's flattened inner dimensions
  int64_t rows = 0, cols = 0; ///< region size: rows x inner elements
  int64_t rowStride = 0;      ///< the element offset is row0 * rowStride + col0
};

/// The plans of every access of a program: instruction `i`'s destination is
/// at index first(i), its sources follow.
class AccessPlans {
public:
  explicit AccessPlans(const Program &P);
  uint32_t first(uint32_t instr) const { return firstOf[instr]; }
  const AccessPlan &operator[](uint32_t index) const { return plans[index]; }
  size_t size() const { return plans.size(); }
  /// A view of every access with the shape of its plan filled in.
  std::vector<TileView> shapedViews() const { return views; }

private:
  std::vector<uint32_t> firstOf;
  std::vector<AccessPlan> plans;
  std::vector<TileView> views;
};

} // namespace tessel::runtime

#endif

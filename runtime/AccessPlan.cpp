//===- runtime/AccessPlan.cpp - Accesses planned once per program ----------===//
#include "runtime/AccessPlan.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>

namespace tessel::runtime {

void rowMajorStrides(const std::vector<int64_t> &shape, int64_t *stride) {
  int64_t s = 1;
  for (int d = std::min(int(shape.size()), MaxDims) - 1; d >= 0; --d) {
    stride[d] = s;
    s *= shape[d];
  }
}

void setTileShape(TileView &v, int rank, const int64_t *extent, const bool *isIndex, const int64_t *stride) {
  v.P = 1;
  v.pStride = 0;
  v.nf = 0;
  v.F = 1;
  bool first = true;
  for (int d = 0; d < rank; ++d) {
    if (isIndex[d])
      continue;
    if (first) {
      v.P = extent[d];
      v.pStride = stride[d];
      first = false;
    } else {
      v.fSize[v.nf] = extent[d];
      v.fStride[v.nf] = stride[d];
      ++v.nf;
      v.F *= extent[d];
    }
  }
  // Coalesce free dimensions that are contiguous with each other.
  int out = 0;
  for (int i = 0; i < v.nf; ++i) {
    if (out > 0 && v.fStride[out - 1] == v.fSize[i] * v.fStride[i]) {
      v.fSize[out - 1] *= v.fSize[i];
      v.fStride[out - 1] = v.fStride[i];
    } else {
      v.fSize[out] = v.fSize[i];
      v.fStride[out] = v.fStride[i];
      ++out;
    }
  }
  v.nf = out;
  v.contig = v.nf == 0 ? 1 : (v.fStride[v.nf - 1] == 1 ? v.fSize[v.nf - 1] : 1);
}

void setPatternShape(TileView &v, const Access &a, const int64_t *stride) {
  int64_t extent[MaxDims] = {}, step[MaxDims] = {};
  bool isIndex[MaxDims] = {};
  const int n = std::min(int(a.pattern.size()), MaxDims);
  for (int i = 0; i < n; ++i) {
    extent[i] = a.pattern[size_t(i)].extent;
    step[i] = stride[a.pattern[size_t(i)].dim] * a.pattern[size_t(i)].step;
  }
  setTileShape(v, n, extent, isIndex, step);
}

bool FlatAffine::assign(const AffineExpr &e) {
  *this = FlatAffine();
  constant = e.constant;
  if (e.terms.size() > size_t(MaxTerms))
    return false;
  n = uint32_t(e.terms.size());
  for (size_t i = 0; i < e.terms.size(); ++i) {
    var[i] = e.terms[i].first;
    coeff[i] = e.terms[i].second;
  }
  return true;
}

namespace {

/// The loops around each instruction, outermost first.
struct Enclosing {
  const Program &P;
  std::vector<std::vector<uint32_t>> loops;
  std::vector<uint8_t> places; ///< how many places of the body hold the instruction
  std::vector<uint32_t> stack;

  explicit Enclosing(const Program &P) : P(P), loops(P.instrs.size()), places(P.instrs.size(), 0) {
    walk(P.body);
  }
  void walk(const std::vector<Stmt> &body) {
    for (const Stmt &s : body) {
      if (s.kind == Stmt::Kind::Instr) {
        loops[s.id] = stack;
        places[s.id] = uint8_t(std::min(2, places[s.id] + 1));
      } else if (s.kind == Stmt::Kind::For) {
        stack.push_back(s.id);
        walk(P.loops[s.id].body);
        stack.pop_back();
      }
    }
  }
};

/// Whether `e` stays in [lo, hi] for every value its variables take in the
/// loops `around` (false if it uses another variable).
bool staysWithin(const Program &P, const AffineExpr &e, const std::vector<uint32_t> &around, int64_t lo, int64_t hi) {
  __int128 least = e.constant, most = e.constant;
  for (const auto &[var, coeff] : e.terms) {
    if (var >= P.varLoop.size() || !llvm::is_contained(around, P.varLoop[var]))
      return false;
    const Loop &l = P.loops[P.varLoop[var]];
    __int128 first = l.lo, last = __int128(l.lo) + __int128(l.tripCount() - 1) * l.step;
    __int128 a = first * coeff, b = last * coeff;
    least += std::min(a, b);
    most += std::max(a, b);
  }
  return least >= lo && most <= hi;
}

/// Whether an instruction inside `around` never executes.
bool neverRuns(const Program &P, const std::vector<uint32_t> &around) {
  return llvm::any_of(around, [&](uint32_t l) { return P.loops[l].tripCount() == 0; });
}

} // namespace

AccessPlans::AccessPlans(const Program &P) {
  Enclosing enclosing(P);
  auto plan = [&](const Access &a, uint32_t instr) {
    AccessPlan p;
    TileView v;
    v.isBuffer = a.isBuffer();
    v.id = a.id;
    const std::vector<int64_t> &shape = a.isTensor() ? P.tensors[a.id].shape : P.buffers[a.id].shape;
    const int rank = int(shape.size());
    int64_t stride[MaxDims] = {}, extent[MaxDims] = {};
    bool isIndex[MaxDims] = {};
    p.fixedShape = rank <= MaxDims && a.dims.size() == size_t(rank);
    for (int d = 0; p.fixedShape && d < rank; ++d) {
      const DimAccess &da = a.dims[d];
      isIndex[d] = da.isIndex;
      extent[d] = da.isIndex ? 1 : da.extent.size.constant;
      p.fixedShape = (da.isIndex || (da.extent.size.isConstant() && !da.extent.hasMin)) && extent[d] > 0 &&
                     extent[d] <= shape[d];
    }
    if (p.fixedShape) {
      rowMajorStrides(shape, stride);
      if (a.pattern.empty())
        setTileShape(v, rank, extent, isIndex, stride);
      else
        setPatternShape(v, a, stride);
      p.rows = extent[0];
      p.rowStride = stride[0];
      p.cols = 1;
      AffineExpr col0;
      for (int d = 1; d < rank; ++d) {
        col0.add(a.dims[d].start, stride[d]);
        p.cols += (extent[d] - 1) * stride[d];
      }
      const bool flat = p.row0.assign(a.dims[0].start) && p.col0.assign(col0);
      const std::vector<uint32_t> &around = enclosing.loops[instr];
      p.inBounds = flat && enclosing.places[instr] == 1;
      if (p.inBounds && !neverRuns(P, around))
        for (int d = 0; d < rank && p.inBounds; ++d)
          p.inBounds = staysWithin(P, a.dims[d].start, around, 0, shape[d] - extent[d]);
    }
    plans.push_back(std::move(p));
    views.push_back(v);
  };
  for (uint32_t i = 0; i < P.instrs.size(); ++i) {
    firstOf.push_back(uint32_t(plans.size()));
    plan(P.instrs[i].dst, i);
    for (const Access &a : P.instrs[i].srcs)
      plan(a, i);
  }
}

} // namespace tessel::runtime

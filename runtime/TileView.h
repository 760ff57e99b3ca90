//===- runtime/TileView.h - 2-D views of tensors and buffer slots -*- C++ -*-===//
//
// Internal to the runtime. An access of an instruction, evaluated for the
// current loop iteration, as a [P, F] tile of the object's element storage
// (partitions or rows x flattened free elements) plus the region it covers
// for the timing model. Shared by the numeric executor and the scheduler.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_TILEVIEW_H
#define TESSEL_RUNTIME_TILEVIEW_H

#include "runtime/RegionTracker.h"

#include <algorithm>
#include <cstdint>

namespace tessel::runtime {

constexpr int MaxDims = 8;

/// A 2-D tile view [P, F] of an object's element storage.
struct TileView {
  int64_t base = 0;
  int64_t P = 1, pStride = 0;
  int nf = 0;
  int64_t fSize[MaxDims] = {}, fStride[MaxDims] = {};
  int64_t F = 1;
  int64_t contig = 1; ///< elements of the innermost contiguous run
  Rect rect;
  uint32_t obj = 0;   ///< tracker index
  bool isBuffer = false;
  uint32_t id = 0;    ///< tensor or buffer id
};

/// One innermost run of a view: the forEachRun arguments.
struct Run {
  int64_t off, lin, len, stride;
};

/// Calls fn(offset, linearIndex, length, stride) for every innermost run of
/// the view (row-major order of the tile): bulk operations on contiguous runs.
template <class Fn> inline void forEachRun(const TileView &v, Fn fn) {
  int64_t idx[MaxDims] = {};
  int64_t lin = 0;
  const int nf = v.nf;
  const int64_t inner = nf ? v.fSize[nf - 1] : 1;
  const int64_t innerStride = nf ? v.fStride[nf - 1] : 1;
  for (int64_t p = 0; p < v.P; ++p) {
    int64_t rowBase = v.base + p * v.pStride;
    if (nf <= 1) {
      fn(rowBase, lin, inner, innerStride);
      lin += inner;
      continue;
    }
    std::fill(idx, idx + MaxDims, 0);
    for (;;) {
      int64_t off = rowBase;
      for (int d = 0; d + 1 < nf; ++d)
        off += idx[d] * v.fStride[d];
      fn(off, lin, inner, innerStride);
      lin += inner;
      int d = nf - 2;
      while (d >= 0) {
        if (++idx[d] < v.fSize[d])
          break;
        idx[d] = 0;
        --d;
      }
      if (d < 0)
        break;
    }
  }
}

/// True when every row of the view is one contiguous run (a plain 2-D
/// matrix with leading dimension pStride): BLAS can use it in place.
inline bool isMatrix(const TileView &v) { return v.nf == 0 || (v.nf == 1 && v.fStride[0] == 1); }

/// A DMA may move a [g*P, F] region of a tensor to or from a [P, g*F] buffer
/// tile (several partition groups of a folded buffer in one transfer): tensor
/// row r is partition r mod P, group r div P (docs/tasm.md). Rewrites the
/// tensor view `t` as the equivalent [P, g, F] view and returns true when
/// the shapes are of that form (the region, `rect`, is unchanged).
inline bool foldRowsOntoPartitions(TileView &t, const TileView &buffer) {
  const int64_t P = buffer.P;
  if (P <= 0 || t.P <= P || t.P % P != 0 || t.nf + 1 > MaxDims)
    return false;
  const int64_t groups = t.P / P;
  if (buffer.F != groups * t.F)
    return false;
  for (int d = t.nf; d > 0; --d) {
    t.fSize[d] = t.fSize[d - 1];
    t.fStride[d] = t.fStride[d - 1];
  }
  t.fSize[0] = groups;
  t.fStride[0] = P * t.pStride;
  ++t.nf;
  t.P = P;
  t.F *= groups;
  return true;
}

} // namespace tessel::runtime

#endif

//===- passes/ColumnJam.cpp - Several column blocks per contraction step --===//
//
// widen-columns' second form (the first, two blocks' whole K column held in
// SBUF, is passes/WidenColumns.cpp). A column loop of step B (one PSUM bank
// of accumulators) runs g of its blocks per iteration, unrolled and jammed:
// the blocks' accumulators are all live, and each contraction step loads
// one [P, g B] tile, g x B x 2 bytes per partition in one run, feeding g
// matmuls:
//
//   for %n = 0 to N step g B {
//     %acc, %acc1, ... (g accumulators)
//     for %k = 0 to K step 128 {
//       %W_tile = alloc sbuf<bf16, [K:128, N:g B]> bufs 2
//       dma %W_tile[0 +: 128, 0 +: g B] <- %W[%k +: 128, %n +: g B]
//       ... block 0's body, reading %W_tile[0 +: 128, 0 +: B] ...
//       ... block 1's body, %n + B, reading %W_tile[0 +: 128, B +: B] ...
//     }
//     ... the g blocks' evictions ...
//   }
//
// A DMA's efficiency grows with the run each partition's bytes come in
// (runtime/DmaModel.h: 1 KiB 80%, 4 KiB 94%, 8 KiB 97%), so where a kernel
// streams its weights (decode-sized M) this is the difference between 1.25x
// and 1.10x the streaming bound. Unlike the whole-column form it needs no
// SBUF beyond the wider tile, so it applies at any K; it needs PSUM for g
// accumulators. Interleaving the blocks reorders their instructions, so the
// loop's iterations must be independent (ir/LoopDeps.h).
//
// In a kernel bound by its DMAs (`streaming`) the tensor engine waits for
// every tile anyway, so the accumulators keep one copy each (g = 8 fills the
// 8 PSUM banks; the next group's first matmul waiting for an eviction costs
// nothing the loads do not already cost), and the wide tile gets one copy
// per queue its load rotates over (policy::kMaxPrefetch): with fewer, the
// dma_fixed_latency_ns of each transfer is not hidden behind the others
// (on trn2, g = 4: 491.5 us with 2 copies, 407.6 us with 4, bound 370 us).
// Where the tensor engine is the bottleneck, a single-copy accumulator
// would stall it at every group's eviction, which the cost model does not
// see: there the copies stay, and g is what PSUM holds with them.
//
//===----------------------------------------------------------------------===//
#include "passes/ColumnJam.h"
#include "passes/Policy.h"

#include "ir/Builder.h"
#include "ir/Clone.h"
#include "ir/LoopDeps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Casting.h"

#include <algorithm>

namespace tessel::passes {
namespace {

using namespace ir;

/// The wide tile that replaces one of the loop's [P, B] tiles.
struct Wide {
  Value *tile;
};

/// A copy of `op` as block j of the group: fresh values through `map`, the
/// block's columns at %n + j B, the tiles read at column offset j B of their
/// wide tile.
std::unique_ptr<Op> blockCopy(const Op &op, Kernel &kernel, ValueMap &map, const Value *nIv, int64_t offset,
                              const llvm::DenseMap<const Value *, Wide> &wide) {
  std::unique_ptr<Op> copy = cloneOp(op, kernel, map);
  if (offset != 0)
    substituteInOp(*copy, nIv, (IndexExpr::var(nIv) + IndexExpr(offset)).simplified());
  walkOp(*copy, [&](Op &o) {
    llvm::SmallVector<Access *, 4> accesses = o.reads();
    accesses.append(o.writes());
    for (Access *a : accesses)
      if (auto it = wide.find(a->base); it != wide.end()) {
        a->base = it->second.tile;
        a->indices[1].start = (a->indices[1].start + IndexExpr(offset)).simplified();
      }
  });
  return copy;
}

/// The tail of a loop whose trips are not a multiple of g: a copy running
/// its last blocks as they were, and the loop cut before them.
std::unique_ptr<Op> splitTail(Kernel &kernel, ForOp &nLoop, int64_t g) {
  const int64_t trips = nLoop.constTripCount();
  if (trips % g == 0)
    return nullptr;
  ValueMap map;
  std::unique_ptr<Op> tail = cloneOp(nLoop, kernel, map);
  const int64_t split = nLoop.lo.constValue() + trips / g * g * nLoop.step;
  llvm::cast<ForOp>(*tail).lo = IndexExpr(split);
  nLoop.hi = IndexExpr(split);
  return tail;
}

} // namespace

bool canJamColumns(const ColumnLoop &c, int64_t g) {
  if (g < 2 || c.tiles.empty() || c.nLoop->constTripCount() < g)
    return false;
  const ForOp *k = c.tiles.front().kLoop;
  return llvm::all_of(c.tiles, [&](const ColumnTile &t) { return t.kLoop == k; }) &&
         iterationsIndependent(*c.nLoop);
}

void jamColumns(Kernel &kernel, Block &parent, const ColumnLoop &c, int64_t g, bool streaming) {
  ForOp &nLoop = *c.nLoop;
  ForOp &kLoop = *c.tiles.front().kLoop;
  const int64_t B = nLoop.step, P = kernel.geometry.partitions;
  std::unique_ptr<Op> tail = splitTail(kernel, nLoop, g);

  // The column loop's body around the contraction loop, and the contraction
  // loop's body without the tiles' allocs and loads.
  std::vector<std::unique_ptr<Op>> pre, post, kRest;
  bool seenK = false;
  for (auto &op : nLoop.body.ops) {
    if (op.get() == &kLoop) {
      seenK = true;
      continue;
    }
    (seenK ? post : pre).push_back(std::move(op));
  }
  llvm::DenseMap<const Value *, Wide> wide;
  std::vector<std::unique_ptr<Op>> kHead;
  for (const ColumnTile &t : c.tiles) {
    const TensorType &tt = t.alloc->result->type;
    Block scratch;
    Value *w = appendAlloc(kernel, scratch, t.alloc->result->name + "_wide", MemSpace::SBUF, tt.dtype,
                           {tt.dims[0], {tt.dims[1].label, g * B}},
                           streaming ? std::max(t.alloc->bufs, policy::kMaxPrefetch) : t.alloc->bufs, t.alloc->loc);
    wide[t.alloc->result] = {w};
    IndexExpr rows = *t.load->dst.indices[0].extent; // P, or the partial last tile's min(P, K - %k)
    t.load->dst = makeAccess(w, {{IndexExpr(0), rows}, {IndexExpr(0), IndexExpr(g * B)}});
    t.load->src.indices[1].extent = IndexExpr(g * B);
    kHead.push_back(std::move(scratch.ops.front()));
  }
  for (auto &op : kLoop.body.ops) {
    bool isTile = llvm::any_of(c.tiles, [&](const ColumnTile &t) { return op.get() == t.alloc; });
    bool isLoad = llvm::any_of(c.tiles, [&](const ColumnTile &t) { return op.get() == t.load; });
    if (isLoad)
      kHead.push_back(std::move(op));
    else if (!isTile)
      kRest.push_back(std::move(op));
  }

  std::vector<std::unique_ptr<Op>> body, kBody = std::move(kHead), after;
  for (int64_t j = 0; j < g; ++j) {
    ValueMap map;
    for (auto &op : pre) {
      body.push_back(blockCopy(*op, kernel, map, nLoop.iv, j * B, wide));
      if (auto *a = llvm::dyn_cast<AllocOp>(body.back().get()); a && streaming && a->result->type.space == MemSpace::PSUM)
        a->bufs = 1;
    }
    for (auto &op : kRest)
      kBody.push_back(blockCopy(*op, kernel, map, nLoop.iv, j * B, wide));
    for (auto &op : post)
      after.push_back(blockCopy(*op, kernel, map, nLoop.iv, j * B, wide));
  }
  kLoop.body.ops = std::move(kBody);
  // The contraction loop moves from the old body (about to be replaced).
  std::unique_ptr<Op> kOwned;
  for (auto &op : nLoop.body.ops)
    if (op.get() == &kLoop)
      kOwned = std::move(op);
  body.push_back(std::move(kOwned));
  for (auto &op : after)
    body.push_back(std::move(op));
  nLoop.body.ops = std::move(body);
  nLoop.step = g * B;
  if (!tail)
    return;
  // The last blocks, fewer than g, run together too when there are two or
  // more (a 19-block loop at g = 8: two groups of 8, one of 3).
  Block rest;
  rest.ops.push_back(std::move(tail));
  llvm::SmallVector<ColumnLoop, 1> tailLoops;
  collectColumnLoops(rest, P, tailLoops);
  const int64_t tailTrips = llvm::cast<ForOp>(*rest.ops.front()).constTripCount();
  if (tailLoops.size() == 1 && tailLoops.front().nLoop == rest.ops.front().get() &&
      canJamColumns(tailLoops.front(), tailTrips))
    jamColumns(kernel, rest, tailLoops.front(), tailTrips, streaming);
  for (size_t i = 0; i < parent.ops.size(); ++i)
    if (parent.ops[i].get() == &nLoop) {
      parent.ops.insert(parent.ops.begin() + i + 1, std::move(rest.ops.front()));
      break;
    }
}

} // namespace tessel::passes

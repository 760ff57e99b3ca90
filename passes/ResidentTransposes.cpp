//===- passes/ResidentTransposes.cpp - An argument's transpose kept in SBUF -===//
//
// implicit-transpose's last rewrite. A weight used as `W.T` (stored [out,
// in], as PyTorch's nn.Linear keeps it) that every row strip reads again
// keeps the HBM scratch TileGen wrote its transpose to (absorbInputTransposes
// reads in place only what is read once): a round trip through HBM, and a
// nest between the kernel's matmul nests that keeps siblings apart. Where
// the transpose fits a share of SBUF, the scratch becomes an SBUF buffer of
// the same layout, filled once before anything else runs:
//
//   %WT_res = alloc sbuf<bf16, [K, N]>
//   for %r = 0 to N step 128 {
//     for %c = 0 to K step 128 {
//       dma transpose %WT_res[%c +: 128, %r +: 128] <- %W[%r +: 128, %c +: 128] } }
//
// io-transpose then keeps these loads on the DMA engines or makes them wide
// plain loads of W's rows (contiguous per partition) transposed on the
// tensor engine, whichever the cost model predicts faster. Each load of a
// scratch tile (`alloc %t; dma %t <- %WT[...]`, or its fill loop) goes, its
// readers reading %WT_res at the same indices. A transposing read of the
// scratch becomes a plain read of W, as absorbInputTransposes does.
//
//===----------------------------------------------------------------------===//
#include "passes/InputTransposes.h"
#include "passes/Policy.h"
#include "passes/ResidentOperands.h"
#include "passes/WideTransposeNest.h"

#include "ir/Builder.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Casting.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

namespace tessel::passes {
namespace {

using namespace ir;

/// A plain load of scratch tiles into an SBUF tile: `alloc %t; dma %t <-
/// %WT` or `alloc %t; for %k { dma %t[..] <- %WT[..] }`, with the tile's
/// element (i, j) the scratch's (i + off[0], j + off[1]) for every trip.
struct TileLoad {
  Block *block;
  size_t allocAt, loadAt; // the load: the dma or its fill loop
  IndexExpr off[2];
};

bool writtenIn(Block &block, size_t from, const Value *t) {
  bool written = false;
  for (size_t k = from; k < block.ops.size(); ++k)
    walkOp(*block.ops[k], [&](Op &o) {
      for (Access *w : o.writes())
        written |= w->base == t;
    });
  return written;
}

/// The tile load that `dma` (a plain read of `scratch`) belongs to.
std::optional<TileLoad> tileLoad(Block &block, size_t at, const DmaOp &dma) {
  if (dma.dst.indices.size() != 2 || dma.dst.base->type.dtype != dma.src.base->type.dtype)
    return std::nullopt;
  if (at == 0 || !llvm::isa<AllocOp>(*block.ops[at - 1]))
    return std::nullopt;
  auto *alloc = llvm::cast<AllocOp>(block.ops[at - 1].get());
  if (alloc->result != dma.dst.base || writtenIn(block, at + 1, dma.dst.base))
    return std::nullopt;
  TileLoad t{&block, at - 1, at, {}};
  for (unsigned d = 0; d < 2; ++d)
    t.off[d] = (dma.src.indices[d].start - dma.dst.indices[d].start).simplified();
  return t;
}

/// Every load of `scratch`'s tiles, found from its readers; nullopt when one
/// is not a tile load (the scratch then stays).
std::optional<std::vector<TileLoad>> tileLoads(Block &block, const Value *scratch) {
  std::vector<TileLoad> loads;
  bool all = true;
  for (size_t i = 0; i < block.ops.size(); ++i) {
    Op *op = block.ops[i].get();
    if (auto *loop = llvm::dyn_cast<ForOp>(op)) {
      // A fill loop: the tile's alloc before it, the load its only op.
      auto *dma = loop->body.ops.size() == 1 ? opAt<DmaOp>(loop->body, 0) : nullptr;
      if (dma && dma->src.base == scratch && !dma->transpose) {
        std::optional<TileLoad> t = tileLoad(block, i, *dma);
        for (unsigned d = 0; t && d < 2; ++d)
          if (t->off[d].mentions(loop->iv))
            t.reset();
        if (!t)
          return std::nullopt;
        loads.push_back(*t);
        continue;
      }
      std::optional<std::vector<TileLoad>> inner = tileLoads(loop->body, scratch);
      if (!inner)
        return std::nullopt;
      loads.insert(loads.end(), inner->begin(), inner->end());
      continue;
    }
    auto *dma = llvm::dyn_cast<DmaOp>(op);
    if (!dma || dma->src.base != scratch || dma->transpose)
      continue;
    std::optional<TileLoad> t = tileLoad(block, i, *dma);
    all &= t.has_value();
    if (t)
      loads.push_back(*t);
  }
  if (!all)
    return std::nullopt;
  return loads;
}

/// The tile's readers read `held` (the scratch's layout) instead; the tile
/// and its load go.
void readHeld(const TileLoad &t, Value *held) {
  Block &b = *t.block;
  Value *tile = llvm::cast<AllocOp>(*b.ops[t.allocAt]).result;
  Block rest;
  for (size_t k = t.loadAt + 1; k < b.ops.size(); ++k)
    rest.ops.push_back(std::move(b.ops[k]));
  rewriteAccesses(rest, tile, [&](Access &a) {
    a.base = held;
    for (unsigned d = 0; d < 2; ++d)
      a.indices[d].start = (a.indices[d].start + t.off[d]).simplified();
  });
  b.ops.resize(t.allocAt);
  for (auto &op : rest.ops)
    b.ops.push_back(std::move(op));
}

/// `dma transpose %held[c +: cols, r +: rows] <- %w[r +: rows, c +: cols]`.
void appendTransposingLoad(Block &out, Value *held, Value *w, const IndexExpr &r, const IndexExpr &rows,
                           const IndexExpr &c, const IndexExpr &cols, llvm::SMLoc loc) {
  auto dma = std::make_unique<DmaOp>();
  dma->loc = loc;
  dma->transpose = true;
  dma->src = makeAccess(w, {{r, rows}, {c, cols}});
  dma->dst = makeAccess(held, {{c, cols}, {r, rows}});
  dma->src.loc = dma->dst.loc = loc;
  out.ops.push_back(std::move(dma));
}

/// The fill of `held` with `w`'s transpose, one partition-square tile per
/// load: for each partition tile of w's rows, a loop along the row in whole
/// runs of `group` tiles (what io-transpose's widest plain load takes at
/// once), one for the whole tiles left, and the partial tile.
void appendTransposedFill(Kernel &kernel, Block &out, Value *held, Value *w, int64_t group, llvm::SMLoc loc) {
  const int64_t P = kernel.geometry.partitions;
  int64_t rows = w->type.dims[0].size, cols = w->type.dims[1].size;
  ForOp &rowLoop = appendLoop(kernel, out, "r", IndexExpr(0), IndexExpr(rows), P, loc);
  IndexExpr r = IndexExpr::var(rowLoop.iv);
  IndexExpr rowExt = rows <= P ? IndexExpr(rows) : rows % P == 0 ? IndexExpr(P) : min(IndexExpr(P), IndexExpr(rows) - r);
  int64_t whole = cols / P * P, grouped = cols / (P * group) * (P * group);
  for (auto [lo, hi] : {std::pair<int64_t, int64_t>{0, grouped}, {grouped, whole}}) {
    if (hi <= lo)
      continue;
    ForOp &colLoop = appendLoop(kernel, rowLoop.body, "c", IndexExpr(lo), IndexExpr(hi), P, loc);
    appendTransposingLoad(colLoop.body, held, w, r, rowExt, IndexExpr::var(colLoop.iv), IndexExpr(P), loc);
  }
  if (whole < cols)
    appendTransposingLoad(rowLoop.body, held, w, r, rowExt, IndexExpr(whole), IndexExpr(cols - whole), loc);
}

/// SBUF holding what `scratch` holds, its partition dimension rounded up to
/// whole partition tiles when it spans several.
TensorType heldType(const Value *scratch, int64_t P) {
  TensorType t = scratch->type;
  t.space = MemSpace::SBUF;
  if (t.dims[0].size > P)
    t.dims[0].size = (t.dims[0].size + P - 1) / P * P;
  return t;
}

/// The position after the kernel's leading views (a transposed argument
/// may be read through one).
size_t afterViews(const Kernel &kernel) {
  size_t i = 0;
  while (i < kernel.body.ops.size() && llvm::isa<ViewOp>(*kernel.body.ops[i]))
    ++i;
  return i;
}

/// The scratch's nest rebuilt in wide loads and stores where the argument
/// has a whole block (passes/WideTransposeNest.h); the top-level ops that
/// now write the scratch.
std::vector<const Op *> widenTransposeNest(Kernel &kernel, const ArgumentTranspose &t) {
  auto &body = kernel.body.ops;
  Block wide;
  if (!buildWideTransposeNest(kernel, t.arg, t.scratch, body[t.writerAt]->loc, wide))
    return {body[t.writerAt].get()};
  std::vector<const Op *> ops;
  for (auto &op : wide.ops)
    ops.push_back(op.get());
  body.erase(body.begin() + t.writerAt);
  body.insert(body.begin() + t.writerAt, std::make_move_iterator(wide.ops.begin()),
              std::make_move_iterator(wide.ops.end()));
  kernel.notes.push_back(llvm::formatv("[implicit-transpose] %{0}.T does not fit SBUF's share: its scratch "
                                       "is written first, in loads and stores of {1} partition tiles",
                                       t.arg->name, kernel.geometry.maxMoving / kernel.geometry.partitions)
                             .str());
  return ops;
}

/// Moves the top-level `ops` to the front of the kernel, keeping their
/// order; true if that changed the kernel.
bool hoistToFront(Kernel &kernel, llvm::ArrayRef<const Op *> ops) {
  auto &body = kernel.body.ops;
  auto first = body.begin() + afterViews(kernel);
  auto isHoisted = [&](const std::unique_ptr<Op> &op) { return llvm::is_contained(ops, op.get()); };
  if (std::all_of(first, first + ops.size(), isHoisted))
    return false;
  std::stable_partition(first, body.end(), isHoisted);
  return true;
}

} // namespace

bool keepArgumentTransposesResident(Kernel &kernel) {
  const int64_t P = kernel.geometry.partitions;
  const int64_t budget = int64_t(double(kernel.geometry.sbufBytes) * policy::kResidentTransposeShare);
  const int64_t group = std::max<int64_t>(1, kernel.geometry.maxMoving / P);
  int64_t used = 0;
  Block fills;
  std::vector<const Op *> gone, hoisted;
  for (size_t i = 0; i < kernel.body.ops.size(); ++i) {
    std::optional<ArgumentTranspose> t = matchArgumentTranspose(kernel, i);
    if (!t)
      continue;
    TensorType type = heldType(t->scratch, P);
    int64_t bytes = type.bytesPerPartition(P);
    std::optional<std::vector<TileLoad>> loads = tileLoads(kernel.body, t->scratch);
    // The scratch may hold the transpose of part of the argument only (one
    // head's rows): then its nest stays as it is, only hoisted.
    const auto &sd = t->scratch->type.dims, &ad = t->arg->type.dims;
    bool whole = sd[0].size == ad[1].size && sd[1].size == ad[0].size;
    if (!whole || !loads || used + bytes > budget) {
      hoisted.push_back(kernel.body.ops[t->allocAt].get());
      if (whole)
        for (const Op *op : widenTransposeNest(kernel, *t))
          hoisted.push_back(op);
      else
        hoisted.push_back(kernel.body.ops[t->writerAt].get());
      continue;
    }
    used += bytes;
    llvm::SMLoc loc = kernel.body.ops[t->writerAt]->loc;
    Value *held = appendAlloc(kernel, fills, t->arg->name + "T_res", MemSpace::SBUF, type.dtype, type.dims, 1, loc);
    appendTransposedFill(kernel, fills, held, t->arg, group, loc);
    // The transposing readers first: readHeld deletes the plain ones, which
    // t->readers lists too.
    for (const ScratchReader &r : t->readers)
      if (r.dma->transpose)
        readArgumentTransposed(r, *t);
    for (auto it = loads->rbegin(); it != loads->rend(); ++it)
      readHeld(*it, held);
    gone.push_back(kernel.body.ops[t->allocAt].get());
    gone.push_back(kernel.body.ops[t->writerAt].get());
    kernel.notes.push_back(llvm::formatv("[implicit-transpose] %{0}.T held in SBUF ({1:F1} KiB per partition), "
                                         "transposed once at the start: no HBM scratch",
                                         t->arg->name, bytes / 1024.0)
                               .str());
  }
  // A scratch that stays is written first: its nest reads only an argument,
  // and between the kernel's nests it would keep siblings apart.
  bool moved = hoistToFront(kernel, hoisted);
  if (gone.empty())
    return moved;
  llvm::erase_if(kernel.body.ops, [&](const std::unique_ptr<Op> &op) { return llvm::is_contained(gone, op.get()); });
  kernel.body.ops.insert(kernel.body.ops.begin() + afterViews(kernel), std::make_move_iterator(fills.ops.begin()),
                         std::make_move_iterator(fills.ops.end()));
  return true;
}

} // namespace tessel::passes

//===- passes/WidenElementwise.cpp - Wider tiles for elementwise loops ----===//
//
// `widen-elementwise` walks the column loops of elementwise work (a residual
// add, a norm's scaling, an activation) in wider tiles. TileGen walks every
// nest's columns in tiles of the tensor engine's moving width (512), which a
// matmul's PSUM bank needs but an elementwise loop does not:
//
//   for %n = 0 to 2048 step 512 {
//     %X_tile = alloc sbuf<bf16, [M:128, N:512]> bufs 4
//     dma %X_tile[0 +: 128, 0 +: 512] <- %X[%m +: 128, %n +: 512]
//     ... tensor_tensor / tensor_scalar / activation / copy on the tiles ...
//     dma %out[%m +: 128, %n +: 512] <- %out_tile[0 +: 128, 0 +: 512]
//   }
//
// Each partition's bytes of such a transfer are one run of 512 x 2 = 1 KiB,
// at ~80% of the DMA engines' rate (runtime/DmaModel.h), and every tile pays
// a transfer's fixed cost. The pass makes the loop step g x 512 and every
// tile of the loop g times wider, with g the smallest divisor of the trip
// count whose transfers reach policy::kWideLoadShare of the throughput of
// one transfer of the whole row (the target's DMA model decides, as in
// widen-loads), while SBUF holds the wider tiles with the block planner's
// headroom. The loop qualifies when its body is only SBUF tile allocations,
// plain loads and stores between HBM and SBUF, and tensor_tensor,
// tensor_scalar, activation (without a row accumulator) and copy ops, whose
// every access is a tile of the loop ([P, 0 +: e]), a strip or HBM tensor
// walked by the loop's columns ([.., %n +: e]) or a column not moving with
// it ([P, 1]); e is the loop's step, or min(step, N - %n) at a partial last
// tile. Reductions, matmuls (a PSUM bank) and nested loops keep their tiles.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"
#include "passes/Policy.h"
#include "passes/analysis/KernelCost.h"
#include "runtime/Timing.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/Casting.h"

#include <optional>

namespace tessel::passes {
namespace {

using namespace ir;

/// What the loop's accesses need rewritten: the tiles it allocates, and
/// every column extent that is the loop's step.
struct ElementwiseLoop {
  llvm::SmallVector<AllocOp *, 4> tiles;
  llvm::SmallVector<Index *, 16> extents;
  llvm::SmallVector<int64_t, 4> runBytes; ///< a transfer's bytes per partition, per load or store
};

/// Whether `e` is the tile extent of a loop of step `w`: w itself, or
/// min(w, ...) at a partial last tile.
bool isTileExtent(const IndexExpr &e, int64_t w) {
  if (e.isConst())
    return e.constValue() == w;
  return e.kind() == IndexExpr::Kind::Min && e.lhs().isConst() && e.lhs().constValue() == w;
}

bool isElementwise(const Op &op) {
  if (const auto *act = llvm::dyn_cast<ActivationOp>(&op))
    return !act->accumulator;
  return llvm::isa<TensorTensorOp, TensorScalarOp, CopyOp, DmaOp, AllocOp>(op);
}

/// Classifies one access of the loop's body; false when its columns do not
/// follow one of the shapes the pass rewrites.
bool addAccess(ElementwiseLoop &out, Access &a, const ForOp &loop, const llvm::SmallPtrSetImpl<const Value *> &tiles) {
  if (a.isPattern() || a.indices.size() != 2 || a.base->type.space == MemSpace::PSUM)
    return false;
  Index &row = a.indices[0], &col = a.indices[1];
  if (row.start.mentions(loop.iv) || (row.extent && row.extent->mentions(loop.iv)))
    return false;
  if (!col.isRange())
    return !col.start.mentions(loop.iv);
  const int64_t w = loop.step;
  if (tiles.count(a.base)) {
    // A tile of the loop: its columns from 0.
    if (!col.start.isConst() || col.start.constValue() != 0 || !isTileExtent(*col.extent, w))
      return false;
  } else if (col.start.advancesWith(loop.iv)) {
    if (!isTileExtent(*col.extent, w))
      return false;
  } else {
    // A [P, 1] column (a row's scale) that stays put.
    return !col.start.mentions(loop.iv) && col.extent->isConst() && col.extent->constValue() == 1;
  }
  out.extents.push_back(&col);
  return true;
}

/// The loop's rewrite, when it is an elementwise column loop.
std::optional<ElementwiseLoop> matchLoop(ForOp &loop) {
  if (!loop.lo.isConst() || !loop.hi.isConst() || loop.constTripCount() < 2)
    return std::nullopt;
  ElementwiseLoop out;
  llvm::SmallPtrSet<const Value *, 8> tiles;
  for (auto &op : loop.body.ops) {
    if (!isElementwise(*op))
      return std::nullopt;
    if (auto *alloc = llvm::dyn_cast<AllocOp>(op.get())) {
      const TensorType &t = alloc->result->type;
      if (t.space != MemSpace::SBUF || t.dims.size() != 2 || t.dims[1].size != loop.step)
        return std::nullopt;
      out.tiles.push_back(alloc);
      tiles.insert(alloc->result);
    }
  }
  bool moves = false;
  for (auto &op : loop.body.ops) {
    if (auto *dma = llvm::dyn_cast<DmaOp>(op.get())) {
      bool load = dma->src.base->type.space == MemSpace::HBM, store = dma->dst.base->type.space == MemSpace::HBM;
      if (dma->transpose || dma->tag != DmaTag::None || load == store)
        return std::nullopt;
      out.runBytes.push_back(loop.step * dtypeBytes((load ? dma->src : dma->dst).base->type.dtype));
      moves = true;
    }
    llvm::SmallVector<Access *, 4> accesses = op->reads();
    for (Access *w : op->writes())
      accesses.push_back(w);
    for (Access *a : accesses)
      if (!addAccess(out, *a, loop, tiles))
        return std::nullopt;
  }
  if (!moves)
    return std::nullopt;
  return out;
}

/// Bytes per ns a stream of back-to-back [P, run] transfers sustains.
double throughput(const runtime::InstructionCosts &model, int64_t runBytes, int64_t partitions) {
  int64_t bytes = runBytes * partitions;
  auto c = model.dma(bytes, partitions, runBytes, false);
  return double(bytes) / std::max(c.occupancy, double(bytes) / c.rate);
}

/// The smallest divisor g of the trip count whose transfers reach
/// policy::kWideLoadShare of the whole row's throughput, for every load and store.
int64_t chooseWidth(const runtime::InstructionCosts &model, const ElementwiseLoop &l, int64_t trips,
                    int64_t partitions) {
  int64_t g = 1;
  for (int64_t run : l.runBytes) {
    double best = throughput(model, run * trips, partitions);
    int64_t mine = 1;
    while (mine < trips && (trips % mine != 0 || throughput(model, run * mine, partitions) < policy::kWideLoadShare * best))
      ++mine;
    g = std::max(g, mine);
  }
  return g;
}

void widen(ForOp &loop, ElementwiseLoop &l, int64_t g) {
  const int64_t w = loop.step;
  for (AllocOp *alloc : l.tiles)
    alloc->result->type.dims[1].size = w * g;
  for (Index *col : l.extents)
    *col->extent = col->extent->isConst() ? IndexExpr(w * g) : min(IndexExpr(w * g), col->extent->rhs());
  loop.step = w * g;
}

class WidenElementwisePass : public Pass {
public:
  llvm::StringRef name() const override { return "widen-elementwise"; }
  llvm::StringRef description() const override {
    return "walk elementwise column loops (loads, vector and scalar ops, stores) in wider tiles, where the "
           "DMA model finds the longer runs faster and SBUF holds them";
  }
  PassResult run(Kernel &kernel, PassContext &ctx) override {
    const runtime::InstructionCosts model(ctx.target);
    const int64_t partitions = kernel.geometry.partitions;
    llvm::SmallVector<ForOp *, 8> loops;
    walk(kernel.body, [&](Op &op, llvm::ArrayRef<ForOp *>) {
      if (auto *loop = llvm::dyn_cast<ForOp>(&op))
        loops.push_back(loop);
    });
    int64_t peak = analysis::sbufLeastPeakBytesPerPartition(kernel);
    const int64_t limit = analysis::plannerSbufLimit(ctx.target);
    unsigned widened = 0;
    int64_t widest = 0;
    for (ForOp *loop : loops) {
      auto match = matchLoop(*loop);
      if (!match)
        continue;
      int64_t trips = loop->constTripCount();
      int64_t g = chooseWidth(model, *match, trips, partitions);
      auto extra = [&](int64_t groups) {
        int64_t bytes = 0;
        for (AllocOp *alloc : match->tiles)
          bytes += (groups - 1) * alloc->result->type.bytesPerPartition(partitions) * alloc->bufs;
        return bytes;
      };
      while (g > 1 && (trips % g != 0 || peak + extra(g) > limit))
        --g;
      if (g <= 1)
        continue;
      peak += extra(g);
      widen(*loop, *match, g);
      ++widened;
      widest = std::max(widest, loop->step);
    }
    if (!widened)
      return PassResult::Unchanged;
    kernel.notes.push_back("[widen-elementwise] " + std::to_string(widened) + " elementwise column loop" +
                           (widened == 1 ? "" : "s") + " in tiles up to " + std::to_string(widest) +
                           " columns wide");
    return PassResult::Changed;
  }
};

} // namespace

std::unique_ptr<Pass> createWidenElementwisePass() { return std::make_unique<WidenElementwisePass>(); }

} // namespace tessel::passes

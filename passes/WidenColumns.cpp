//===- passes/WidenColumns.cpp - Several column blocks of a weight per load ===//
//
// `widen-columns` loads the weights a column-block loop streams two blocks
// wide. TileGen walks a projection's output columns in blocks of n (one PSUM
// bank of accumulators) and, inside, its contraction one partition group at
// a time, loading a [128, n] tile of the weight per step:
//
//   for %n = 0 to N step 512 {
//     ... accumulators ...
//     for %k = 0 to K step 128 {
//       %W_tile = alloc sbuf<bf16, [K:128, R:512]> bufs 4
//       dma %W_tile[0 +: 128, 0 +: 512] <- %W[%k +: 128, %n +: 512]
//       ... matmuls reading %W_tile[0 +: 128, c +: w] ...
//     }
//     ... evictions ...
//   }
//
// Each partition's bytes of such a load are one run of n x 2 = 1 KiB of a
// row of W, and a DMA's efficiency grows with the run (runtime/DmaModel.h:
// bpp / (bpp + dma_descriptor_overhead_bytes), 80% at 1 KiB, 89% at 2 KiB).
// Two blocks side by side are one 2 KiB run, but their accumulators cannot
// all be live at once (a matmul accumulation group holds a PSUM bank until it
// is evicted, and the loop already uses the banks the planner gave it). So
// the pass keeps the whole K column of two blocks in SBUF: the first block
// loads both blocks' columns as it goes, the second reads them (the loop
// over the two blocks, peeled):
//
//   for %n2 = 0 to N step 1024 {          (an odd last block keeps its loop)
//     %W_blk = alloc sbuf<bf16, [K:K, R:1024]>
//     for %nh = 0 to 512 step 512 {
//       for %k = 0 to K step 128 {
//         dma %W_blk[%k +: 128, 0 +: 1024] <- %W[%k +: 128, %n2 +: 1024]
//         ... the body, %n = %n2 + %nh, reading %W_blk[%k + r, %nh + c] ...
//       }
//     }
//     for %nh1 = 512 to 1024 step 512 {
//       ... the body again, %n = %n2 + %nh1, reading %W_blk[%k + r, %nh1 + c] ...
//     }
//   }
//
// Each load still feeds the matmuls of its own contraction step, so the
// first block overlaps its loads as before (one transfer for the whole
// column would hold every matmul until it landed); schedule
// double-buffers the block when SBUF allows. Where the kernel is bound by
// its weights' bandwidth (decode-sized M) this is worth up to a tenth of its
// time; where it is bound by the tensor engine it only adds SBUF. The
// second form, g = 2, 4 or 8 blocks per contraction step with their
// accumulators live together (passes/ColumnJam.h), reaches runs of 4 and
// 8 KiB at any K. The pass builds each form on copies (passes/Trial.h),
// loop by loop in program order, taking for each the form the cost model
// predicts fastest if faster than none and still fitting, keeps the result
// only when it is at least policy::kMinWideColumnGain faster, and notes the
// choice above the kernel.
//
//===----------------------------------------------------------------------===//
#include "passes/ColumnJam.h"
#include "passes/ColumnLoops.h"
#include "passes/Passes.h"
#include "passes/Policy.h"
#include "passes/Trial.h"
#include "passes/analysis/KernelCost.h"

#include "ir/Builder.h"
#include "ir/Clone.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Casting.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <functional>

namespace tessel::passes {
namespace {

using namespace ir;

/// A widened tile in one copy of the column loop's body: the tile value,
/// the contraction loop streaming it and the block it now reads.
struct Widened {
  Value *blk;
  const ForOp *kLoop;
  /// The block's row of the contraction step: %k - lo.
  IndexExpr row() const {
    return (IndexExpr::var(kLoop->iv) - IndexExpr(kLoop->lo.constValue())).simplified();
  }
};

/// Rewrites one copy of the column loop's body (`ops`) as one of the two
/// blocks: %n becomes `n2 + nh`, reads of a widened tile read its block at
/// (%k - lo, nh + c); the tile's alloc goes, and its load becomes the
/// block's load of both blocks' columns (`keepLoads`, the first copy) or goes
/// (the second, which reads what the first loaded).
void rewriteBlock(std::vector<std::unique_ptr<Op>> &ops, const Value *nIv, const IndexExpr &n2, const IndexExpr &nh,
                  const llvm::DenseMap<const Value *, Widened> &tiles, bool keepLoads, int64_t width) {
  const IndexExpr n = n2 + nh;
  llvm::SmallPtrSet<const Op *, 8> dropped, loads;
  for (auto &op : ops)
    walkOp(*op, [&](Op &o) {
      if (auto *a = llvm::dyn_cast<AllocOp>(&o); a && tiles.count(a->result))
        dropped.insert(&o);
      auto *d = llvm::dyn_cast<DmaOp>(&o);
      if (!d || !tiles.count(d->dst.base))
        return;
      if (!keepLoads) {
        dropped.insert(&o);
        return;
      }
      loads.insert(&o);
      const Widened &w = tiles.find(d->dst.base)->second;
      IndexExpr rows = *d->dst.indices[0].extent; // P, or the partial last tile's min(P, K - %k)
      d->dst = makeAccess(w.blk, {{w.row(), rows}, {IndexExpr(0), IndexExpr(width)}});
      d->src.indices[1].start = d->src.indices[1].start.substitute(nIv, n2).simplified();
      d->src.indices[1].extent = IndexExpr(width);
    });
  for (auto &op : ops) {
    substituteInOp(*op, nIv, n);
    walkOp(*op, [&](Op &o) {
      if (dropped.count(&o) || loads.count(&o))
        return;
      llvm::SmallVector<Access *, 4> accesses = o.reads();
      if (Access *wr = o.write())
        accesses.push_back(wr);
      for (Access *a : accesses)
        if (auto it = tiles.find(a->base); it != tiles.end()) {
          const Widened &w = it->second;
          a->base = w.blk;
          a->indices[0].start = (a->indices[0].start + w.row()).simplified();
          a->indices[1].start = (a->indices[1].start + nh).simplified();
        }
    });
  }
  std::function<void(Block &)> erase = [&](Block &b) {
    llvm::erase_if(b.ops, [&](auto &o) { return dropped.count(o.get()) != 0; });
    for (auto &o : b.ops)
      if (auto *l = llvm::dyn_cast<ForOp>(o.get()))
        erase(l->body);
  };
  Block tmp;
  tmp.ops = std::move(ops);
  erase(tmp);
  ops = std::move(tmp.ops);
}

/// Replaces `c.nLoop` (in `parent`) by the two-blocks-per-load nest; an odd
/// last block stays as it was, in a copy of the loop after the nest.
void rewrite(Kernel &kernel, Block &parent, const ColumnLoop &c) {
  ForOp &nLoop = *c.nLoop;
  const int64_t P = kernel.geometry.partitions, B = nLoop.step;
  std::unique_ptr<Op> last;
  if (nLoop.constTripCount() % 2 != 0) {
    ValueMap map;
    last = cloneOp(nLoop, kernel, map);
    const int64_t split = nLoop.hi.constValue() - B;
    llvm::cast<ForOp>(*last).lo = IndexExpr(split);
    nLoop.hi = IndexExpr(split);
  }
  auto outer = std::make_unique<ForOp>();
  outer->loc = nLoop.loc;
  outer->lo = nLoop.lo;
  outer->hi = nLoop.hi;
  outer->step = 2 * B;
  outer->parallel = nLoop.parallel;
  outer->block = nLoop.block;
  outer->iv = kernel.newValue(ValueKind::LoopVar, kernel.uniqueName(nLoop.iv->name + "w"));
  outer->iv->def = outer.get();
  outer->iv->loc = nLoop.iv->loc;
  const IndexExpr n2 = IndexExpr::var(outer->iv);

  // The second block's body: a copy made before the first is changed.
  ValueMap map;
  std::vector<std::unique_ptr<Op>> second;
  for (auto &op : nLoop.body.ops)
    second.push_back(cloneOp(*op, kernel, map));

  // Per tile, the block of the whole K column of both column blocks.
  llvm::DenseMap<const Value *, Widened> firstTiles, secondTiles;
  for (const ColumnTile &t : c.tiles) {
    const TensorType &tt = t.alloc->result->type;
    const int64_t span = llvm::alignTo(t.kLoop->hi.constValue() - t.kLoop->lo.constValue(), P);
    Value *blk = appendAlloc(kernel, outer->body, t.alloc->result->name + "_cols", MemSpace::SBUF, tt.dtype,
                             {{tt.dims[0].label, span}, {tt.dims[1].label, 2 * B}}, 1, t.alloc->loc);
    firstTiles[t.alloc->result] = {blk, t.kLoop};
    const auto *kCopy = llvm::cast<ForOp>(map[t.kLoop->iv]->def);
    secondTiles[map[t.alloc->result]] = {blk, kCopy};
  }
  // The two blocks are the two iterations of a loop over them, peeled: the
  // first loads, the second reads; each keeps its own scope (its
  // accumulators are not live in the other).
  std::vector<std::unique_ptr<Op>> first = std::move(nLoop.body.ops);
  for (int half = 0; half < 2; ++half) {
    ForOp &h = appendLoop(kernel, outer->body, nLoop.iv->name + "h", IndexExpr(half * B), IndexExpr((half + 1) * B),
                          B, nLoop.loc);
    h.parallel = nLoop.parallel;
    std::vector<std::unique_ptr<Op>> &ops = half == 0 ? first : second;
    rewriteBlock(ops, nLoop.iv, n2, IndexExpr::var(h.iv), half == 0 ? firstTiles : secondTiles, half == 0,
                 2 * B);
    for (auto &op : ops)
      h.body.ops.push_back(std::move(op));
  }
  for (size_t i = 0; i < parent.ops.size(); ++i)
    if (parent.ops[i].get() == &nLoop) {
      parent.ops[i] = std::move(outer);
      if (last)
        parent.ops.insert(parent.ops.begin() + i + 1, std::move(last));
      break;
    }
}

/// How one column loop is widened: its index in collectColumnLoops' order
/// and its form, `jam` blocks per contraction step (passes/ColumnJam.h), or
/// 0 for two blocks' whole K column in SBUF (rewrite above).
struct Choice {
  size_t index;
  int64_t jam;
};

/// The block holding `loop` directly, or null.
Block *parentOf(Kernel &kernel, const ForOp *loop) {
  Block *parent = nullptr;
  for (auto &child : kernel.body.ops)
    if (child.get() == loop)
      parent = &kernel.body;
  walk(kernel.body, [&](Op &o, llvm::ArrayRef<ForOp *>) {
    if (auto *l = llvm::dyn_cast<ForOp>(&o))
      for (auto &child : l->body.ops)
        if (child.get() == loop)
          parent = &l->body;
  });
  return parent;
}

/// Rewrites the column loops of `kernel` that `which` chooses; the number of
/// weight streams widened.
int widen(Kernel &kernel, llvm::ArrayRef<Choice> which, bool streaming) {
  llvm::SmallVector<ColumnLoop, 4> candidates;
  collectColumnLoops(kernel.body, kernel.geometry.partitions, candidates);
  int streams = 0;
  for (const Choice &ch : which) {
    if (ch.index >= candidates.size())
      continue;
    const ColumnLoop &c = candidates[ch.index];
    Block *parent = parentOf(kernel, c.nLoop);
    if (!parent || (ch.jam && !canJamColumns(c, ch.jam)))
      continue;
    if (ch.jam)
      jamColumns(kernel, *parent, c, ch.jam, streaming);
    else
      rewrite(kernel, *parent, c);
    streams += int(c.tiles.size());
  }
  return streams;
}

/// The predicted latency of `kernel` with the column loops `which` chooses
/// widened (passes/Trial.h); nullopt when that form does not fit.
std::optional<double> trialUs(const Kernel &kernel, llvm::ArrayRef<Choice> which, bool streaming,
                              const runtime::Target &target) {
  std::unique_ptr<Kernel> trial = copyKernel(kernel);
  if (!trial)
    return std::nullopt;
  widen(*trial, which, streaming);
  return predictAfterLatePasses(*trial, target);
}

/// "two column blocks at a time", "8 column blocks per load": the forms
/// `taken` uses, for the note.
std::string describeForms(llvm::ArrayRef<Choice> taken) {
  std::string out;
  for (int64_t jam : {int64_t(0), int64_t(2), int64_t(4), int64_t(8)}) {
    if (llvm::none_of(taken, [&](const Choice &c) { return c.jam == jam; }))
      continue;
    if (!out.empty())
      out += " or ";
    out += jam ? llvm::formatv("{0} column blocks per load, their accumulators live together", jam).str()
               : std::string("two column blocks at a time");
  }
  return out;
}

class WidenColumnsPass : public Pass {
public:
  llvm::StringRef name() const override { return "widen-columns"; }
  llvm::StringRef description() const override {
    return "load a weight's column blocks several at a time (more contiguous bytes per partition) "
           "where the cost model finds the kernel faster";
  }

  /// Greedily, in program order: each column loop takes the form (two
  /// blocks' whole K column, or 2, 4 or 8 blocks per contraction step) with
  /// which, and the ones taken before it, the kernel is predicted fastest,
  /// if faster than without and it still fits; the result is kept when it
  /// is policy::kMinWideColumnGain faster than the kernel as it was.
  PassResult run(Kernel &kernel, PassContext &ctx) override {
    // Column loops with a partial last block are candidates with it split
    // off (splitRaggedColumnLoops); the kernel is split only if one is taken.
    std::unique_ptr<Kernel> split = copyKernel(kernel);
    if (!split)
      return PassResult::Unchanged;
    splitRaggedColumnLoops(*split);
    llvm::SmallVector<ColumnLoop, 4> candidates;
    collectColumnLoops(split->body, split->geometry.partitions, candidates);
    if (candidates.empty())
      return PassResult::Unchanged;
    int total = 0;
    for (const ColumnLoop &c : candidates)
      total += int(c.tiles.size());
    // Bound by its DMAs: the loads' time as the simulator charges them
    // exceeds the tensor engine's (passes/ColumnJam.cpp).
    analysis::KernelCost cost = analysis::analyzeKernel(kernel, ctx.target);
    const bool streaming = cost.dmaEstimateNs > cost.tensorBusyNs;
    std::optional<double> narrowUs = trialUs(kernel, {}, streaming, ctx.target);
    if (!narrowUs)
      return PassResult::Unchanged;
    double bestUs = *narrowUs;
    llvm::SmallVector<Choice, 4> taken;
    for (size_t i = 0; i < candidates.size(); ++i) {
      std::optional<Choice> best;
      for (int64_t jam : {int64_t(0), int64_t(2), int64_t(4), int64_t(8)}) {
        if (jam && !canJamColumns(candidates[i], jam))
          continue;
        taken.push_back({i, jam});
        std::optional<double> us = trialUs(*split, taken, streaming, ctx.target);
        taken.pop_back();
        if (us && *us < bestUs) {
          bestUs = *us;
          best = Choice{i, jam};
        }
      }
      if (best)
        taken.push_back(*best);
    }
    if (taken.empty() || bestUs > *narrowUs * (1.0 - policy::kMinWideColumnGain)) {
      kernel.notes.push_back(llvm::formatv("[widen-columns] {0} weight stream{1} kept one column block per "
                                           "load (predicted {2:F1} us; several blocks per load {3}, not {4:F1}% faster)",
                                           total, total == 1 ? "" : "s", *narrowUs,
                                           taken.empty() ? std::string("no faster or does not fit SBUF")
                                                         : llvm::formatv("{0:F1} us", bestUs).str(),
                                           policy::kMinWideColumnGain * 100)
                                 .str());
      return PassResult::Unchanged; // a note only
    }
    splitRaggedColumnLoops(kernel);
    int streams = widen(kernel, taken, streaming);
    kernel.notes.push_back(llvm::formatv("[widen-columns] {0} of {1} weight stream{2} loaded {3}: predicted "
                                         "{4:F1} us, against {5:F1} us",
                                         streams, total, total == 1 ? "" : "s", describeForms(taken), bestUs,
                                         *narrowUs)
                               .str());
    return PassResult::Changed;
  }
};

} // namespace

std::unique_ptr<Pass> createWidenColumnsPass() { return std::make_unique<WidenColumnsPass>(); }

} // namespace tessel::passes

//===- passes/WidenColumns.cpp - Two column blocks of a weight per load ---===//
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
// time; where it is bound by the tensor engine it only adds SBUF. The pass
// builds the wide form on copies (passes/Trial.h), loop by loop in program
// order, taking each that the cost model predicts faster and that still
// fits, keeps the result only when it is at least policy::kMinWideColumnGain
// faster, and notes the choice above the kernel.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"
#include "passes/Policy.h"
#include "passes/Trial.h"

#include "ir/Builder.h"
#include "ir/Clone.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Casting.h"
#include "llvm/Support/FormatVariadic.h"

#include <functional>

namespace tessel::passes {
namespace {

using namespace ir;

/// A [P, B] tile a contraction loop streams from a weight whose columns
/// advance with the column-block loop: the alloc and the one load, at the
/// top of the contraction loop's body.
struct ColumnTile {
  ForOp *kLoop;
  AllocOp *alloc;
  DmaOp *load;
};

bool fixedIn(const IndexExpr &e, const Value *v) { return !e.mentions(v); }

/// Whether `e` is `%v + c` for a constant c (coefficient 1, no other
/// variable): its value at `%v := %v2 + %h` is known for every block.
bool isVarPlusConst(const IndexExpr &e, const Value *v) {
  int64_t c = 0;
  llvm::SmallVector<std::pair<const Value *, int64_t>, 2> terms;
  return e.linearForm(c, terms) && terms.size() == 1 && terms[0].first == v && terms[0].second == 1;
}

/// The tiles `kLoop` (a child of the column loop `nLoop`, of step P) streams
/// with columns that are `nLoop`'s block: `dma %T[0 +: P, 0 +: B] <-
/// %W[%k + a +: P, %n + c +: B]`, %T read only inside `kLoop`.
void columnTiles(ForOp &nLoop, ForOp &kLoop, int64_t P, llvm::SmallVectorImpl<ColumnTile> &out) {
  const int64_t B = nLoop.step;
  if (kLoop.step != P || !kLoop.lo.isConst() || !kLoop.hi.isConst() || kLoop.constTripCount() < 1 ||
      (kLoop.hi.constValue() - kLoop.lo.constValue()) % P != 0)
    return;
  for (auto &op : kLoop.body.ops) {
    auto *alloc = llvm::dyn_cast<AllocOp>(op.get());
    if (!alloc)
      continue;
    const TensorType &t = alloc->result->type;
    if (t.space != MemSpace::SBUF || t.dims.size() != 2 || t.dims[0].size != P || t.dims[1].size != B)
      continue;
    Value *tile = alloc->result;
    DmaOp *load = nullptr;
    int writers = 0;
    walk(kLoop.body, [&](Op &o, llvm::ArrayRef<ForOp *>) {
      if (Access *w = o.write(); w && w->base == tile) {
        ++writers;
        load = llvm::dyn_cast<DmaOp>(&o);
      }
    });
    if (writers != 1 || !load || load->transpose || load->tag != DmaTag::None ||
        load->src.base->type.space != MemSpace::HBM || load->src.indices.size() != 2 ||
        load->dst.indices.size() != 2 || llvm::none_of(kLoop.body.ops, [&](auto &o) { return o.get() == load; }))
      continue;
    const Index &row = load->src.indices[0], &col = load->src.indices[1];
    const Index &dRow = load->dst.indices[0], &dCol = load->dst.indices[1];
    if (!row.hasExtent(P) || !isVarPlusConst(row.start, kLoop.iv) || !col.hasExtent(B) ||
        !isVarPlusConst(col.start, nLoop.iv) || !dRow.hasExtent(P) || !dCol.hasExtent(B) ||
        !dRow.start.isConst() || dRow.start.constValue() != 0 || !dCol.start.isConst() ||
        dCol.start.constValue() != 0)
      continue;
    out.push_back({&kLoop, alloc, load});
  }
}

/// The column loops the pass widens and their tiles: constant bounds, at
/// least two whole blocks, every contraction loop directly in the body
/// independent of the block, no accumulation group restarting per block.
struct Candidate {
  ForOp *nLoop;
  llvm::SmallVector<ColumnTile, 4> tiles;
};

bool restartsPer(ForOp &loop, const Value *iv) {
  bool found = false;
  walk(loop.body, [&](Op &o, llvm::ArrayRef<ForOp *>) {
    if (auto *mm = llvm::dyn_cast<MatmulOp>(&o))
      found |= llvm::is_contained(mm->resetOn, iv);
  });
  return found;
}

/// Outermost first; a candidate's body is not searched further.
void collect(Block &block, int64_t P, llvm::SmallVectorImpl<Candidate> &out) {
  for (auto &op : block.ops) {
    auto *loop = llvm::dyn_cast<ForOp>(op.get());
    if (!loop)
      continue;
    const int64_t B = loop->step;
    Candidate c{loop, {}};
    if (loop->lo.isConst() && loop->hi.isConst() && B > 0 &&
        (loop->hi.constValue() - loop->lo.constValue()) % B == 0 && loop->constTripCount() >= 2 &&
        !restartsPer(*loop, loop->iv))
      for (auto &inner : loop->body.ops)
        if (auto *k = llvm::dyn_cast<ForOp>(inner.get());
            k && fixedIn(k->lo, loop->iv) && fixedIn(k->hi, loop->iv))
          columnTiles(*loop, *k, P, c.tiles);
    if (c.tiles.empty())
      collect(loop->body, P, out);
    else
      out.push_back(std::move(c));
  }
}

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
                  const llvm::DenseMap<const Value *, Widened> &tiles, bool keepLoads, int64_t P, int64_t width) {
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
      d->dst = makeAccess(w.blk, {{w.row(), IndexExpr(P)}, {IndexExpr(0), IndexExpr(width)}});
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
void rewrite(Kernel &kernel, Block &parent, const Candidate &c) {
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
    const int64_t span = t.kLoop->hi.constValue() - t.kLoop->lo.constValue();
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
    rewriteBlock(ops, nLoop.iv, n2, IndexExpr::var(h.iv), half == 0 ? firstTiles : secondTiles, half == 0, P,
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

/// Rewrites the candidates of `kernel` whose indices (in collect's order)
/// `which` lists; the number of weight streams widened.
int widen(Kernel &kernel, llvm::ArrayRef<size_t> which) {
  llvm::SmallVector<Candidate, 4> candidates;
  collect(kernel.body, kernel.geometry.partitions, candidates);
  int streams = 0;
  for (size_t i : which) {
    if (i >= candidates.size())
      continue;
    const Candidate &c = candidates[i];
    Block *parent = nullptr;
    for (auto &child : kernel.body.ops)
      if (child.get() == c.nLoop)
        parent = &kernel.body;
    walk(kernel.body, [&](Op &o, llvm::ArrayRef<ForOp *>) {
      if (auto *l = llvm::dyn_cast<ForOp>(&o))
        for (auto &child : l->body.ops)
          if (child.get() == c.nLoop)
            parent = &l->body;
    });
    if (!parent)
      continue;
    rewrite(kernel, *parent, c);
    streams += int(c.tiles.size());
  }
  return streams;
}

/// The predicted latency of `kernel` with the candidates `which` widened
/// (passes/Trial.h); nullopt when that form does not fit.
std::optional<double> trialUs(const Kernel &kernel, llvm::ArrayRef<size_t> which, const runtime::Target &target) {
  std::unique_ptr<Kernel> trial = copyKernel(kernel);
  if (!trial)
    return std::nullopt;
  widen(*trial, which);
  return predictAfterLatePasses(*trial, target);
}

class WidenColumnsPass : public Pass {
public:
  llvm::StringRef name() const override { return "widen-columns"; }
  llvm::StringRef description() const override {
    return "load a weight's column blocks two at a time (twice the contiguous bytes per partition) "
           "where the cost model finds the kernel faster";
  }

  /// Greedily, in program order: a column loop is widened when, with the
  /// ones taken before it, the kernel is predicted faster and still fits;
  /// the result is kept when it is policy::kMinWideColumnGain faster than
  /// the kernel as it was.
  PassResult run(Kernel &kernel, PassContext &ctx) override {
    llvm::SmallVector<Candidate, 4> candidates;
    collect(kernel.body, kernel.geometry.partitions, candidates);
    if (candidates.empty())
      return PassResult::Unchanged;
    int total = 0;
    for (const Candidate &c : candidates)
      total += int(c.tiles.size());
    std::optional<double> narrowUs = trialUs(kernel, {}, ctx.target);
    if (!narrowUs)
      return PassResult::Unchanged;
    double bestUs = *narrowUs;
    llvm::SmallVector<size_t, 4> taken;
    for (size_t i = 0; i < candidates.size(); ++i) {
      taken.push_back(i);
      std::optional<double> us = trialUs(kernel, taken, ctx.target);
      if (us && *us < bestUs)
        bestUs = *us;
      else
        taken.pop_back();
    }
    if (taken.empty() || bestUs > *narrowUs * (1.0 - policy::kMinWideColumnGain)) {
      kernel.notes.push_back(llvm::formatv("[widen-columns] {0} weight stream{1} kept one column block per "
                                           "load (predicted {2:F1} us; two blocks per load {3}, not {4:F1}% faster)",
                                           total, total == 1 ? "" : "s", *narrowUs,
                                           taken.empty() ? std::string("no faster or does not fit SBUF")
                                                         : llvm::formatv("{0:F1} us", bestUs).str(),
                                           policy::kMinWideColumnGain * 100)
                                 .str());
      return PassResult::Unchanged; // a note only
    }
    int streams = widen(kernel, taken);
    kernel.notes.push_back(llvm::formatv("[widen-columns] {0} of {1} weight stream{2} loaded two column blocks "
                                         "at a time: predicted {3:F1} us, against {4:F1} us",
                                         streams, total, total == 1 ? "" : "s", bestUs, *narrowUs)
                               .str());
    return PassResult::Changed;
  }
};

} // namespace

std::unique_ptr<Pass> createWidenColumnsPass() { return std::make_unique<WidenColumnsPass>(); }

} // namespace tessel::passes

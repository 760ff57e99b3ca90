//===- passes/FuseRows.cpp - Row-wise chains in one row-strip loop --------===//
//
// `fuse-rows` runs a chain of row-wise nests (elementwise ops, reductions
// along a row, per-row broadcasts: softmax's max, shift, exp, sum, divide)
// one row strip at a time, with the intermediates kept in SBUF:
//  1. two top-level row-strip loops over the same rows merge when every HBM
//     tensor one writes and the other touches is accessed row-locally in
//     both (rows `%m +: e`, e at most the step): iteration m of the second
//     then reads only what iteration m of the first wrote. A later one is
//     brought next to the first when the ops between let one of them move;
//  2. an HBM scratch tensor used by one loop only, row-locally, becomes an
//     SBUF strip (the loop's rows x the tensor's width) allocated in the
//     loop's body: its stores become copies into the strip, and a load of it
//     into a tile becomes reads of the strip itself (the tile is dropped).
// The loop's buffers (at every copy) and strips together stay within SBUF
// less the planner's headroom; a tensor that does not fit stays in HBM. Loops that share
// no tensor are `fuse-siblings`' business; a matmul nest walking row blocks
// (`%mb + %mi`) is not row-local and keeps its own loop.
//
//===----------------------------------------------------------------------===//
#include "passes/LoopFusion.h"
#include "passes/Passes.h"
#include "passes/Policy.h"
#include "passes/ResidentOperands.h"
#include "passes/Trial.h"
#include "passes/analysis/KernelCost.h"

#include "ir/Builder.h"
#include "ir/LoopDeps.h"
#include "support/DType.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Casting.h"

#include <optional>

namespace tessel::passes {
namespace {

using namespace ir;

/// The loops nested in `loop` that run once (constant bounds, one trip), each
/// with its only value: a matmul nest at a row strip of one partition tile
/// walks its row blocks `%mb + %mi` with %mi always 0.
std::vector<std::pair<const Value *, IndexExpr>> singleTrips(ForOp &loop) {
  std::vector<std::pair<const Value *, IndexExpr>> once;
  for (auto &op : loop.body.ops)
    walkOp(*op, [&](Op &o) {
      if (auto *inner = llvm::dyn_cast<ForOp>(&o); inner && inner->constTripCount() == 1)
        once.emplace_back(inner->iv, inner->lo);
    });
  return once;
}

/// Whether every access to `v` within `loop` is rank 2 and covers rows
/// `iv +: e` with e at most the loop's step (a loop that runs once counts as
/// its value), and any DMA moving it transposed is a load of at most
/// `partitions` columns (keepStripsOnChip puts it on the tensor engine).
bool rowLocal(ForOp &loop, const Value *v, int64_t partitions) {
  bool ok = true;
  IndexExpr iv = IndexExpr::var(loop.iv);
  auto once = singleTrips(loop);
  auto check = [&](const Access &a) {
    if (a.base != v)
      return;
    ok &= a.indices.size() == 2 && a.indices[0].isRange() && a.indices[1].isRange();
    if (!ok)
      return;
    IndexExpr start = a.indices[0].start;
    for (const auto &[var, value] : once)
      start = start.substitute(var, value);
    ok &= start.simplified().structurallyEqual(iv);
    auto bound = extentBound(*a.indices[0].extent);
    ok &= bound && *bound <= loop.step;
  };
  walkOp(loop, [&](Op &o) {
    for (Access *a : o.reads())
      check(*a);
    for (Access *w : o.writes())
      check(*w);
    if (auto *dma = llvm::dyn_cast<DmaOp>(&o); dma && dma->transpose) {
      auto cols = dma->src.base == v && dma->src.indices.size() == 2
                      ? extentBound(*dma->src.indices[1].extent)
                      : std::nullopt;
      ok &= dma->dst.base != v && (dma->src.base != v || (cols && *cols <= partitions));
    }
  });
  return ok;
}

bool sameRows(const ForOp &a, const ForOp &b) {
  return a.lo.isConst() && a.hi.isConst() && a.lo.structurallyEqual(b.lo) &&
         a.hi.structurallyEqual(b.hi) && a.step == b.step && a.parallel == b.parallel;
}

/// Whether `b` may join `a`: they share some tensor, every shared one is an
/// HBM tensor accessed row-locally by both, and a scratch tensor is among them.
/// Two loops that each run once merge without reordering anything, so there
/// a tensor both only write (each head's rows of one output, at row offsets)
/// need not be row-local; one that passes values between them still must.
bool chained(ForOp &a, ForOp &b, int64_t P) {
  const bool once = a.constTripCount() == 1 && b.constTripCount() == 1;
  Footprint fa = footprintOf(a), fb = footprintOf(b);
  llvm::SmallPtrSet<const Value *, 8> shared;
  for (const Value *v : fa.writes)
    if (fb.reads.count(v) || fb.writes.count(v))
      shared.insert(v);
  for (const Value *v : fb.writes)
    if (fa.reads.count(v))
      shared.insert(v);
  bool scratch = false;
  for (const Value *v : shared) {
    bool onlyWritten = once && !fa.reads.count(v) && !fb.reads.count(v);
    if (v->type.space != MemSpace::HBM || (!onlyWritten && (!rowLocal(a, v, P) || !rowLocal(b, v, P))))
      return false;
    scratch |= v->role == TensorRole::Scratch;
  }
  return scratch;
}

/// Brings next to the top-level loop at `i` the first later loop chained
/// with it, when the ops between let one of the two move past them: the
/// later one moves up, just after it (each head's softmax sum, divide and
/// `P @ V` come after every head's exp, where the heads are lowered one after
/// another up to the exp), or else the loop at `i` moves down, just before
/// it (the queries' projection past the keys' and values', which the
/// attention reads whole). Returns the index of the first of the two, now
/// side by side; nothing when neither moves.
std::optional<size_t> bringChained(Block &top, size_t i, int64_t P) {
  auto &a = llvm::cast<ForOp>(*top.ops[i]);
  Footprint fa = footprintOf(a);
  std::vector<Footprint> between;
  for (size_t j = i + 1; j < top.ops.size(); ++j) {
    Footprint fj = footprintOf(*top.ops[j]);
    auto *b = llvm::dyn_cast<ForOp>(top.ops[j].get());
    if (b && sameRows(a, *b) && chained(a, *b, P)) {
      auto passes = [&](const Footprint &moved) {
        return llvm::all_of(between, [&](const Footprint &f) { return canSwap(moved, f); });
      };
      bool up = passes(fj);
      if (!up && !passes(fa))
        return std::nullopt;
      size_t from = up ? j : i, to = up ? i + 1 : j - 1;
      std::unique_ptr<Op> loop = std::move(top.ops[from]);
      top.ops.erase(top.ops.begin() + from);
      top.ops.insert(top.ops.begin() + to, std::move(loop));
      return up ? i : j - 1;
    }
    between.push_back(std::move(fj));
  }
  return std::nullopt;
}

/// Merges chained top-level loops: consecutive ones (only allocs between
/// them, which move above the first), or a later one brought next to the
/// first (bringChained). Returns the merged loops.
llvm::SmallPtrSet<ForOp *, 4> mergeChains(Kernel &kernel) {
  llvm::SmallPtrSet<ForOp *, 4> merged;
  Block &top = kernel.body;
  const int64_t P = kernel.geometry.partitions;
  for (size_t i = 0; i < top.ops.size(); ++i) {
    auto *a = llvm::dyn_cast<ForOp>(top.ops[i].get());
    if (!a)
      continue;
    size_t j = i + 1;
    while (j < top.ops.size() && llvm::isa<AllocOp>(top.ops[j].get()))
      ++j;
    auto *b = j < top.ops.size() ? llvm::dyn_cast<ForOp>(top.ops[j].get()) : nullptr;
    // Moved down, the loop leaves the ops it passed at i: they may start
    // chains too, so the walk goes on from there.
    std::optional<size_t> passed;
    if (!b || !sameRows(*a, *b) || !chained(*a, *b, P)) {
      std::optional<size_t> at = bringChained(top, i, P);
      if (!at)
        continue;
      if (*at != i)
        passed = i;
      i = *at;
      j = i + 1;
      b = llvm::cast<ForOp>(top.ops[j].get());
    }
    appendBody(*a, *b);
    std::unique_ptr<Op> loop = std::move(top.ops[i]);
    for (size_t k = i + 1; k < j; ++k)
      top.ops[k - 1] = std::move(top.ops[k]);
    top.ops[j - 1] = std::move(loop);
    top.ops.erase(top.ops.begin() + j);
    merged.insert(a);
    // The merged loop (now at j - 1) may take the next one too.
    i = (passed ? *passed : j - 1) - 1;
  }
  return merged;
}

/// Points `a` (an access to the HBM tensor `c`) at the strip `s`: rows relative to the strip.
void retarget(Access &a, const Value *c, Value *s) {
  if (a.base != c)
    return;
  a.base = s;
  a.indices[0].start = IndexExpr(0);
}

/// `dma transpose %T[d] <- %S[r]` with %S now an SBUF strip: a transpose on
/// the tensor engine into PSUM and a copy out of it, as io-transpose's form.
std::vector<std::unique_ptr<Op>> transposeOnChip(Kernel &kernel, DmaOp &dma) {
  Block out;
  const TensorType &t = dma.dst.base->type;
  const Index &d0 = dma.dst.indices[0], &d1 = dma.dst.indices[1];
  auto bound = [](const Index &i) { return extentBound(*i.extent).value_or(1); };
  Value *p = appendAlloc(kernel, out, dma.src.base->name + "_Tpsum", MemSpace::PSUM, DType::F32,
                         {Dim{t.dims[0].label, bound(d0)}, Dim{t.dims[1].label, bound(d1)}}, 2,
                         dma.loc);
  Access inPsum = makeAccess(p, {{IndexExpr(0), *d0.extent}, {IndexExpr(0), *d1.extent}});
  inPsum.loc = dma.loc;
  auto tr = std::make_unique<TransposeOp>();
  tr->loc = dma.loc;
  tr->dst = inPsum;
  tr->src = dma.src;
  out.ops.push_back(std::move(tr));
  auto copy = std::make_unique<CopyOp>();
  copy->loc = dma.loc;
  copy->dst = dma.dst;
  copy->src = inPsum;
  out.ops.push_back(std::move(copy));
  return std::move(out.ops);
}

/// In `block` (recursively): stores into the strip become copies; loads
/// from it become reads of the strip, or copies when the tile must stay
/// (transposes on the tensor engine when the load transposed).
void replaceMoves(Kernel &kernel, Block &block, Value *s) {
  for (size_t i = 0; i < block.ops.size(); ++i) {
    if (auto *loop = llvm::dyn_cast<ForOp>(block.ops[i].get())) {
      replaceMoves(kernel, loop->body, s);
      continue;
    }
    auto *dma = llvm::dyn_cast<DmaOp>(block.ops[i].get());
    if (!dma || (dma->src.base != s && dma->dst.base != s))
      continue;
    if (dma->transpose) {
      std::vector<std::unique_ptr<Op>> ops = transposeOnChip(kernel, *dma);
      size_t n = ops.size();
      block.ops[i] = std::move(ops.back());
      ops.pop_back();
      block.ops.insert(block.ops.begin() + i, std::make_move_iterator(ops.begin()),
                       std::make_move_iterator(ops.end()));
      i += n - 1;
      continue;
    }
    if (readFromHeld(block, i, s, s)) {
      i -= 2; // the alloc and the load are gone; the op now at i - 1 is next
      continue;
    }
    auto copy = std::make_unique<CopyOp>();
    copy->loc = dma->loc;
    copy->dst = dma->dst;
    copy->src = dma->src;
    block.ops[i] = std::move(copy);
  }
}

/// What a loop's buffers and strips may take per partition: SBUF less the
/// block planner's headroom.
int64_t stripBudget(const Kernel &kernel) {
  return int64_t(double(kernel.geometry.sbufBytes) * (1 - policy::kSbufHeadroom));
}

/// Makes the HBM scratch `c` (allocated at top-level op `ci`) an SBUF strip
/// of the top-level loop `loop`, its one user.
void keepStripOnChip(Kernel &kernel, size_t ci, ForOp &loop) {
  auto *cAlloc = llvm::cast<AllocOp>(kernel.body.ops[ci].get());
  Value *c = cAlloc->result;
  const TensorType &t = c->type;
  Block holder;
  Value *s = appendAlloc(kernel, holder, c->name + "_rows", MemSpace::SBUF, t.dtype,
                         {Dim{t.dims[0].label, loop.step}, t.dims[1]}, 1, cAlloc->loc);
  rewriteAccesses(loop.body, c, [&](Access &a) { retarget(a, c, s); });
  replaceMoves(kernel, loop.body, s);
  loop.body.ops.insert(loop.body.ops.begin(), std::move(holder.ops.front()));
  kernel.body.ops.erase(kernel.body.ops.begin() + ci);
}

/// Whether the kernel with `c` (top-level op `ci`) kept on chip in its loop
/// (top-level op `li`) still fits SBUF less the planner's headroom, its
/// buffers placed by liveness (strips that are not live together share).
bool fitsOnChip(const Kernel &kernel, size_t ci, size_t li) {
  std::unique_ptr<Kernel> trial = copyKernel(kernel);
  if (!trial)
    return false;
  keepStripOnChip(*trial, ci, *llvm::cast<ForOp>(trial->body.ops[li].get()));
  return analysis::sbufLeastPeakBytesPerPartition(*trial) <= stripBudget(kernel);
}

/// Turns the HBM scratch tensors used row-locally by one top-level loop into
/// SBUF strips of that loop, while the loop's buffers (each at its copies, the
/// tiles a strip will replace included) and strips fit SBUF less the
/// planner's headroom; a strip beyond that sum is kept when the kernel still
/// fits with its buffers placed by liveness. Returns their names.
std::vector<std::string> keepStripsOnChip(Kernel &kernel) {
  std::vector<std::string> kept;
  Block &top = kernel.body;
  llvm::DenseMap<const ForOp *, int64_t> used; // strip bytes per partition, per loop
  for (size_t ci = 0; ci < top.ops.size(); ++ci) {
    auto *cAlloc = llvm::dyn_cast<AllocOp>(top.ops[ci].get());
    if (!cAlloc || cAlloc->result->type.space != MemSpace::HBM ||
        cAlloc->result->role != TensorRole::Scratch || cAlloc->result->type.dims.size() != 2)
      continue;
    Value *c = cAlloc->result;
    ForOp *loop = nullptr;
    size_t li = 0;
    unsigned users = 0;
    for (size_t j = 0; j < top.ops.size(); ++j) {
      Footprint f = footprintOf(*top.ops[j]);
      if (top.ops[j].get() != cAlloc && (f.reads.count(c) || f.writes.count(c))) {
        ++users;
        loop = llvm::dyn_cast<ForOp>(top.ops[j].get());
        li = j;
      }
    }
    if (users != 1 || !loop || loop->step > kernel.geometry.partitions || !rowLocal(*loop, c, kernel.geometry.partitions))
      continue;
    int64_t bytes = c->type.dims[1].size * dtypeBytes(c->type.dtype);
    if (!used.count(loop)) // the loop's own buffers first, at every copy
      used[loop] = sbufFootprint(*loop, kernel.geometry.partitions);
    if (used[loop] + bytes > stripBudget(kernel) && !fitsOnChip(kernel, ci, li))
      continue;
    used[loop] += bytes;
    kept.push_back(c->name);
    keepStripOnChip(kernel, ci, *loop);
    --ci;
  }
  return kept;
}

std::string joinNames(const std::vector<std::string> &names) {
  std::string out;
  for (const std::string &n : names)
    out += (out.empty() ? "%" : ", %") + n;
  return out;
}

/// keepOperandsResident for each merged loop that runs a matmul (a chain's
/// producer or consumer came in: its other operand is the same in every
/// strip). A resident buffer is live across the whole loop, so it adds to
/// the kernel's SBUF peak (liveness-placed, phases sharing addresses, the
/// tiles it replaces still counted): the residents take what that peak
/// leaves of SBUF less the planner's headroom.
std::vector<std::string> keepMergedOperandsResident(Kernel &kernel,
                                                    const llvm::SmallPtrSet<ForOp *, 4> &merged) {
  std::vector<std::string> kept;
  int64_t budget = stripBudget(kernel) - analysis::sbufLeastPeakBytesPerPartition(kernel);
  for (size_t i = 0; i < kernel.body.ops.size(); ++i) {
    auto *loop = llvm::dyn_cast<ForOp>(kernel.body.ops[i].get());
    bool matmul = false;
    if (loop && merged.count(loop))
      walkOp(*loop, [&](Op &o) { matmul |= llvm::isa<MatmulOp>(o); });
    if (!matmul || loop->constTripCount() < 2)
      continue;
    size_t before = kernel.body.ops.size();
    for (std::string &n : keepOperandsResident(kernel, i, budget))
      kept.push_back(std::move(n));
    i += kernel.body.ops.size() - before; // the fills went in before the loop
  }
  return kept;
}

class FuseRowsPass : public Pass {
public:
  llvm::StringRef name() const override { return "fuse-rows"; }
  llvm::StringRef description() const override {
    return "run a chain of row-wise nests (softmax's max, exp, sum, divide) one row strip at a "
           "time, their intermediates in SBUF strips instead of HBM";
  }
  PassResult run(Kernel &kernel, PassContext &) override {
    llvm::SmallPtrSet<ForOp *, 4> merged = mergeChains(kernel);
    if (merged.empty())
      return PassResult::Unchanged;
    std::vector<std::string> kept = keepStripsOnChip(kernel);
    kernel.notes.push_back(kept.empty() ? "[fuse-rows] row-wise nests merged; no strip fits SBUF"
                                        : "[fuse-rows] kept in SBUF, one row strip at a time: " +
                                              joinNames(kept));
    std::vector<std::string> resident = keepMergedOperandsResident(kernel, merged);
    if (!resident.empty())
      kernel.notes.push_back("[fuse-rows] loaded once, kept in SBUF across the row strips: " +
                             joinNames(resident));
    return PassResult::Changed;
  }
};

} // namespace

std::unique_ptr<Pass> createFuseRowsPass() { return std::make_unique<FuseRowsPass>(); }

} // namespace tessel::passes

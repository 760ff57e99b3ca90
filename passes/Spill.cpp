//===- passes/Spill.cpp - Moving an SBUF buffer to an HBM spill slot ------===//
#include "passes/Spill.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/Casting.h"

#include <algorithm>
#include <limits>

namespace tessel::passes {
namespace {

using namespace ir;

/// Staging tiles double-buffer, so consecutive iterations overlap.
constexpr int64_t kStagingBufs = 2;

// --- value ranges of index expressions ---------------------------------------

struct Interval {
  int64_t lo = 0, hi = 0;
};

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

int64_t satAdd(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? (b > 0 ? kMax : kMin) : r;
}
int64_t satSub(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_sub_overflow(a, b, &r) ? (b < 0 ? kMax : kMin) : r;
}
int64_t satMul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? ((a < 0) != (b < 0) ? kMin : kMax) : r;
}

/// The values each loop variable takes, from the loops' bounds.
class VarRanges {
public:
  explicit VarRanges(llvm::ArrayRef<ForOp *> loops) {
    for (ForOp *l : loops) {
      int64_t lo = of(l->lo).lo;
      Interval iv{lo, std::max(lo, satSub(of(l->hi).hi, 1))};
      ranges[l->iv] = iv;
    }
  }

  Interval of(const IndexExpr &e) const {
    switch (e.kind()) {
    case IndexExpr::Kind::Const:
      return {e.constValue(), e.constValue()};
    case IndexExpr::Kind::Var: {
      auto it = ranges.find(e.varValue());
      return it == ranges.end() ? Interval{kMin, kMax} : it->second;
    }
    case IndexExpr::Kind::Add: {
      Interval a = of(e.lhs()), b = of(e.rhs());
      return {satAdd(a.lo, b.lo), satAdd(a.hi, b.hi)};
    }
    case IndexExpr::Kind::Sub: {
      Interval a = of(e.lhs()), b = of(e.rhs());
      return {satSub(a.lo, b.hi), satSub(a.hi, b.lo)};
    }
    case IndexExpr::Kind::Mul: {
      Interval a = of(e.lhs());
      int64_t c = e.rhs().constValue();
      int64_t x = satMul(a.lo, c), y = satMul(a.hi, c);
      return {std::min(x, y), std::max(x, y)};
    }
    case IndexExpr::Kind::Min: {
      Interval a = of(e.lhs()), b = of(e.rhs());
      return {std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
    }
    }
    return {kMin, kMax};
  }

  /// Iterations of `l` at most (max) or at least (min).
  int64_t maxTrips(const ForOp &l) const { return trips(of(l.hi).hi, of(l.lo).lo, l.step); }
  int64_t minTrips(const ForOp &l) const { return trips(of(l.hi).lo, of(l.lo).hi, l.step); }

private:
  static int64_t trips(int64_t hi, int64_t lo, int64_t step) {
    int64_t span = satSub(hi, lo);
    return span <= 0 ? 0 : satAdd(span, step - 1) / step;
  }

  llvm::DenseMap<const Value *, Interval> ranges;
};

// --- where the staging tiles and DMAs go ----------------------------------------

/// One access of the spilled buffer by one instruction.
struct Site {
  Op *op = nullptr;
  Access *access = nullptr;
  bool write = false;
  llvm::SmallVector<ForOp *, 8> loops; // enclosing loops, outermost first
  unsigned depth = 0;                  // the staging tile goes inside loops[0, depth)
  /// A same-dtype SBUF-to-SBUF `copy`: the spill DMA replaces it, moving
  /// between the slot and the copy's other operand, with no staging tile.
  bool replacesCopy = false;

  /// The op the staging alloc (and a reload) is inserted before.
  Op *anchor() const { return depth == loops.size() ? op : loops[depth]; }
};

struct Plan {
  bool spillable = false;
  std::vector<Site> sites; // program order; an instruction's reads before its write
};

bool mentions(const Access &a, const Value *iv) {
  for (const Index &idx : a.indices)
    if (idx.start.mentions(iv) || (idx.extent && idx.extent->mentions(iv)))
      return true;
  return false;
}

Plan planSpill(Kernel &kernel, AllocOp &alloc) {
  Plan plan;
  const Value *victim = alloc.result;
  if (victim->type.space != MemSpace::SBUF)
    return plan;
  unsigned allocDepth = 0;
  llvm::SmallPtrSet<const ForOp *, 8> writingLoops;
  bool staging = false;
  walk(kernel.body, [&](Op &op, llvm::ArrayRef<ForOp *> loops) {
    if (&op == &alloc)
      allocDepth = loops.size();
    if (auto *dma = llvm::dyn_cast<DmaOp>(&op))
      if (dma->tag != DmaTag::None && (dma->dst.base == victim || dma->src.base == victim))
        staging = true;
    auto addSite = [&](Access *a, bool write) {
      Site s;
      s.op = &op;
      s.access = a;
      s.write = write;
      if (auto *copy = llvm::dyn_cast<CopyOp>(&op)) {
        const TensorType &src = copy->src.base->type, &dst = copy->dst.base->type;
        s.replacesCopy = src.space == MemSpace::SBUF && dst.space == MemSpace::SBUF &&
                         src.dtype == dst.dtype && copy->src.base != copy->dst.base;
      }
      s.loops.assign(loops.begin(), loops.end());
      s.depth = loops.size();
      plan.sites.push_back(std::move(s));
      if (write)
        writingLoops.insert(loops.begin(), loops.end());
    };
    for (Access *a : op.reads())
      if (a->base == victim)
        addSite(a, false);
    if (Access *w = op.write(); w && w->base == victim)
      addSite(w, true);
  });
  if (staging)
    return plan;
  for (Site &s : plan.sites) {
    if (s.write || s.replacesCopy)
      continue;
    VarRanges vars(s.loops);
    while (s.depth > allocDepth) {
      const ForOp *l = s.loops[s.depth - 1];
      if (mentions(*s.access, l->iv) || writingLoops.count(l) || vars.minTrips(*l) < 1)
        break;
      --s.depth;
    }
  }
  plan.spillable = true;
  return plan;
}

/// The staging tile's dimensions: the access's range dimensions, each as
/// large as its extent can get (partitions: at most one group of
/// `partitions` rows).
llvm::SmallVector<Dim, 2> stagingDims(const Site &s, int64_t partitions) {
  const TensorType &t = s.access->base->type;
  VarRanges vars(s.loops);
  llvm::SmallVector<Dim, 2> dims;
  for (unsigned d : s.access->rangeDims()) {
    int64_t cap = d == 0 ? std::min(t.dims[0].size, partitions) : t.dims[d].size;
    int64_t ub = vars.of(*s.access->indices[d].extent).hi;
    dims.push_back(Dim{t.dims[d].label, std::clamp<int64_t>(ub, 1, cap)});
  }
  return dims;
}

int64_t stagingBytes(const TensorType &victim, llvm::ArrayRef<Dim> dims, int64_t partitions) {
  TensorType t;
  t.space = MemSpace::SBUF;
  t.dtype = victim.dtype;
  t.dims.assign(dims.begin(), dims.end());
  return t.bytesPerPartition(partitions) * kStagingBufs;
}

using OpInsertions = llvm::DenseMap<const Op *, std::vector<std::unique_ptr<Op>>>;

/// Inserts the new ops before/after their anchors and drops the replaced
/// ones, in every block.
void insertOps(Block &block, OpInsertions &before, OpInsertions &after,
               const llvm::SmallPtrSetImpl<const Op *> &replaced) {
  std::vector<std::unique_ptr<Op>> ops;
  for (auto &op : block.ops) {
    if (auto *loop = llvm::dyn_cast<ForOp>(op.get()))
      insertOps(loop->body, before, after, replaced);
    const Op *key = op.get();
    if (auto it = before.find(key); it != before.end())
      for (auto &o : it->second)
        ops.push_back(std::move(o));
    if (!replaced.count(key))
      ops.push_back(std::move(op));
    if (auto it = after.find(key); it != after.end())
      for (auto &o : it->second)
        ops.push_back(std::move(o));
  }
  block.ops = std::move(ops);
}

} // namespace

SpillEstimate estimateSpill(Kernel &kernel, AllocOp &alloc, const OpPositions &positions,
                            unsigned at) {
  SpillEstimate est;
  Plan plan = planSpill(kernel, alloc);
  if (!plan.spillable)
    return est;
  est.spillable = true;
  const TensorType &t = alloc.result->type;
  const int64_t partitions = kernel.geometry.partitions;
  est.freedBytes = t.bytesPerPartition(partitions) * alloc.bufs;
  for (const Site &s : plan.sites) {
    llvm::SmallVector<Dim, 2> dims = stagingDims(s, partitions);
    int64_t bytes = s.replacesCopy ? 0 : stagingBytes(t, dims, partitions);
    est.stagingBytes += bytes;
    // A staging tile in a loop body takes space for the whole body.
    const Op *anchor = s.anchor();
    unsigned from = s.depth ? positions.pos.lookup(s.loops[s.depth - 1]) : positions.pos.lookup(anchor);
    unsigned to = s.depth ? positions.end.lookup(s.loops[s.depth - 1]) : positions.end.lookup(anchor);
    if (from <= at && at <= to)
      est.freedBytes -= bytes;
    double moved = double(dtypeBytes(t.dtype));
    for (const Dim &d : dims)
      moved *= double(d.size);
    VarRanges vars(s.loops);
    for (unsigned i = 0; i < s.depth; ++i)
      moved *= double(vars.maxTrips(*s.loops[i]));
    est.trafficBytes += moved;
  }
  return est;
}

Value *spillToHbm(Kernel &kernel, AllocOp &alloc) {
  Plan plan = planSpill(kernel, alloc);
  Value *victim = alloc.result;
  Value *slot = kernel.newValue(ValueKind::Buffer, kernel.uniqueName(victim->name + "_spill"));
  slot->type = victim->type;
  slot->type.space = MemSpace::HBM;
  slot->role = TensorRole::Spill;
  slot->loc = victim->loc;
  slot->def = &alloc;
  alloc.result = slot;
  alloc.bufs = 1;
  alloc.address.reset();

  OpInsertions before, after;
  llvm::SmallPtrSet<const Op *, 8> replaced;
  for (Site &s : plan.sites) {
    // The instruction's region of the slot.
    Access region = *s.access;
    region.base = slot;
    auto dma = std::make_unique<DmaOp>();
    dma->loc = s.op->loc;
    dma->tag = s.write ? DmaTag::SpillSave : DmaTag::SpillReload;
    if (s.replacesCopy) {
      auto *copy = llvm::cast<CopyOp>(s.op);
      dma->dst = s.write ? region : copy->dst;
      dma->src = s.write ? copy->src : region;
      before[s.op].push_back(std::move(dma));
      replaced.insert(s.op);
      continue;
    }
    llvm::SmallVector<Dim, 2> dims = stagingDims(s, kernel.geometry.partitions);
    Value *stage = kernel.newValue(ValueKind::Buffer,
                                   kernel.uniqueName(victim->name + (s.write ? "_save" : "_reload")));
    stage->type.space = MemSpace::SBUF;
    stage->type.dtype = victim->type.dtype;
    stage->type.dims.assign(dims.begin(), dims.end());
    stage->role = TensorRole::Scratch;
    stage->loc = s.op->loc;
    auto stageAlloc = std::make_unique<AllocOp>();
    stageAlloc->loc = s.op->loc;
    stageAlloc->result = stage;
    stageAlloc->bufs = kStagingBufs;
    stage->def = stageAlloc.get();

    // The same extents at the origin of the staging tile.
    Access tile;
    tile.base = stage;
    tile.loc = s.access->loc;
    for (unsigned d : s.access->rangeDims())
      tile.indices.push_back(Index{IndexExpr(0), s.access->indices[d].extent});
    *s.access = tile;

    dma->dst = s.write ? region : tile;
    dma->src = s.write ? tile : region;
    std::vector<std::unique_ptr<Op>> &pre = before[s.anchor()];
    pre.push_back(std::move(stageAlloc));
    if (s.write)
      after[s.op].push_back(std::move(dma));
    else
      pre.push_back(std::move(dma));
  }
  insertOps(kernel.body, before, after, replaced);
  return slot;
}

} // namespace tessel::passes

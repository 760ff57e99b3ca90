//===- passes/Spill.cpp - Moving an SBUF buffer to an HBM spill slot ------===//
#include "passes/Spill.h"

#include "ir/Clone.h"
#include "passes/Policy.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/Casting.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>

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
  /// A reload hoisted out of this loop, whose variable is the start of the
  /// region's partition dimension: the staging tile holds every row the loop
  /// reads (its bounds), filled by one DMA.
  const ForOp *widen = nullptr;
  unsigned widenDim = 0;

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

/// `e` is `%v + c` for the variable `v`: c, or nullopt.
std::optional<int64_t> offsetFrom(const IndexExpr &e, const Value *v) {
  int64_t c = 0;
  llvm::SmallVector<std::pair<const Value *, int64_t>, 2> terms;
  if (!e.linearForm(c, terms) || terms.size() != 1 || terms[0].first != v || terms[0].second != 1)
    return std::nullopt;
  return c;
}

/// The dimension of `s`'s access whose start walks loop `l` one tile per
/// iteration, when its reload can be hoisted out of `l` by widening that
/// dimension to the whole range `l` reads (Spill.h); else nullopt. A range
/// on the partition dimension may not cross a partition group, so only a
/// free dimension widens in practice.
std::optional<unsigned> widenableDim(const Site &s, const ForOp &l, const TileGeometry &g) {
  const Access &a = *s.access;
  if (s.widen || !l.lo.isConst() || !l.hi.isConst() || l.step <= 0)
    return std::nullopt;
  int64_t lo = l.lo.constValue(), hi = l.hi.constValue();
  if (hi <= lo || (hi - lo) % l.step)
    return std::nullopt;
  std::optional<unsigned> dim;
  for (unsigned d = 0; d < a.indices.size(); ++d) {
    const Index &idx = a.indices[d];
    bool inStart = idx.start.mentions(l.iv), inExtent = idx.extent && idx.extent->mentions(l.iv);
    if (!inStart && !inExtent)
      continue;
    if (dim || inExtent || !idx.isRange() || !idx.start.advancesWith(l.iv) ||
        !idx.extent->isConst() || idx.extent->constValue() != l.step)
      return std::nullopt;
    dim = d;
  }
  if (!dim || (*dim == 0 && hi - lo > g.partitions))
    return std::nullopt;
  // The widened staging tile, one copy.
  TensorType t;
  t.space = MemSpace::SBUF;
  t.dtype = a.base->type.dtype;
  VarRanges vars(s.loops);
  for (unsigned d : a.rangeDims()) {
    int64_t size = d == *dim ? hi - lo : std::max<int64_t>(1, vars.of(*a.indices[d].extent).hi);
    if (d == 0)
      size = std::min(size, g.partitions);
    t.dims.push_back(Dim{a.base->type.dims[d].label, size});
  }
  if (t.bytesPerPartition(g.partitions) > int64_t(g.sbufBytes * policy::kSpillReloadSbufShare))
    return std::nullopt;
  return dim;
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
      if (writingLoops.count(l) || vars.minTrips(*l) < 1)
        break;
      if (mentions(*s.access, l->iv)) {
        std::optional<unsigned> d = widenableDim(s, *l, kernel.geometry);
        if (!d)
          break;
        s.widen = l;
        s.widenDim = *d;
      }
      --s.depth;
    }
  }
  plan.spillable = true;
  return plan;
}

/// The staging tile's dimensions: the access's range dimensions, each as
/// large as its extent can get. A DMA's region may span several partition
/// groups (a strip filled 1024 rows at a time), and its staging tile spans
/// as many.
llvm::SmallVector<Dim, 2> stagingDims(const Site &s) {
  const TensorType &t = s.access->base->type;
  VarRanges vars(s.loops);
  llvm::SmallVector<Dim, 2> dims;
  for (unsigned d : s.access->rangeDims()) {
    if (s.widen && d == s.widenDim) {
      dims.push_back(Dim{t.dims[d].label, s.widen->hi.constValue() - s.widen->lo.constValue()});
      continue;
    }
    int64_t ub = vars.of(*s.access->indices[d].extent).hi;
    dims.push_back(Dim{t.dims[d].label, std::clamp<int64_t>(ub, 1, t.dims[d].size)});
  }
  return dims;
}

TensorType stagingType(const TensorType &victim, llvm::ArrayRef<Dim> dims) {
  TensorType t;
  t.space = MemSpace::SBUF;
  t.dtype = victim.dtype;
  t.dims.assign(dims.begin(), dims.end());
  return t;
}

int64_t stagingBufs(const TensorType &t, const StagingDepth &depth) {
  return depth ? depth(t) : kStagingBufs;
}

int64_t stagingBytes(const TensorType &victim, llvm::ArrayRef<Dim> dims, int64_t partitions,
                     const StagingDepth &depth) {
  TensorType t = stagingType(victim, dims);
  return t.bytesPerPartition(partitions) * stagingBufs(t, depth);
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

// --- partial residency -------------------------------------------------------

/// How each access of a buffer's last dimension is to be split.
struct TailAccess {
  Op *op = nullptr;
  Access *access = nullptr;
  const ForOp *loop = nullptr; // the start is this loop's variable, or null: a constant
};

/// Every access of `victim` in `block`, checked for splitTail: its last
/// dimension is a range with a constant extent, starting at a constant or
/// exactly at an enclosing loop's variable (constant bounds, extent at most
/// the step, no matmul resetting on it). False when one is not.
bool collectTailAccesses(Block &block, const Value *victim, std::vector<TailAccess> &out) {
  bool ok = true;
  llvm::SmallPtrSet<const Value *, 4> resetVars;
  walk(block, [&](Op &op, llvm::ArrayRef<ForOp *>) {
    if (auto *mm = llvm::dyn_cast<MatmulOp>(&op))
      resetVars.insert(mm->resetOn.begin(), mm->resetOn.end());
  });
  walk(block, [&](Op &op, llvm::ArrayRef<ForOp *> loops) {
    llvm::SmallVector<Access *, 4> accesses = op.reads();
    for (Access *w : op.writes())
      accesses.push_back(w);
    for (Access *a : accesses) {
      if (a->base != victim)
        continue;
      const Index &idx = a->indices.back();
      if (!idx.isRange() || !idx.extent->isConst()) {
        ok = false;
        continue;
      }
      TailAccess ta{&op, a, nullptr};
      if (!idx.start.isConst()) {
        const ForOp *loop = nullptr;
        for (const ForOp *l : loops)
          if (offsetFrom(idx.start, l->iv) == std::optional<int64_t>(0))
            loop = l;
        if (!loop || !loop->lo.isConst() || !loop->hi.isConst() || loop->step <= 0 ||
            idx.extent->constValue() > loop->step || resetVars.count(loop->iv) ||
            (loop->hi.constValue() - loop->lo.constValue()) % loop->step) {
          ok = false;
          continue;
        }
        ta.loop = loop;
      }
      out.push_back(ta);
    }
  });
  return ok;
}

/// The cut `cols` is legal for every collected access: a loop crossing it
/// is cut on an iteration boundary; a constant range crossing it belongs to
/// a memset (which splits in two).
bool cutIsLegal(const std::vector<TailAccess> &accesses, int64_t cols) {
  for (const TailAccess &ta : accesses) {
    const Index &idx = ta.access->indices.back();
    if (ta.loop) {
      int64_t lo = ta.loop->lo.constValue(), hi = ta.loop->hi.constValue();
      if (lo < cols && cols < hi && (cols - lo) % ta.loop->step)
        return false;
      continue;
    }
    int64_t c = idx.start.constValue(), e = idx.extent->constValue();
    if (c < cols && cols < c + e && !llvm::isa<MemsetOp>(ta.op))
      return false;
  }
  return true;
}

/// Splits the loops and memsets of `block` that cross column `cut` of
/// `victim` and moves the accesses past it to `tail` (see Spill.h).
/// `tailVars` are the variables of loops running wholly past the cut.
void rewriteTail(Kernel &kernel, Block &block, Value *victim, Value *tail, int64_t cut,
                 llvm::SmallPtrSetImpl<const Value *> &tailVars) {
  std::vector<std::unique_ptr<Op>> ops;
  auto moveAccess = [&](Access &a) {
    if (a.base != victim)
      return;
    Index &idx = a.indices.back();
    if (idx.start.isConst()) {
      if (idx.start.constValue() < cut)
        return;
      a.base = tail;
      idx.start = IndexExpr(idx.start.constValue() - cut);
      return;
    }
    llvm::SmallVector<const Value *, 2> vars;
    idx.start.collectVars(vars);
    if (vars.size() == 1 && tailVars.count(vars[0])) {
      a.base = tail;
      idx.start = (idx.start - IndexExpr(cut)).simplified();
    }
  };
  for (auto &op : block.ops) {
    if (auto *loop = llvm::dyn_cast<ForOp>(op.get())) {
      // Does the loop's variable index the victim's columns?
      bool indexes = false;
      walk(loop->body, [&](Op &inner, llvm::ArrayRef<ForOp *>) {
        llvm::SmallVector<Access *, 4> accesses = inner.reads();
        for (Access *w : inner.writes())
          accesses.push_back(w);
        for (Access *a : accesses)
          if (a->base == victim && a->indices.back().start.mentions(loop->iv))
            indexes = true;
      });
      if (indexes && loop->lo.constValue() < cut && cut < loop->hi.constValue()) {
        ValueMap map;
        std::unique_ptr<Op> clone = cloneOp(*loop, kernel, map);
        auto *second = llvm::cast<ForOp>(clone.get());
        loop->hi = IndexExpr(cut);
        second->lo = IndexExpr(cut);
        rewriteTail(kernel, loop->body, victim, tail, cut, tailVars);
        tailVars.insert(second->iv);
        rewriteTail(kernel, second->body, victim, tail, cut, tailVars);
        ops.push_back(std::move(op));
        ops.push_back(std::move(clone));
        continue;
      }
      if (indexes && loop->lo.constValue() >= cut)
        tailVars.insert(loop->iv);
      rewriteTail(kernel, loop->body, victim, tail, cut, tailVars);
      ops.push_back(std::move(op));
      continue;
    }
    if (auto *ms = llvm::dyn_cast<MemsetOp>(op.get()); ms && ms->dst.base == victim) {
      Index &idx = ms->dst.indices.back();
      if (idx.start.isConst() && idx.start.constValue() < cut &&
          cut < idx.start.constValue() + idx.extent->constValue()) {
        int64_t c = idx.start.constValue(), e = idx.extent->constValue();
        auto second = std::make_unique<MemsetOp>(*ms);
        idx.extent = IndexExpr(cut - c);
        second->dst.base = tail;
        second->dst.indices.back() = Index{IndexExpr(0), IndexExpr(c + e - cut)};
        ops.push_back(std::move(op));
        ops.push_back(std::move(second));
        continue;
      }
    }
    for (Access *a : op->reads())
      moveAccess(*a);
    for (Access *w : op->writes())
      moveAccess(*w);
    ops.push_back(std::move(op));
  }
  block.ops = std::move(ops);
}

// --- wide reloads for a reduction's stationary rows ----------------------------

/// Rewrites every access in `op` (recursively): loop variable `from`
/// becomes `to`, and accesses of `acc` move to `accG` at row offset
/// `rowOffset` of its first dimension.
void remapInOp(Op &op, const Value *from, const IndexExpr &to, const Value *acc, Value *accG,
               const IndexExpr &rowOffset) {
  substituteInOp(op, from, to);
  walkOp(op, [&](Op &o) {
    llvm::SmallVector<Access *, 4> accesses = o.reads();
    for (Access *w : o.writes())
      accesses.push_back(w);
    for (Access *a : accesses) {
      if (a->base == acc) {
        a->base = accG;
        a->indices[0].start = (a->indices[0].start + rowOffset).simplified();
      }
    }
  });
}

/// The most PSUM bytes per partition live at once while `acc` is live, or
/// nullopt when `acc` has no live range.
std::optional<int64_t> psumLiveWith(const AllocOp *acc, const std::vector<LiveRange> &ranges) {
  const LiveRange *own = nullptr;
  for (const LiveRange &r : ranges)
    if (r.alloc == acc)
      own = &r;
  if (!own)
    return std::nullopt;
  int64_t most = 0;
  for (const LiveRange &at : ranges) {
    if (at.space != MemSpace::PSUM || !(at.liveAt(own->start) || own->liveAt(at.start)))
      continue;
    unsigned pos = std::max(at.start, own->start);
    int64_t live = 0;
    for (const LiveRange &o : ranges)
      if (o.space == MemSpace::PSUM && o.liveAt(pos))
        live += o.bytes;
    most = std::max(most, live);
  }
  return most;
}

/// Finds, in `block`, loops of the form
///   for %i = a to b step s {                 // rows of a reduction's output
///     %acc = alloc psum<[s, N]> bufs B
///     for %k ... { matmul %acc[0 +: s, ..] <- %victim[.., %i + c +: s], %w[..] reset(%k) }
///     <ops reading %acc and %i>
///   }
/// and processes `g` row tiles per iteration instead: one accumulator of g
/// partition groups (bufs 1), the contraction loop around a loop over the g
/// tiles, then the rest once per tile. The victim's rows of one contraction
/// step are then g tiles wide in its free dimension, so their spill reload
/// is one DMA of g times the bytes per partition instead of g narrow ones.
/// `g` is the largest count up to the moving width that divides the trip
/// count and keeps PSUM within `psumFree` more bytes per partition.
void tileReductionRows(Kernel &kernel, Block &block, const Value *victim,
                       const std::vector<LiveRange> &ranges) {
  const TileGeometry &geo = kernel.geometry;
  for (auto &op : block.ops) {
    auto *loop = llvm::dyn_cast<ForOp>(op.get());
    if (!loop)
      continue;
    tileReductionRows(kernel, loop->body, victim, ranges);
    if (loop->body.ops.size() < 3 || !loop->lo.isConst() || !loop->hi.isConst())
      continue;
    auto *acc = llvm::dyn_cast<AllocOp>(loop->body.ops[0].get());
    auto *red = llvm::dyn_cast<ForOp>(loop->body.ops[1].get());
    if (!acc || !red || acc->result->type.space != MemSpace::PSUM || red->body.ops.size() != 1 ||
        acc->result->type.dims.size() != 2 || acc->result->type.dims[0].size != loop->step ||
        loop->step != geo.partitions)
      continue;
    auto *mm = llvm::dyn_cast<MatmulOp>(red->body.ops[0].get());
    if (!mm || mm->dst.base != acc->result || mm->stationary.base != victim ||
        mm->stationary.indices.size() != 2 || !mm->dst.indices[0].start.isConst() ||
        mm->dst.indices[0].start.constValue() != 0 ||
        !mm->stationary.indices[1].start.advancesWith(loop->iv) ||
        mm->stationary.indices[0].start.mentions(loop->iv) || red->lo.mentions(loop->iv) ||
        red->hi.mentions(loop->iv))
      continue;
    std::optional<int64_t> psumLive = psumLiveWith(acc, ranges);
    if (!psumLive)
      continue;
    int64_t psumFree = geo.psumBytes - *psumLive;
    int64_t trips = loop->constTripCount();
    const TensorType &accType = acc->result->type;
    int64_t fold = accType.bytesPerPartition(geo.partitions);
    int64_t g = 1;
    for (int64_t c = geo.maxMoving / loop->step; c > 1; --c)
      if (trips % c == 0 && c * fold - fold * acc->bufs <= psumFree) {
        g = c;
        break;
      }
    if (g == 1)
      continue;
    int64_t width = g * loop->step;

    // The g-tile accumulator.
    Value *accG = kernel.newValue(ValueKind::Buffer, kernel.uniqueName(acc->result->name));
    accG->type = accType;
    accG->type.dims[0].size = width;
    accG->role = acc->result->role;
    accG->loc = acc->result->loc;
    auto accAlloc = std::make_unique<AllocOp>();
    accAlloc->loc = acc->loc;
    accAlloc->result = accG;
    accAlloc->bufs = 1;
    accG->def = accAlloc.get();

    auto newLoop = [&](llvm::StringRef hint) {
      auto l = std::make_unique<ForOp>();
      l->loc = loop->loc;
      l->iv = kernel.newValue(ValueKind::LoopVar, kernel.uniqueName(hint));
      l->iv->def = l.get();
      l->iv->loc = loop->loc;
      l->lo = IndexExpr(0);
      l->hi = IndexExpr(width);
      l->step = loop->step;
      return l;
    };
    const Value *acc0 = acc->result;
    // for %k { for %t { matmul } }
    std::unique_ptr<ForOp> tiles = newLoop(loop->iv->name + "t");
    IndexExpr rowOf = IndexExpr::var(loop->iv) + IndexExpr::var(tiles->iv);
    remapInOp(*mm, loop->iv, rowOf, acc0, accG, IndexExpr::var(tiles->iv));
    tiles->body.ops = std::move(red->body.ops);
    red->body.ops.clear();
    red->body.ops.push_back(std::move(tiles));
    // for %t { the rest }
    std::unique_ptr<ForOp> rest = newLoop(loop->iv->name + "r");
    IndexExpr rowOfRest = IndexExpr::var(loop->iv) + IndexExpr::var(rest->iv);
    for (size_t i = 2; i < loop->body.ops.size(); ++i) {
      remapInOp(*loop->body.ops[i], loop->iv, rowOfRest, acc0, accG, IndexExpr::var(rest->iv));
      rest->body.ops.push_back(std::move(loop->body.ops[i]));
    }
    std::vector<std::unique_ptr<Op>> body;
    body.push_back(std::move(accAlloc));
    body.push_back(std::move(loop->body.ops[1]));
    body.push_back(std::move(rest));
    loop->body.ops = std::move(body);
    loop->step = width;
  }
}

/// The block holding `op` (searched from `block`), or null.
Block *blockOf(Block &block, const Op *op) {
  for (auto &o : block.ops) {
    if (o.get() == op)
      return &block;
    if (auto *loop = llvm::dyn_cast<ForOp>(o.get()))
      if (Block *b = blockOf(loop->body, op))
        return b;
  }
  return nullptr;
}

} // namespace

int64_t tailGranule(Kernel &kernel, AllocOp &alloc) {
  const Value *victim = alloc.result;
  if (victim->type.space != MemSpace::SBUF || victim->type.dims.size() < 2 || alloc.bufs != 1)
    return 0;
  std::vector<TailAccess> accesses;
  if (!collectTailAccesses(kernel.body, victim, accesses) || accesses.empty())
    return 0;
  int64_t granule = 1;
  for (const TailAccess &ta : accesses)
    if (ta.loop)
      granule = std::lcm(granule, ta.loop->step);
  int64_t cols = victim->type.dims.back().size;
  // The cut must be legal at every multiple (constant ranges other than
  // memsets may pin it); the granule grows until it is, or gives up.
  for (int64_t g = granule; g < cols; g += granule) {
    if (cols % g)
      continue;
    bool all = true;
    for (int64_t cut = g; all && cut < cols; cut += g)
      all = cutIsLegal(accesses, cut);
    if (all)
      return g;
  }
  return 0;
}

AllocOp *splitTail(Kernel &kernel, AllocOp &alloc, int64_t residentCols) {
  Value *victim = alloc.result;
  Value *tail = kernel.newValue(ValueKind::Buffer, kernel.uniqueName(victim->name + "_tail"));
  tail->type = victim->type;
  tail->type.dims.back().size = victim->type.dims.back().size - residentCols;
  tail->role = victim->role;
  tail->loc = victim->loc;
  auto tailAlloc = std::make_unique<AllocOp>();
  tailAlloc->loc = alloc.loc;
  tailAlloc->result = tail;
  tailAlloc->bufs = alloc.bufs;
  tail->def = tailAlloc.get();
  AllocOp *result = tailAlloc.get();

  llvm::SmallPtrSet<const Value *, 8> tailVars;
  rewriteTail(kernel, kernel.body, victim, tail, residentCols, tailVars);
  victim->type.dims.back().size = residentCols;
  alloc.address.reset();
  Block *home = blockOf(kernel.body, &alloc);
  auto it = llvm::find_if(home->ops, [&](const std::unique_ptr<Op> &o) { return o.get() == &alloc; });
  home->ops.insert(std::next(it), std::move(tailAlloc));
  return result;
}

int64_t prefetchDepth(const TensorType &t, const runtime::Target &target, int64_t partitions) {
  double bytes = double(t.bytesPerPartition(partitions)) *
                 double(std::min<int64_t>(t.dims[0].size, partitions));
  double transferNs = bytes / target.hbm_bandwidth_gbs;
  int64_t depth = int64_t(std::ceil((target.dma_fixed_latency_ns + transferNs) / transferNs));
  return std::min(std::max<int64_t>(depth, 2), policy::kMaxPrefetch);
}

void widenReductionReloads(Kernel &kernel, AllocOp &alloc) {
  tileReductionRows(kernel, kernel.body, alloc.result, computeLiveRanges(kernel));
}

SpillEstimate estimateSpill(Kernel &kernel, AllocOp &alloc, const OpPositions &positions,
                            unsigned at, const StagingDepth &depth) {
  SpillEstimate est;
  Plan plan = planSpill(kernel, alloc);
  if (!plan.spillable)
    return est;
  est.spillable = true;
  const TensorType &t = alloc.result->type;
  const int64_t partitions = kernel.geometry.partitions;
  est.freedBytes = t.bytesPerPartition(partitions) * alloc.bufs;
  for (const Site &s : plan.sites) {
    llvm::SmallVector<Dim, 2> dims = stagingDims(s);
    int64_t bytes = s.replacesCopy ? 0 : stagingBytes(t, dims, partitions, depth);
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

Value *spillToHbm(Kernel &kernel, AllocOp &alloc, const StagingDepth &depth,
                  std::vector<AllocOp *> *staging) {
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
    // The instruction's region of the slot (a widened reload's: every row
    // its loop reads).
    Access region = *s.access;
    region.base = slot;
    if (s.widen) {
      int64_t lo = s.widen->lo.constValue(), hi = s.widen->hi.constValue();
      Index &idx = region.indices[s.widenDim];
      idx = Index{idx.start.substitute(s.widen->iv, IndexExpr(lo)).simplified(), IndexExpr(hi - lo)};
    }
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
    llvm::SmallVector<Dim, 2> dims = stagingDims(s);
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
    stageAlloc->bufs = stagingBufs(stage->type, depth);
    stage->def = stageAlloc.get();
    if (staging)
      staging->push_back(stageAlloc.get());

    // The same extents at the origin of the staging tile.
    Access tile;
    tile.base = stage;
    tile.loc = s.access->loc;
    unsigned widenTileDim = 0;
    for (unsigned d : s.access->rangeDims()) {
      IndexExpr start(0);
      if (s.widen && d == s.widenDim) { // the loop's tile within the widened one
        start = (IndexExpr::var(s.widen->iv) - IndexExpr(s.widen->lo.constValue())).simplified();
        widenTileDim = unsigned(tile.indices.size());
      }
      tile.indices.push_back(Index{start, s.access->indices[d].extent});
    }
    // What the DMA moves: the instruction's tile, or a widened reload's
    // whole staging tile.
    Access whole = tile;
    if (s.widen)
      whole.indices[widenTileDim] = Index{IndexExpr(0), IndexExpr(dims[widenTileDim].size)};
    *s.access = tile;

    dma->dst = s.write ? region : whole;
    dma->src = s.write ? whole : region;
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

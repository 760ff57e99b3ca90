//===- passes/WidenLoads.cpp - Several partition groups per DMA transfer --===//
//
// `widen-loads` makes the tiles a loop streams in from HBM arrive in fewer,
// larger transfers. TileGen's loops walk a contraction one partition group
// (128 rows) at a time and load each operand tile as they go:
//
//   for %k = 0 to K step 128 {
//     %W_tile = alloc sbuf<bf16, [K:128, R:512]>
//     dma %W_tile[0 +: 128, 0 +: 512] <- %W[%k +: 128, %n +: 512]
//     ... uses of %W_tile[0 +: 128, ...] ...
//   }
//
// Every transfer pays a fixed cost on each DMA engine it runs on
// (dma_transfer_overhead_ns: descriptor processing and completion), so a
// [128, 512] bf16 tile, 8 KiB per engine, moves at ~0.7 of the engines'
// rate on trn1 (runtime/DmaModel.h). The pass strip-mines the loop by g and
// loads g groups at once into a partition-folded tile (one transfer: tensor
// row r lands in partition r mod 128, fold r div 128, docs/tile-ir.md):
//
//   for %ko = 0 to K step 128 g {
//     %W_tile = alloc sbuf<bf16, [K:128 g, R:512]>
//     dma %W_tile[0 +: 128 g, 0 +: 512] <- %W[%ko +: 128 g, %n +: 512]
//     for %ki = 0 to 128 g step 128 {
//       ... the body, %k = %ko + %ki, uses of %W_tile[%ki +: 128, ...] ...
//     }
//   }
//
// This is the block shape of AWS's optimized NKI matmul (a K block of several
// tiles per load). A fill loop, whose only op loads successive groups of a
// folded buffer allocated outside it (the K-blocked form's block of B), has
// its transfers merged in place by stepping g groups at a time. g is the smallest divisor of the loop's trip count whose
// transfers reach policy::kWideLoadShare of the DMA throughput of loading the
// whole loop at once (the target's DMA model decides, no byte threshold of
// its own), and only while the kernel still fits SBUF with the block
// planner's headroom (the wider tiles keep their buffer counts). Each
// iteration's work and order are unchanged; only the transfers are merged.
//
// First, a fill nest that walks a strip's columns one partition group at a
// time, loading a tile of columns per step, loads all its columns at once:
//
//   for %mi = 0 to 512 step 128 {
//     for %k = 0 to K step 128 { dma %S[%k +: 128, %mi +: 128] <- %T[%k +: 128, %m + %mi +: 128] } }
// becomes
//   for %k = 0 to K step 128 { dma %S[%k +: 128, 0 +: 512] <- %T[%k +: 128, %m +: 512] }
//
// (the two-kernel MLP's down projection filling its h^T strip from the
// transposed hand-off): each partition's run grows from 256 B to 1 KiB, and
// the strip arrives in the contraction order its first reader uses.
//
//===----------------------------------------------------------------------===//
#include "ir/Clone.h"
#include "passes/Passes.h"
#include "passes/Policy.h"
#include "passes/analysis/KernelCost.h"
#include "passes/analysis/KernelCost.h"
#include "runtime/Timing.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Casting.h"

#include <functional>
#include <optional>

namespace tessel::passes {
namespace {

using namespace ir;

/// A tile the loop allocates and fills from HBM once per iteration.
struct StreamedTile {
  AllocOp *alloc;
  DmaOp *load;
};

/// The tiles `loop` streams: an SBUF alloc of one partition group at the top
/// of its body, written only by one plain load from HBM (also at the top of
/// the body) whose rows advance with the loop and whose columns do not.
llvm::SmallVector<StreamedTile, 4> streamedTiles(ForOp &loop, int64_t partitions) {
  llvm::SmallVector<StreamedTile, 4> tiles;
  for (auto &op : loop.body.ops) {
    auto *alloc = llvm::dyn_cast<AllocOp>(op.get());
    if (!alloc || alloc->result->type.space != MemSpace::SBUF ||
        alloc->result->type.dims.empty() || alloc->result->type.dims[0].size != partitions)
      continue;
    Value *tile = alloc->result;
    DmaOp *load = nullptr;
    int writers = 0;
    walk(loop.body, [&](Op &o, llvm::ArrayRef<ForOp *>) {
      if (Access *w = o.write(); w && w->base == tile) {
        ++writers;
        load = llvm::dyn_cast<DmaOp>(&o);
      }
    });
    if (writers != 1 || !load || load->transpose || load->tag != DmaTag::None ||
        load->src.base->type.space != MemSpace::HBM ||
        llvm::none_of(loop.body.ops, [&](auto &o) { return o.get() == load; }))
      continue;
    const Index &row = load->src.indices[0], &dstRow = load->dst.indices[0];
    if (!row.hasExtent(partitions) || !dstRow.start.isConst() || dstRow.start.constValue() != 0 ||
        !dstRow.hasExtent(partitions) || !row.start.advancesWith(loop.iv))
      continue;
    bool columnsFixed = llvm::all_of(llvm::drop_begin(load->src.indices), [&](const Index &i) {
      return !i.start.mentions(loop.iv) && (!i.extent || !i.extent->mentions(loop.iv));
    });
    if (columnsFixed)
      tiles.push_back({alloc, load});
  }
  return tiles;
}

/// Bytes per ns a stream of back-to-back loads of `groups` partition groups
/// of rows of `rowBytes` sustains: each transfer holds the shared DMA
/// bandwidth for its occupancy.
double throughput(const runtime::InstructionCosts &model, int64_t rowBytes, int64_t groups, int64_t partitions) {
  int64_t bytes = rowBytes * partitions * groups;
  auto c = model.dma(bytes, partitions, rowBytes, false);
  return double(bytes) / std::max(c.occupancy, double(bytes) / c.rate);
}

/// Bytes of one partition's row of `load`'s source (its columns' extents), or
/// none when an extent is not constant.
std::optional<int64_t> columnBytes(const DmaOp &load) {
  int64_t bytes = dtypeBytes(load.src.base->type.dtype);
  for (const Index &i : llvm::drop_begin(load.src.indices))
    if (i.extent) {
      if (!i.extent->isConst())
        return std::nullopt;
      bytes *= i.extent->constValue();
    }
  return bytes;
}

/// The smallest divisor g of `trips` whose transfers of g groups reach
/// `share` of the throughput of one transfer for all trips.
int64_t groupsFor(const runtime::InstructionCosts &model, int64_t rowBytes, int64_t trips, int64_t partitions,
                  double share = policy::kWideLoadShare) {
  double best = throughput(model, rowBytes, trips, partitions);
  int64_t g = 1;
  while (g < trips && (trips % g != 0 || throughput(model, rowBytes, g, partitions) < share * best))
    ++g;
  return g;
}

/// Whether `load` is a plain load from HBM into one partition group of a
/// folded buffer per iteration of `loop`, source and destination rows
/// advancing with the loop, their columns fixed.
bool loadsSuccessiveGroups(const DmaOp &load, const ForOp &loop, int64_t partitions) {
  if (load.transpose || load.tag != DmaTag::None || load.src.base->type.space != MemSpace::HBM ||
      load.dst.base->type.dims[0].size <= partitions)
    return false;
  const Index &src = load.src.indices[0], &dst = load.dst.indices[0];
  if (!src.hasExtent(partitions) || !dst.hasExtent(partitions) || !src.start.advancesWith(loop.iv) ||
      !dst.start.advancesWith(loop.iv))
    return false;
  auto fixed = [&](const Access &a) {
    return llvm::all_of(llvm::drop_begin(a.indices), [&](const Index &i) {
      return !i.start.mentions(loop.iv) && (!i.extent || !i.extent->mentions(loop.iv));
    });
  };
  return fixed(load.src) && fixed(load.dst);
}

/// A fill loop: one load per iteration into successive partition groups of
/// a folded buffer allocated outside the loop (a K block of B's strip):
///   for %k = 0 to L step 128 { dma %T[%k + a +: 128, C] <- %W[%k + b +: 128, C'] }
/// Its transfers merge in place: `for %ko = 0 to L step 128 g` with
/// `dma %T[%ko + a +: 128 g, C] <- %W[%ko + b +: 128 g, C']`.
DmaOp *fillLoad(ForOp &loop, int64_t partitions) {
  auto *load = loop.body.ops.size() == 1 ? opAt<DmaOp>(loop.body, 0) : nullptr;
  return load && loadsSuccessiveGroups(*load, loop, partitions) ? load : nullptr;
}

/// The loads of a streamed fill: a plain load at the top level of `loop`'s
/// body into successive partition groups of an SBUF buffer allocated outside
/// the loop, its columns fixed, while the rest of the body touches that
/// buffer only by reading the rows this iteration loads (widen-columns'
/// first block, which loads a K column as its contraction goes):
///   for %k = 0 to L step 128 {
///     dma %T[%k + a +: 128, C] <- %W[%k + b +: 128, C']
///     ... reads of %T[%k + a +: 128, ...] ...
///   }
/// Loading g groups at the top of every g-th iteration only moves writes of
/// rows nobody reads before their own iteration earlier.
llvm::SmallVector<DmaOp *, 4> streamedFillLoads(ForOp &loop, int64_t partitions) {
  llvm::SmallVector<DmaOp *, 4> loads;
  for (auto &op : loop.body.ops) {
    auto *load = llvm::dyn_cast<DmaOp>(op.get());
    if (!load || load->dst.base->type.space != MemSpace::SBUF || !loadsSuccessiveGroups(*load, loop, partitions))
      continue;
    const Index &dst = load->dst.indices[0];
    const Value *buffer = load->dst.base;
    bool inside = false, onlyOwnRows = true;
    walk(loop.body, [&](Op &o, llvm::ArrayRef<ForOp *>) {
      inside |= &o == buffer->def;
      if (&o == load)
        return;
      if (Access *w = o.write(); w && w->base == buffer)
        onlyOwnRows = false;
      for (Access *r : o.reads())
        if (r->base == buffer &&
            (r->indices.empty() || !r->indices[0].start.structurallyEqual(dst.start) ||
             !r->indices[0].hasExtent(partitions)))
          onlyOwnRows = false;
    });
    if (!inside && onlyOwnRows)
      loads.push_back(load);
  }
  return loads;
}

/// The largest value of `extent`: its constant, or else the size of the
/// dimension `dim` of the tile's buffer.
int64_t largestExtent(const Access &a, unsigned dim) {
  const Index &i = a.indices[dim];
  if (!i.extent)
    return 1;
  return i.extent->isConst() ? i.extent->constValue() : a.base->type.dims[dim].size;
}

/// Whether one iteration of `loop` keeps the DMA engines policy::
/// kFillBoundRatio times busier with the `fills`' transfers (one group each)
/// than the tensor engine with its matmuls (at their largest extents), as a
/// decode-sized block streaming its weight is. A merged transfer makes the
/// first reader of each block wait for g groups, and where the buffer has
/// one copy the next block's fill waits for every reader of them; only a
/// loop whose matmuls hardly hide its loads gains more than that costs.
bool fillBound(const runtime::InstructionCosts &model, ForOp &loop, llvm::ArrayRef<DmaOp *> fills,
               int64_t partitions) {
  double dmaNs = 0;
  for (DmaOp *load : fills) {
    auto rowBytes = columnBytes(*load);
    if (!rowBytes)
      return false;
    dmaNs += model.dma(*rowBytes * partitions, partitions, *rowBytes, false).occupancy;
  }
  double tensorNs = 0;
  bool known = true;
  std::function<void(Block &, int64_t)> visit = [&](Block &block, int64_t times) {
    for (auto &op : block.ops) {
      if (auto *inner = llvm::dyn_cast<ForOp>(op.get())) {
        if (!inner->lo.isConst() || !inner->hi.isConst())
          known = false;
        else
          visit(inner->body, times * inner->constTripCount());
      } else if (auto *mm = llvm::dyn_cast<MatmulOp>(op.get())) {
        auto st = mm->stationary.rangeDims(), mv = mm->moving.rangeDims();
        if (st.size() != 2 || mv.size() != 2) {
          known = false;
          continue;
        }
        bool fp32 = mm->moving.base->type.dtype == DType::F32;
        tensorNs += double(times) * model.matmulNs(largestExtent(mm->stationary, st[0]),
                                                   largestExtent(mm->stationary, st[1]),
                                                   largestExtent(mm->moving, mv[1]), fp32, false);
      }
    }
  };
  visit(loop.body, 1);
  return known && dmaNs > policy::kFillBoundRatio * tensorNs;
}

/// The plain load of a column fill loop: `loop` holds only it, or only a
/// loop holding only it; its destination is an SBUF buffer allocated outside
/// `loop` whose columns, like the source's, advance with the loop by
/// exactly one step's constant extent while nothing else moves.
DmaOp *columnFillLoad(ForOp &loop) {
  if (loop.body.ops.size() != 1)
    return nullptr;
  Op *only = loop.body.ops.front().get();
  if (auto *inner = llvm::dyn_cast<ForOp>(only))
    only = inner->body.ops.size() == 1 ? inner->body.ops.front().get() : nullptr;
  auto *load = llvm::dyn_cast_or_null<DmaOp>(only);
  if (!load || load->transpose || load->tag != DmaTag::None ||
      load->src.base->type.space != MemSpace::HBM || load->dst.base->type.space != MemSpace::SBUF ||
      load->src.indices.size() != 2 || load->dst.indices.size() != 2)
    return nullptr;
  for (const Access *a : {&load->src, &load->dst}) {
    const Index &rows = a->indices[0], &cols = a->indices[1];
    if (rows.start.mentions(loop.iv) || (rows.extent && rows.extent->mentions(loop.iv)) ||
        !cols.start.advancesWith(loop.iv) || !cols.hasExtent(loop.step))
      return nullptr;
  }
  bool allocInside = false;
  walk(loop.body, [&](Op &o, llvm::ArrayRef<ForOp *>) { allocInside |= &o == load->dst.base->def; });
  return allocInside ? nullptr : load;
}

/// Loads every column of each column fill loop (columnFillLoad) at once.
bool collapseColumnFills(Block &block) {
  bool changed = false;
  for (auto &op : block.ops) {
    auto *loop = llvm::dyn_cast<ForOp>(op.get());
    if (!loop)
      continue;
    DmaOp *load = columnFillLoad(*loop);
    if (!load || !loop->lo.isConst() || !loop->hi.isConst() || loop->constTripCount() < 2 ||
        (loop->hi.constValue() - loop->lo.constValue()) % loop->step != 0) {
      changed |= collapseColumnFills(loop->body);
      continue;
    }
    const int64_t span = loop->hi.constValue() - loop->lo.constValue();
    for (Access *a : {&load->src, &load->dst}) {
      a->indices[1].start = a->indices[1].start.substitute(loop->iv, loop->lo).simplified();
      a->indices[1].extent = IndexExpr(span);
    }
    std::unique_ptr<Op> body = std::move(loop->body.ops.front());
    op = std::move(body);
    changed = true;
  }
  return changed;
}

class WidenLoadsPass : public Pass {
public:
  llvm::StringRef name() const override { return "widen-loads"; }
  llvm::StringRef description() const override {
    return "load several partition groups of a streamed tile in one DMA transfer (a loop over the "
           "contraction strip-mined so each load moves g tiles)";
  }

  PassResult run(Kernel &kernel, PassContext &ctx) override {
    bool changed = collapseColumnFills(kernel.body);
    llvm::SmallVector<std::pair<Block *, ForOp *>, 8> loops;
    collectLoops(kernel.body, loops);
    runtime::InstructionCosts model(ctx.target);
    // The kernel's SBUF peak, computed again only after a loop is rewritten.
    std::optional<int64_t> peak;
    for (auto [parent, loop] : loops)
      if (widen(kernel, ctx, model, *parent, *loop, peak)) {
        changed = true;
        peak.reset();
      }
    return changed ? PassResult::Changed : PassResult::Unchanged;
  }

private:
  static void collectLoops(Block &block, llvm::SmallVectorImpl<std::pair<Block *, ForOp *>> &out) {
    for (auto &op : block.ops)
      if (auto *loop = llvm::dyn_cast<ForOp>(op.get())) {
        collectLoops(loop->body, out);
        out.push_back({&block, loop});
      }
  }

  /// The group count for `tiles` in a loop of `trips` iterations (1: leave it).
  static int64_t chooseGroups(const runtime::InstructionCosts &model, llvm::ArrayRef<StreamedTile> tiles, int64_t trips,
                              int64_t partitions) {
    int64_t groups = 1;
    for (const StreamedTile &t : tiles)
      groups = std::max(
          groups, groupsFor(model, t.alloc->result->type.bytesPerPartition(partitions), trips, partitions));
    return groups;
  }

  /// Merges the transfers of a fill loop (fillLoad) in place.
  static bool widenFill(Kernel &kernel, const runtime::InstructionCosts &model, ForOp &loop, int64_t trips) {
    const int64_t partitions = kernel.geometry.partitions;
    DmaOp *load = fillLoad(loop, partitions);
    if (!load)
      return false;
    auto rowBytes = columnBytes(*load);
    if (!rowBytes)
      return false;
    int64_t groups = groupsFor(model, *rowBytes, trips, partitions);
    if (groups <= 1)
      return false;
    loop.step = partitions * groups;
    load->src.indices[0].extent = IndexExpr(loop.step);
    load->dst.indices[0].extent = IndexExpr(loop.step);
    return true;
  }

  bool widen(Kernel &kernel, PassContext &ctx, const runtime::InstructionCosts &model, Block &parent, ForOp &loop,
             std::optional<int64_t> &peak) {
    const int64_t partitions = kernel.geometry.partitions;
    if (!loop.lo.isConst() || !loop.hi.isConst() || loop.step != partitions)
      return false;
    int64_t span = loop.hi.constValue() - loop.lo.constValue();
    int64_t trips = loop.constTripCount();
    if (trips < 2 || span % partitions != 0)
      return false;
    auto tiles = streamedTiles(loop, partitions);
    if (tiles.empty() && fillLoad(loop, partitions))
      return widenFill(kernel, model, loop, trips);
    auto fills = streamedFillLoads(loop, partitions);
    if (tiles.empty() && fills.empty())
      return false;
    int64_t groups = chooseGroups(model, tiles, trips, partitions);
    // A fill loaded whole would hold its first reader until the last group
    // lands (the form widen-columns dropped), so a fill keeps at least two
    // transfers.
    if (!fillBound(model, loop, fills, partitions))
      fills.clear();
    if (tiles.empty() && fills.empty())
      return false;
    for (DmaOp *load : fills)
      if (auto rowBytes = columnBytes(*load))
        if (int64_t g = groupsFor(model, *rowBytes, trips, partitions, policy::kWideFillShare); g < trips)
          groups = std::max(groups, g);
    // The wider tiles must leave the kernel within the planner's SBUF limit.
    if (!peak)
      peak = analysis::sbufLeastPeakBytesPerPartition(kernel);
    auto extraBytes = [&](int64_t g) {
      int64_t extra = 0;
      for (const StreamedTile &t : tiles)
        extra += (g - 1) * t.alloc->result->type.bytesPerPartition(partitions) * t.alloc->bufs;
      return extra;
    };
    while (groups > 1 && (trips % groups != 0 || *peak + extraBytes(groups) > analysis::plannerSbufLimit(ctx.target)))
      --groups;
    if (groups <= 1)
      return false;
    rewrite(kernel, parent, loop, tiles, fills, groups);
    return true;
  }

  /// Replaces `loop` in `parent` by the strip-mined nest with wide loads:
  /// `tiles` get wide tiles of their own, `fills` (streamedFillLoads) load
  /// their g groups into the buffer they already fill.
  static void rewrite(Kernel &kernel, Block &parent, ForOp &loop, llvm::ArrayRef<StreamedTile> tiles,
                      llvm::ArrayRef<DmaOp *> fills, int64_t groups) {
    const int64_t partitions = kernel.geometry.partitions;
    const int64_t rows = partitions * groups;
    auto outer = std::make_unique<ForOp>();
    outer->loc = loop.loc;
    outer->lo = loop.lo;
    outer->hi = loop.hi;
    outer->step = rows;
    outer->parallel = loop.parallel;
    outer->block = loop.block;
    outer->iv = kernel.newValue(ValueKind::LoopVar, kernel.uniqueName(loop.iv->name + "o"));
    outer->iv->def = outer.get();
    outer->iv->loc = loop.iv->loc;

    auto inner = std::make_unique<ForOp>();
    inner->loc = loop.loc;
    inner->lo = 0;
    inner->hi = rows;
    inner->step = partitions;
    inner->parallel = loop.parallel;
    inner->iv = kernel.newValue(ValueKind::LoopVar, kernel.uniqueName(loop.iv->name + "i"));
    inner->iv->def = inner.get();
    inner->iv->loc = loop.iv->loc;
    const IndexExpr ko = IndexExpr::var(outer->iv), ki = IndexExpr::var(inner->iv);

    // The wide tiles and their loads, at the top of the outer loop.
    llvm::DenseMap<const Value *, Value *> wide;
    for (const StreamedTile &t : tiles) {
      Value *old = t.alloc->result;
      Value *w = kernel.newValue(ValueKind::Buffer, kernel.uniqueName(old->name));
      w->type = old->type;
      w->type.dims[0].size = rows;
      w->role = old->role;
      w->loc = old->loc;
      auto alloc = std::make_unique<AllocOp>();
      alloc->loc = t.alloc->loc;
      alloc->result = w;
      alloc->bufs = t.alloc->bufs;
      w->def = alloc.get();
      outer->body.ops.push_back(std::move(alloc));
      wide[old] = w;
    }
    for (const StreamedTile &t : tiles) {
      auto load = std::make_unique<DmaOp>();
      load->loc = t.load->loc;
      load->dst = t.load->dst;
      load->dst.base = wide[t.load->dst.base];
      load->dst.indices[0].extent = IndexExpr(rows);
      load->src = t.load->src;
      load->src.indices[0].start = t.load->src.indices[0].start.substitute(loop.iv, ko).simplified();
      load->src.indices[0].extent = IndexExpr(rows);
      outer->body.ops.push_back(std::move(load));
    }

    for (auto &op : loop.body.ops) {
      auto *load = llvm::dyn_cast<DmaOp>(op.get());
      if (!load || !llvm::is_contained(fills, load))
        continue;
      for (Access *a : {&load->src, &load->dst}) {
        a->indices[0].start = a->indices[0].start.substitute(loop.iv, ko).simplified();
        a->indices[0].extent = IndexExpr(rows);
      }
      outer->body.ops.push_back(std::move(op));
    }

    // The rest of the body, once per group: %k = %ko + %ki, tile rows at %ki.
    const IndexExpr k = ko + ki;
    for (auto &op : loop.body.ops) {
      if (!op)
        continue;
      bool moved = llvm::any_of(tiles, [&](const StreamedTile &t) {
        return op.get() == t.alloc || op.get() == t.load;
      });
      if (moved)
        continue;
      substituteInOp(*op, loop.iv, k);
      walkOp(*op, [&](Op &o) {
        if (auto *mm = llvm::dyn_cast<MatmulOp>(&o)) {
          auto at = llvm::find(mm->resetOn, loop.iv);
          if (at != mm->resetOn.end()) {
            *at = outer->iv;
            mm->resetOn.insert(at + 1, inner->iv);
          }
        }
        llvm::SmallVector<Access *, 4> accesses = o.reads();
        for (Access *w : o.writes())
          accesses.push_back(w);
        for (Access *a : accesses) {
          if (auto it = wide.find(a->base); it != wide.end()) {
            a->base = it->second;
            a->indices[0].start = (a->indices[0].start + ki).simplified();
          }
        }
      });
      inner->body.ops.push_back(std::move(op));
    }
    outer->body.ops.push_back(std::move(inner));
    for (auto &op : parent.ops)
      if (op.get() == &loop) {
        op = std::move(outer);
        break;
      }
  }
};

} // namespace

std::unique_ptr<Pass> createWidenLoadsPass() { return std::make_unique<WidenLoadsPass>(); }

} // namespace tessel::passes

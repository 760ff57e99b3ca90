//===- passes/Allocate.cpp - SBUF/PSUM addresses by liveness --------------===//
//
// `allocate` gives every SBUF and PSUM alloc an address (`addr N`, a byte
// offset per partition) so that buffers live at the same time never overlap
// and buffers that are never live together share space.
//
//  1. Live ranges (passes/BufferLiveness.h): a buffer allocated in a loop body
//     lives for the whole body (its copies rotate across iterations); one
//     allocated at the top of the kernel lives until the last loop nest that
//     uses it. SBUF is first placed with PhaseSharing::Prefetch (a phase's
//     tiles never share addresses with the previous phase's, so its first
//     loads overlap that phase's compute); only when that does not fit do
//     the phases share (PhaseSharing::Shared), before anything is spilled.
//  2. Alignment: SBUF buffers start on the target's sbuf_align_bytes. A PSUM
//     buffer starts on its fold size (the bytes one partition group of one
//     copy takes)
//     when that divides the bank, else at the first offset within a bank
//     from which none of its folds (copies included) crosses a bank: either
//     way no fold -- one accumulation tile -- straddles two banks (target
//     psum_bank_bytes).
//  3. Placement, per memory space: greedy by decreasing size (TFLite's arena
//     planner), each buffer at the lowest aligned offset clear of every
//     overlapping buffer already placed; also tried in program order, and
//     the order with the lower peak wins.
//  4. Spilling: while the SBUF peak is over the target's capacity, one SBUF
//     buffer live at the most crowded point moves to HBM (passes/Spill.h:
//     a spill slot, staging tiles, spill_save/spill_reload DMAs) and
//     placement starts again. The victim frees the most SBUF there per byte
//     of spill traffic it adds: freed = its bytes minus the staging tiles
//     live there; traffic = its saved and reloaded regions times the trip
//     counts of the loops around the DMAs. That picks a large strip filled
//     and read in outer loops (a cached row strip: many KiB per partition
//     for a few passes over it) and never a streaming tile, whose staging
//     tile would be as large as itself (freed <= 0 rules it out).
//     Partial residency: a victim that can be cut along its last dimension
//     (passes/Spill.h, splitTail) is cut, and only its tail -- the fewest
//     whole granules of columns that cover the overflow -- is spilled; the
//     head stays resident. A cached strip too large by a third then keeps
//     two thirds of its columns in SBUF instead of reloading all of them.
//  5. A peak still over capacity (nothing worth spilling is live there, or
//     PSUM, which is never spilled) is an error at the most crowded point,
//     naming every buffer live there with its size and suggesting a smaller
//     row strip.
//
// The pass re-places every on-chip buffer (addresses already in the input
// are recomputed), so running it twice changes nothing the second time.
// Statistics (--stats): sbuf/psum peak bytes per partition, bytes saved by
// sharing, buffers spilled, the SBUF bytes they freed, the staging bytes and
// the spill traffic they cost.
//
//===----------------------------------------------------------------------===//
#include "passes/BufferLiveness.h"
#include "passes/Passes.h"
#include "passes/Spill.h"
#include "passes/Statistics.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

namespace tessel::passes {
namespace {

using namespace ir;

/// The smallest t >= v with t = offset (mod align).
int64_t alignUp(int64_t v, int64_t align, int64_t offset = 0) {
  int64_t over = std::max<int64_t>(v - offset, 0);
  return offset + llvm::alignTo(over, align);
}

struct Item {
  LiveRange range;
  int64_t align = 1;  // the address is offset modulo align
  int64_t offset = 0;
  int64_t address = 0;
};

/// Places `items` (indices into `all`) in the given order; returns the peak.
int64_t placeInOrder(std::vector<Item> &all, const std::vector<size_t> &order) {
  std::vector<size_t> placed;
  int64_t peak = 0;
  for (size_t i : order) {
    Item &it = all[i];
    std::vector<const Item *> conflicts;
    for (size_t j : placed)
      if (all[j].range.overlaps(it.range))
        conflicts.push_back(&all[j]);
    std::sort(conflicts.begin(), conflicts.end(),
              [](const Item *a, const Item *b) { return a->address < b->address; });
    int64_t candidate = alignUp(0, it.align, it.offset);
    for (const Item *c : conflicts) {
      if (candidate + it.range.bytes <= c->address)
        break;
      candidate = std::max(candidate, alignUp(c->address + c->range.bytes, it.align, it.offset));
    }
    it.address = candidate;
    placed.push_back(i);
    peak = std::max(peak, candidate + it.range.bytes);
  }
  return peak;
}

/// Best placement of `items`: greedy by size, or program order.
int64_t placeAll(std::vector<Item> &items) {
  std::vector<size_t> bySize(items.size()), byStart(items.size());
  for (size_t i = 0; i < items.size(); ++i)
    bySize[i] = byStart[i] = i;
  std::stable_sort(bySize.begin(), bySize.end(), [&](size_t a, size_t b) {
    if (items[a].range.bytes != items[b].range.bytes)
      return items[a].range.bytes > items[b].range.bytes;
    return items[a].range.start < items[b].range.start;
  });
  std::vector<Item> alt = items;
  int64_t peakSize = placeInOrder(items, bySize);
  int64_t peakStart = placeInOrder(alt, byStart);
  if (peakStart < peakSize) {
    items = std::move(alt);
    return peakStart;
  }
  return peakSize;
}

/// The most crowded program point of `items` (an item's start) and the
/// bytes live there: a lower bound every placement pays.
unsigned crowdedPoint(const std::vector<Item> &items, int64_t &bytes) {
  unsigned worstPos = 0;
  bytes = -1;
  for (const Item &it : items) {
    int64_t live = 0;
    for (const Item &o : items)
      if (o.range.liveAt(it.range.start))
        live += o.range.bytes;
    if (live > bytes) {
      bytes = live;
      worstPos = it.range.start;
    }
  }
  return worstPos;
}

/// The spill staging tiles with more than two copies drop to two; true
/// when one did.
bool shallowerStaging(const std::vector<AllocOp *> &staging) {
  bool changed = false;
  for (AllocOp *a : staging)
    if (a->bufs > 2) {
      a->bufs = 2;
      changed = true;
    }
  return changed;
}

/// What this run's spills added up to (--stats).
struct SpillTotals {
  int64_t buffers = 0, splits = 0, freedBytes = 0, stagingBytes = 0;
  double trafficBytes = 0;
};

class AllocatePass : public Pass {
public:
  llvm::StringRef name() const override { return "allocate"; }
  llvm::StringRef description() const override {
    return "SBUF/PSUM addresses by liveness; siblings share space; PSUM folds stay in one bank; "
           "spills to HBM when SBUF overflows";
  }
  PassResult run(Kernel &kernel, PassContext &ctx) override;

private:
  bool collectItems(Kernel &kernel, MemSpace space, PassContext &ctx, std::vector<Item> &items,
                    PhaseSharing phases);
  bool psumAlignment(const LiveRange &r, int64_t partitions, PassContext &ctx, int64_t &align,
                     int64_t &offset);
  AllocOp *chooseVictim(Kernel &kernel, const std::vector<Item> &items, const StagingDepth &depth,
                        SpillEstimate &chosen);
  void reportOverflow(Kernel &kernel, const std::vector<Item> &items, MemSpace space,
                      int64_t peak, int64_t capacity, const SpillTotals &spills,
                      PassContext &ctx);
};

bool AllocatePass::collectItems(Kernel &kernel, MemSpace space, PassContext &ctx,
                                std::vector<Item> &items, PhaseSharing phases) {
  items.clear();
  bool ok = true;
  for (const LiveRange &r : computeLiveRanges(kernel, phases)) {
    if (r.space != space)
      continue;
    Item it;
    it.range = r;
    it.align = kernel.geometry.sbufAlignBytes;
    if (space == MemSpace::PSUM &&
        !psumAlignment(r, kernel.geometry.partitions, ctx, it.align, it.offset)) {
      ok = false;
      continue;
    }
    items.push_back(it);
  }
  return ok;
}

bool AllocatePass::psumAlignment(const LiveRange &r, int64_t partitions, PassContext &ctx,
                                 int64_t &align, int64_t &offset) {
  const TensorType &t = r.alloc->result->type;
  const int64_t bank = ctx.target.psum_bank_bytes;
  const int64_t folds = t.partitionFolds(partitions);
  const int64_t fold = t.bytesPerPartition(partitions) / folds;
  const int64_t count = folds * r.alloc->bufs;
  offset = 0;
  if (fold <= bank && bank % fold == 0) {
    align = fold;
    return true;
  }
  // Folds follow each other at `fold` strides from the start: find a start
  // within a bank (in steps of the largest power of two dividing the fold)
  // from which none of them crosses a bank boundary. E.g. two 1536-byte
  // copies fit from 512: [512, 2048) and [2048, 3584).
  align = bank;
  int64_t step = fold & -fold;
  for (int64_t start = 0; fold <= bank && start < bank; start += step) {
    bool fits = true;
    for (int64_t k = 0; fits && k < count; ++k)
      fits = (start + k * fold) / bank == (start + (k + 1) * fold - 1) / bank;
    if (fits) {
      offset = start;
      return true;
    }
  }
  ctx.diags.error(r.alloc->loc,
                  llvm::formatv("psum buffer %{0} cannot be placed: its {1} folds/copies of {2} "
                                "bytes each cannot all stay inside one {3}-byte PSUM bank of "
                                "target '{4}'; use a tile whose bytes per partition divide the bank",
                                r.alloc->result->name, count, fold, bank, ctx.target.name));
  return false;
}

AllocOp *AllocatePass::chooseVictim(Kernel &kernel, const std::vector<Item> &items,
                                    const StagingDepth &depth,
                                    SpillEstimate &chosen) {
  int64_t crowdedBytes;
  unsigned at = crowdedPoint(items, crowdedBytes);
  OpPositions positions = numberOps(kernel);
  AllocOp *best = nullptr;
  double bestScore = 0;
  for (const Item &it : items) {
    if (!it.range.liveAt(at))
      continue;
    SpillEstimate est = estimateSpill(kernel, *it.range.alloc, positions, at, depth);
    if (!est.spillable || est.freedBytes <= 0)
      continue;
    // Bytes freed per byte of traffic; a buffer nothing reads or writes
    // costs no traffic at all.
    double score = double(est.freedBytes) / std::max(est.trafficBytes, 1.0);
    if (!best || score > bestScore || (score == bestScore && est.freedBytes > chosen.freedBytes)) {
      best = it.range.alloc;
      bestScore = score;
      chosen = est;
    }
  }
  return best;
}

void AllocatePass::reportOverflow(Kernel &kernel, const std::vector<Item> &items, MemSpace space,
                                  int64_t peak, int64_t capacity, const SpillTotals &spills,
                                  PassContext &ctx) {
  int64_t worstBytes;
  unsigned worstPos = crowdedPoint(items, worstBytes);
  std::vector<const Item *> live;
  for (const Item &o : items)
    if (o.range.liveAt(worstPos))
      live.push_back(&o);
  std::stable_sort(live.begin(), live.end(),
                   [](const Item *a, const Item *b) { return a->range.bytes > b->range.bytes; });
  llvm::StringRef spaceName = memSpaceName(space);
  std::string hint = shorterRowStripAdvice(kernel, "use smaller tiles");
  std::string what =
      worstBytes > capacity
          ? llvm::formatv("the {0} {1} buffers live here need {2} bytes per partition", live.size(),
                          spaceName, worstBytes)
                .str()
          : llvm::formatv("the {0} buffers could not be packed into fewer than {1} bytes per "
                          "partition (at most {2} are live at once)",
                          spaceName, peak, worstBytes)
                .str();
  std::string why =
      space == MemSpace::PSUM
          ? std::string("PSUM is never spilled")
          : llvm::formatv("{0}nothing live there can be spilled to HBM: staging a buffer's "
                          "accesses would take as much SBUF as spilling it frees",
                          spills.buffers ? llvm::formatv("after spilling {0} buffer{1}, ", spills.buffers,
                                                         spills.buffers == 1 ? "" : "s")
                                               .str()
                                         : std::string())
                .str();
  ctx.diags.error(live.front()->range.alloc->loc,
                  llvm::formatv("kernel @{0} does not fit {1}: {2}, over the {3} bytes of target "
                                "'{4}'; {5} ({6})",
                                kernel.name, spaceName, what, capacity, ctx.target.name, hint, why));
  for (const Item *it : live) {
    const AllocOp &a = *it->range.alloc;
    ctx.diags.note(a.loc, llvm::formatv("%{0}: {1} bufs {2} = {3} bytes per partition",
                                        a.result->name, a.result->type.str(), a.bufs,
                                        it->range.bytes));
  }
}

void noteSpillStatistics(const SpillTotals &spills, size_t placed);

/// Partial residency: a victim that can be cut along its last dimension keeps
/// its first columns in SBUF and spills only as many of the others (whole
/// granules) as the `overflow` at the crowded point needs, beside the staging
/// tiles the spill adds there. Returns the buffer to spill (the tail, or the
/// victim whole) and updates `est` to it.
AllocOp *spillOnlyTail(Kernel &kernel, AllocOp *victim, int64_t overflow, const StagingDepth &depth,
                       SpillEstimate &est, SpillTotals &spills) {
  int64_t granule = tailGranule(kernel, *victim);
  if (!granule)
    return victim;
  const TensorType &t = victim->result->type;
  int64_t cols = t.dims.back().size;
  int64_t bytes = t.bytesPerPartition(kernel.geometry.partitions) * victim->bufs;
  int64_t stagingLive = bytes - est.freedBytes;
  int64_t need = overflow + stagingLive;
  int64_t tailCols = int64_t(llvm::alignTo(llvm::divideCeil(need * cols, bytes), granule));
  if (tailCols >= cols)
    return victim;
  AllocOp *tail = splitTail(kernel, *victim, cols - tailCols);
  spills.splits += 1;
  est = estimateSpill(kernel, *tail, numberOps(kernel), 0, depth);
  return tail;
}

PassResult AllocatePass::run(Kernel &kernel, PassContext &ctx) {
  bool changed = false, ok = true;
  SpillTotals spills;
  std::vector<AllocOp *> staging; // the staging tiles spills added
  size_t placed = 0;
  // Staging tiles as deep as their DMAs need to keep HBM busy (schedule's
  // rule): a spill DMA per iteration of a short loop body must not wait for
  // the previous one's fixed cost.
  StagingDepth depth = [&](const TensorType &t) {
    return prefetchDepth(t, ctx.target, kernel.geometry.partitions);
  };
  for (MemSpace space : {MemSpace::SBUF, MemSpace::PSUM}) {
    bool sbuf = space == MemSpace::SBUF;
    int64_t capacity = sbuf ? ctx.target.sbuf_bytes_per_partition : ctx.target.psum_bytes_per_partition;
    std::vector<Item> items;
    int64_t peak = 0;
    bool collected, prefetch = false;
    for (;;) {
      if (!(collected = collectItems(kernel, space, ctx, items, PhaseSharing::Prefetch)))
        break;
      peak = placeAll(items);
      if ((prefetch = peak <= capacity) || !sbuf)
        break;
      // Prefetching across phase boundaries is worth no spill: the phases
      // share addresses first. (Each round tries prefetching again, so that
      // allocating the result once more places it the same way.)
      if (!(collected = collectItems(kernel, space, ctx, items, PhaseSharing::Shared)))
        break;
      peak = placeAll(items);
      if (peak <= capacity)
        break;
      // Staging tiles deeper than double-buffered give their extra copies
      // back before anything else is spilled.
      if (shallowerStaging(staging))
        continue;
      SpillEstimate est;
      AllocOp *victim = chooseVictim(kernel, items, depth, est);
      if (!victim)
        break;
      victim = spillOnlyTail(kernel, victim, peak - capacity, depth, est, spills);
      spills.buffers += 1;
      spills.freedBytes +=
          victim->result->type.bytesPerPartition(kernel.geometry.partitions) * victim->bufs;
      spills.stagingBytes += est.stagingBytes;
      spills.trafficBytes += est.trafficBytes;
      widenReductionReloads(kernel, *victim);
      spillToHbm(kernel, *victim, depth, &staging);
      changed = true;
    }
    if (!collected) {
      ok = false;
      continue;
    }
    int64_t total = 0;
    for (const Item &it : items)
      total += it.range.bytes;
    placed += items.size();
    if (sbuf)
      noteStatistic("phase-prefetch", prefetch,
                    "1 when consecutive phases' SBUF tiles got disjoint addresses (prefetch across "
                    "phase boundaries), 0 when they share");
    noteStatistic(sbuf ? "sbuf-peak-bytes" : "psum-peak-bytes", peak,
                  sbuf ? "SBUF bytes per partition at the peak" : "PSUM bytes per partition at the peak");
    noteStatistic(sbuf ? "sbuf-bytes-shared" : "psum-bytes-shared", total - peak,
                  sbuf ? "SBUF bytes per partition saved by sharing addresses"
                       : "PSUM bytes per partition saved by sharing addresses");
    if (peak > capacity) {
      reportOverflow(kernel, items, space, peak, capacity, spills, ctx);
      ok = false;
      continue;
    }
    for (const Item &it : items) {
      AllocOp &a = *it.range.alloc;
      if (a.address != it.address)
        changed = true;
      a.address = it.address;
    }
  }
  // The staging tiles as placed (their depth may have been reduced).
  spills.stagingBytes = 0;
  for (AllocOp *a : staging)
    spills.stagingBytes += a->result->type.bytesPerPartition(kernel.geometry.partitions) * a->bufs;
  noteSpillStatistics(spills, placed);
  if (!ok)
    return PassResult::Failed;
  return changed ? PassResult::Changed : PassResult::Unchanged;
}

void noteSpillStatistics(const SpillTotals &spills, size_t placed) {
  noteStatistic("buffers-placed", placed, "on-chip buffers given an address");
  noteStatistic("buffers-spilled", spills.buffers, "SBUF buffers moved to HBM spill slots");
  noteStatistic("buffers-split", spills.splits,
                "SBUF buffers cut in two to spill only their tail (partial residency)");
  noteStatistic("spill-bytes-freed", spills.freedBytes,
                "SBUF bytes per partition the spilled buffers took");
  noteStatistic("spill-staging-bytes", spills.stagingBytes,
                "SBUF bytes per partition of the staging tiles spilling added");
  noteStatistic("spill-traffic-bytes", int64_t(spills.trafficBytes),
                "bytes the spill saves and reloads move (static estimate)");
}

} // namespace

std::unique_ptr<Pass> createAllocatePass() { return std::make_unique<AllocatePass>(); }

} // namespace tessel::passes

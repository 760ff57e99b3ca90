//===- compiler/BlockPlanner.cpp - Block sizes from the cost model -===//
#include "compiler/BlockPlanner.h"

#include "compiler/ChainModel.h"
#include "passes/Policy.h"
#include "passes/TargetGeometry.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <map>

namespace tessel::compiler {
using passes::geometryFor;
namespace policy = passes::policy;
namespace {

using ir::BlockConfig;
using passes::policy::kSbufHeadroom;
using passes::analysis::describeCost;
using passes::analysis::plannerSbufLimit;

std::string kib(int64_t bytes) { return llvm::formatv("{0:f1} KiB", bytes / 1024.0).str(); }

/// tile, 2*tile, 4*tile, ... up to `limit` rounded up to the tile (which is
/// included), at most `cap`.
std::vector<int64_t> powerOfTwoTiles(int64_t limit, int64_t cap, int64_t tile) {
  int64_t top = std::min(cap, int64_t(llvm::alignTo(std::max<int64_t>(limit, 1), tile)));
  std::vector<int64_t> values;
  for (int64_t v = tile; v < top; v *= 2)
    values.push_back(v);
  values.push_back(top);
  return values;
}

struct Candidate {
  BuiltCandidate built;
  bool fits = false;
};

/// Builds each configuration once: a request whose defaults TileGen filled
/// in is found again under the blocks it was built with.
class CandidateCache {
public:
  CandidateCache(BuildAndMeasureFn build, const runtime::Target &t, bool oneKernel)
      : build(build), target(t), sbufLimit(plannerSbufLimit(t)), oneKernel(oneKernel) {}

  const Candidate *get(const BlockConfig &blocks) {
    if (auto it = cache.find(blocks); it != cache.end())
      return it->second ? &*it->second : nullptr;
    std::optional<Candidate> c;
    if (std::optional<BuiltCandidate> built = build(blocks)) {
      c = Candidate{std::move(*built), false};
      c->fits = c->built.cost.sbufLeastPeakBytesPerPartition <= sbufLimit &&
                c->built.cost.psumPeakBytesPerPartition <= target.psum_bytes_per_partition &&
                !(oneKernel && c->built.cost.scratchBytes > 0);
      cache.emplace(c->built.blocks, c);
    }
    auto &slot = cache[blocks];
    slot = c;
    return slot ? &*slot : nullptr;
  }

private:
  BuildAndMeasureFn build;
  const runtime::Target &target;
  int64_t sbufLimit;
  bool oneKernel;
  std::map<BlockConfig, std::optional<Candidate>> cache;
};

} // namespace

llvm::Expected<BlockPlan> planBlocks(const BlockConfig &given, PlanShape shape,
                                     const runtime::Target &t, BuildAndMeasureFn buildAndMeasure) {
  const llvm::StringRef M = BlockConfig::kRowStrip, N = BlockConfig::kColumnBlock,
                        K = BlockConfig::kContraction;
  const int64_t tile = geometryFor(t).partitions;
  // Output columns of fp32 accumulators one PSUM bank holds.
  const int64_t bankColumns = t.psum_bank_bytes / int64_t(sizeof(float));
  double ridge = t.ridgeFlopsPerByte();
  CandidateCache candidates(buildAndMeasure, t, shape.oneKernel);
  BlockPlan plan;
  auto note = [&](const llvm::Twine &text) { plan.notes.push_back(("[select-blocks] " + text).str()); };
  note(llvm::formatv("target {0}: ridge point {1:f1} flop/B; SBUF limit {2} per partition "
                     "({3:f0}% headroom)",
                     t.name, ridge, kib(plannerSbufLimit(t)), kSbufHeadroom * 100));

  // A configuration that does not fit at the default column block may fit
  // at a narrower one (fewer accumulators in PSUM, smaller weight blocks):
  // the widest that fits, or null.
  std::vector<int64_t> narrower =
      powerOfTwoTiles(shape.columns, bankColumns, tile);
  auto fitting = [&](BlockConfig b) -> const Candidate * {
    for (int64_t n : llvm::reverse(narrower)) {
      if (!given.has(N))
        b.set(N, n);
      if (const Candidate *f = candidates.get(b); f && f->fits)
        return f;
      if (given.has(N))
        break;
    }
    return nullptr;
  };
  // Failing that, K-blocked (a chain's first contraction): the K block that
  // fits with the lowest predicted latency, at the widest column block that
  // fits with it; a shallower block must be policy::kShallowerKBlockGain
  // faster than a deeper one (fewer partial sums, fewer roundings). A block whose
  // strip `schedule` could not double-buffer waits for its fill on every K
  // block, which the estimate counts (KernelCost::serialFillNs).
  std::vector<int64_t> kBlocks = powerOfTwoTiles(shape.contraction / 2, INT64_MAX, tile);
  auto kBlockedFit = [&](BlockConfig b) -> const Candidate * {
    if (shape.contraction <= tile || b.has(K))
      return nullptr;
    const Candidate *best = nullptr;
    for (int64_t k : llvm::reverse(kBlocks)) {
      b.set(K, k);
      const Candidate *f = fitting(b);
      if (f && (!best || f->built.cost.predictedUs(t) <
                             best->built.cost.predictedUs(t) * (1 - passes::policy::kShallowerKBlockGain)))
        best = f;
    }
    return best;
  };

  // Failing both, an MLP's two-kernel form: the gated strip goes through
  // HBM, leaving SBUF to the operand strips.
  auto twoKernelFit = [&](BlockConfig b) -> const Candidate * {
    if (!shape.splittable || b.has(kTwoKernelKey))
      return nullptr;
    b.set(kTwoKernelKey, 1);
    return fitting(b);
  };

  BlockConfig chosen = given;
  // 1. The row strip.
  if (!given.has(M)) {
    std::vector<const Candidate *> strips;
    for (int64_t m : powerOfTwoTiles(shape.rows, INT64_MAX, tile)) {
      BlockConfig blocks = given;
      blocks.set(M, m);
      const Candidate *c = candidates.get(blocks);
      // A strip that does not fit is tried narrower or K-blocked; it is
      // taken when predicted no slower than the strips that fit.
      const Candidate *lastFit = nullptr;
      for (const Candidate *s : strips)
        if (s->fits)
          lastFit = s;
      if (c && !c->fits) {
        const Candidate *f = fitting(blocks);
        if (!f)
          f = kBlockedFit(blocks);
        if (!f)
          f = twoKernelFit(blocks);
        if (f && (!lastFit || f->built.cost.predictedUs(t) <= lastFit->built.cost.predictedUs(t)))
          c = f;
      }
      if (!c)
        continue;
      strips.push_back(c);
      bool someFit = llvm::any_of(strips, [](const Candidate *s) { return s->fits; });
      if (!c->fits && someFit)
        break; // larger strips hold more: none of them fits either
    }
    if (strips.empty())
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "no row strip could be built");
    const Candidate *pick = nullptr;
    std::optional<int64_t> firstClearing;
    for (const Candidate *c : strips) {
      if (!firstClearing && c->built.cost.arithmeticIntensity() >= ridge)
        firstClearing = c->built.blocks.lookup(M);
      // Candidates ascend: the last that fits is the largest, taken unless a
      // smaller one is predicted faster (an MLP's one-kernel form at a small
      // strip against its two-kernel form at a tall one, whose nests run
      // one after the other).
      if (c->fits && (!pick || c->built.cost.predictedUs(t) <= pick->built.cost.predictedUs(t)))
        pick = c;
    }
    bool spills = !pick;
    if (spills)
      pick = *std::min_element(strips.begin(), strips.end(), [](const Candidate *a, const Candidate *b) {
        return a->built.cost.sbufLeastPeakBytesPerPartition < b->built.cost.sbufLeastPeakBytesPerPartition;
      });
    for (const Candidate *c : strips)
      note(llvm::formatv("{0} m = {1}{2}: {3}", c == pick ? "*" : " ", c->built.blocks.lookup(M),
                         c->built.blocks.has(K) && !given.has(K)
                             ? " (K-blocked: k = " + std::to_string(c->built.blocks.lookup(K)) +
                                   ", n = " + std::to_string(c->built.blocks.lookup(N)) + ")"
                             : std::string(),
                         describeCost(c->built.cost, t)));
    if (!shape.chainDims.empty()) {
      // The paper's SBUF model beside the buffers the pipeline placed.
      std::string eq11;
      for (const Candidate *c : strips) {
        int64_t bytes = ChainModel::eq11SbufBytes(
            shape.chainDims, c->built.blocks.lookup(M), c->built.blocks.lookup(N), tile,
            shape.elementBytes);
        eq11 += llvm::formatv("{0}m = {1}: {2} ({3:f0}%)", eq11.empty() ? "" : ", ",
                              c->built.blocks.lookup(M), kib(bytes),
                              100.0 * bytes / t.sbuf_bytes_per_partition);
      }
      note("eq. 11 SBUF model (one-tile X, weight and output blocks): " + eq11);
    }
    int64_t m = pick->built.blocks.lookup(M);
    chosen.set(M, m);
    if (pick->built.blocks.has(K) && !given.has(K))
      chosen.set(K, pick->built.blocks.lookup(K));
    if (pick->built.blocks.has(kTwoKernelKey))
      chosen.set(kTwoKernelKey, 1);
    const Candidate *largestFit = nullptr;
    for (const Candidate *c : strips)
      if (c->fits)
        largestFit = c;
    if (!spills && largestFit != pick)
      note(llvm::formatv("m = {0} has the lowest predicted latency of the strips that fit (m = {1}, "
                         "the largest, is predicted at {2:f1} us)",
                         m, largestFit->built.blocks.lookup(M), largestFit->built.cost.predictedUs(t)));
    else if (spills)
      note(llvm::formatv("no row strip fits SBUF; m = {0} has the smallest SBUF peak (allocate "
                         "spills what does not fit)",
                         m));
    else if (!firstClearing)
      note(llvm::formatv("no strip clears the ridge; m = {0} (the largest that fits) has the "
                         "highest AI",
                         m));
    else if (*firstClearing <= m)
      note(llvm::formatv("m = {0} is the smallest strip clearing the ridge; m = {1} the largest "
                         "that fits",
                         *firstClearing, m));
    else
      note(llvm::formatv("m = {0} is the smallest strip clearing the ridge but does not fit; "
                         "m = {1} (the largest that fits) has the highest AI",
                         *firstClearing, m));
  }

  // 2. The output column block, at the chosen strip.
  const Candidate *final = nullptr;
  if (!given.has(N)) {
    for (int64_t n : powerOfTwoTiles(shape.columns, bankColumns, tile)) {
      BlockConfig blocks = chosen;
      blocks.set(N, n);
      const Candidate *c = candidates.get(blocks);
      if (c && c->fits && (!final || c->built.cost.predictedUs(t) <= final->built.cost.predictedUs(t)))
        final = c;
    }
  }
  if (!final) {
    // No column block fits the strip (given, or the least-bad spilling
    // one): K-blocked, it may.
    final = candidates.get(chosen);
    if (final && !final->fits) {
      if (const Candidate *f = kBlockedFit(chosen)) {
        note(llvm::formatv("m = {0} fits only K-blocked: k = {1}", f->built.blocks.lookup(M),
                           f->built.blocks.lookup(K)));
        final = f;
      } else if (const Candidate *f = twoKernelFit(chosen)) {
        note(llvm::formatv("m = {0} fits only as two kernels", f->built.blocks.lookup(M)));
        final = f;
      } else if (!given.has(K) && shape.contraction > tile) {
        // Nothing fits: K-blocked, the strip is the one large buffer, and
        // `allocate` keeps what fits of it resident and spills the rest.
        // The smallest SBUF peak leaves the most resident; each K block
        // saves and reloads the spilled part once more, so the deepest
        // block within policy::kSpillDeeperKBlockSbufShare of SBUF of that
        // peak is taken.
        const Candidate *least = final;
        std::vector<const Candidate *> blocked;
        for (int64_t k : kBlocks) {
          BlockConfig b = chosen;
          b.set(K, k);
          if (const Candidate *c = candidates.get(b)) {
            blocked.push_back(c);
            if (c->built.cost.sbufLeastPeakBytesPerPartition < least->built.cost.sbufLeastPeakBytesPerPartition)
              least = c;
          }
        }
        const Candidate *pickK = least;
        int64_t slack = int64_t(t.sbuf_bytes_per_partition * passes::policy::kSpillDeeperKBlockSbufShare);
        for (const Candidate *c : blocked)
          if (least != final &&
              c->built.cost.sbufLeastPeakBytesPerPartition <=
                  least->built.cost.sbufLeastPeakBytesPerPartition + slack &&
              c->built.blocks.lookup(K) > pickK->built.blocks.lookup(K))
            pickK = c;
        if (pickK != final) {
          note(llvm::formatv("m = {0} does not fit even K-blocked; k = {1} (SBUF peak {2}, the "
                             "smallest is {3}; allocate spills what does not fit)",
                             pickK->built.blocks.lookup(M), pickK->built.blocks.lookup(K),
                             kib(pickK->built.cost.sbufLeastPeakBytesPerPartition),
                             kib(least->built.cost.sbufLeastPeakBytesPerPartition)));
          final = pickK;
        }
      }
    }
  }
  if (!final)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the kernel could not be built with " + chosen.str());

  // 3. Each projection's own column block (n_r2, ...), one at a time at the
  // chosen strip and `n`: a narrower block of a projection's accumulators
  // leaves PSUM banks to double-buffer the others. Taken only when predicted
  // policy::kColumnBlockGain faster than that projection at `n`.
  if (final->fits) {
    for (const auto &[name, cols] : shape.projectionColumns) {
      if (given.has(name))
        continue;
      const Candidate *best = final;
      for (int64_t v : powerOfTwoTiles(cols, bankColumns, tile)) {
        BlockConfig blocks = final->built.blocks;
        if (v >= std::min(cols, blocks.lookup(N)))
          continue; // as wide as the projection's block at `n`: the same kernel
        blocks.set(name, v);
        const Candidate *c = candidates.get(blocks);
        if (c && c->fits &&
            c->built.cost.predictedUs(t) <
                best->built.cost.predictedUs(t) * (1 - policy::kColumnBlockGain))
          best = c;
      }
      if (best != final) {
        note(llvm::formatv("{0} = {1}: predicted {2:f1} us, against {3:f1} us at n = {4}", name,
                           best->built.blocks.lookup(name), best->built.cost.predictedUs(t),
                           final->built.cost.predictedUs(t), final->built.blocks.lookup(N)));
        final = best;
      }
    }
  }
  plan.blocks = final->built.blocks;
  plan.twoKernel = plan.blocks.has(kTwoKernelKey);
  plan.blocks.erase(kTwoKernelKey);
  note("chosen: " + plan.blocks.str() + ": " + describeCost(final->built.cost, t));
  if (!shape.chainDims.empty()) {
    int64_t bytes = ChainModel::eq11SbufBytes(shape.chainDims, plan.blocks.lookup(M),
                                              plan.blocks.lookup(N), tile, shape.elementBytes);
    note(llvm::formatv("chosen: eq. 11 SBUF model {0} ({1:f0}%) beside the kernel's SBUF peak {2}",
                       kib(bytes), 100.0 * bytes / t.sbuf_bytes_per_partition,
                       kib(final->built.cost.sbufLeastPeakBytesPerPartition)));
  }
  return plan;
}

} // namespace tessel::compiler

//===- compiler/BlockPlanner.cpp - Block sizes from the cost model -===//
//
// planBlocks runs named steps in order (Halide's lower_impl), each timed and
// counted in BlockPlan::steps, which --time-passes prints:
//
//   row strip       chooseRowStrip: `m`, and how a strip that does not fit
//                   fits (narrower `n`, K-blocked, two kernels) or, built
//                   through `allocate`, what its spill costs
//   column block    chooseColumnBlock: `n` at the chosen strip (a spilling
//                   strip's among spilling builds)
//   fit the strip   fitChosenStrip: when no `n` fits, K-blocked, two
//                   kernels, or the K block that leaves the most resident
//   projections     chooseProjectionBlocks: a projection's own column block
//
//===----------------------------------------------------------------------===//
#include "compiler/BlockPlanner.h"

#include "compiler/ChainModel.h"
#include "passes/Policy.h"
#include "passes/TargetGeometry.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

namespace tessel::compiler {
using passes::geometryFor;
namespace policy = passes::policy;
namespace {

using ir::BlockConfig;
using passes::analysis::describeCost;
using passes::analysis::plannerSbufLimit;
using passes::policy::kSbufHeadroom;

const llvm::StringRef M = BlockConfig::kRowStrip, N = BlockConfig::kColumnBlock,
                      K = BlockConfig::kContraction;

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
  MeasuredCandidate built;
  bool fits = false;
  double us = 0; ///< KernelCost::predictedUs

  int64_t lookup(llvm::StringRef name) const { return built.built.blocks.lookup(name); }
  /// Built through `allocate`: its cost includes the spill's traffic.
  bool spills() const { return built.built.throughAllocate; }
  const BlockConfig &blocks() const { return built.built.blocks; }
  const BuildRequest &request() const { return built.built; }
  const KernelCost &cost() const { return built.cost; }
};

/// Measures each configuration once: a request whose defaults TileGen filled
/// in is found again under the blocks it was built with.
class CandidateCache {
public:
  CandidateCache(MeasureFn build, const runtime::Target &t, bool oneKernel)
      : build(build), target(t), sbufLimit(plannerSbufLimit(t)), oneKernel(oneKernel) {}

  const Candidate *get(const BuildRequest &request) {
    if (auto it = cache.find(request); it != cache.end())
      return it->second ? &*it->second : nullptr;
    ++numMeasured;
    std::optional<Candidate> c;
    if (std::optional<MeasuredCandidate> built = build(request)) {
      built->built.throughAllocate = request.throughAllocate;
      const KernelCost &cost = built->cost;
      // Built through allocate, a strip fits because allocate spilled it.
      bool fits = !request.throughAllocate && cost.sbufLeastPeakBytesPerPartition <= sbufLimit &&
                  cost.psumPeakBytesPerPartition <= target.psum_bytes_per_partition &&
                  !(oneKernel && cost.scratchBytes > 0);
      c = Candidate{std::move(*built), fits, cost.predictedUs(target)};
      cache.emplace(c->request(), c);
    }
    auto &slot = cache[request];
    slot = c;
    return slot ? &*slot : nullptr;
  }
  unsigned measured() const { return numMeasured; }

private:
  MeasureFn build;
  const runtime::Target &target;
  int64_t sbufLimit;
  bool oneKernel;
  unsigned numMeasured = 0;
  std::map<BuildRequest, std::optional<Candidate>> cache;
};

/// One planBlocks call.
class Planner {
public:
  Planner(const BuildRequest &request, PlanShape shape, const runtime::Target &t,
          MeasureFn build)
      : given(request.blocks), shape(std::move(shape)), t(t),
        candidates(build, t, this->shape.oneKernel), tile(geometryFor(t).partitions),
        bankColumns(t.psum_bank_bytes / int64_t(sizeof(float))),
        narrower(powerOfTwoTiles(this->shape.columns, bankColumns, tile)),
        kBlocks(powerOfTwoTiles(this->shape.contraction / 2, INT64_MAX, tile)), chosen(request) {}

  llvm::Expected<BlockPlan> run();

private:
  const BlockConfig &given;
  const PlanShape shape;
  const runtime::Target &t;
  CandidateCache candidates;
  const int64_t tile;
  /// Output columns of fp32 accumulators one PSUM bank holds.
  const int64_t bankColumns;
  /// The column blocks a configuration is tried at, and the K blocks.
  const std::vector<int64_t> narrower, kBlocks;
  BuildRequest chosen;
  BlockPlan plan;
  unsigned ranked = 0;
  /// A chain's strip the static model ranked unbuilt (buildStrips): its
  /// bound, and the strip built that it loses to. Shortest first.
  struct RankedStrip {
    int64_t m;
    double boundUs;
    const Candidate *against;
  };
  std::vector<RankedStrip> rankedStrips;
  /// The strips built through `allocate` (priceSpillingStrips), in order;
  /// noted when one of them is taken.
  std::vector<const Candidate *> spillingStrips;

  void note(const llvm::Twine &text) { plan.notes.push_back(("[select-blocks] " + text).str()); }
  template <typename Fn> auto step(llvm::StringRef name, Fn &&fn);
  double lowerBoundUs(const Candidate &c) const;
  double stripBoundUs(int64_t m) const;
  bool modelRanks(const Candidate &reference, double mustBeatUs);

  const Candidate *fitting(BuildRequest b);
  const Candidate *kBlockedFit(BuildRequest b);
  const Candidate *twoKernelFit(BuildRequest b);
  const Candidate *fitStrip(const BuildRequest &request, const Candidate *c,
                            const Candidate *lastFit);

  llvm::Error chooseRowStrip();
  std::vector<const Candidate *> walkStrips(llvm::ArrayRef<int64_t> ms);
  std::vector<const Candidate *> buildStrips();
  const Candidate *priceSpillingStrips(llvm::ArrayRef<const Candidate *> strips,
                                       const Candidate *fastestFit);
  void noteSpillingPick(const Candidate *pick, const Candidate *fastestFit);
  void noteStrips(llvm::ArrayRef<const Candidate *> strips, const Candidate *pick);
  void noteStripChoice(llvm::ArrayRef<const Candidate *> strips, const Candidate *pick, bool spills);
  const Candidate *chooseColumnBlock();
  const Candidate *fitChosenStrip();
  const Candidate *leastSpillingKBlock(const Candidate *final);
  const Candidate *chooseProjectionBlocks(const Candidate *final);
  void noteChoice(const Candidate &final);
};

/// Runs `fn` as the step `name`: its time, measurements and static rankings.
template <typename Fn> auto Planner::step(llvm::StringRef name, Fn &&fn) {
  unsigned measured = candidates.measured(), rankedBefore = ranked;
  auto start = std::chrono::steady_clock::now();
  auto result = fn();
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  plan.steps.push_back({name.str(), ms, candidates.measured() - measured, ranked - rankedBefore});
  return result;
}

/// No configuration of `c`'s strip is faster than this: its matmuls at the
/// tensor engine's peak (every form does the same ones) and, for a chain,
/// the ideal fused kernel's traffic at the strip through the bandwidth every
/// DMA shares (ChainModel::streamBoundUs).
double Planner::lowerBoundUs(const Candidate &c) const {
  double bound = double(c.cost().flops) / t.peakBf16Flops() * 1e6;
  if (!shape.chainDims.empty())
    bound = std::max(bound, stripBoundUs(c.lookup(M)));
  return bound;
}

/// A chain's bound at strip `m` before anything is built
/// (ChainModel::streamBoundUs); 0 for any other kernel.
double Planner::stripBoundUs(int64_t m) const {
  if (shape.chainDims.empty())
    return 0;
  return ChainModel::chain(shape.rows, shape.chainDims, shape.elementBytes).streamBoundUs(m, t);
}

/// Whether the static model ranks the other forms of `reference`'s strip
/// below a candidate predicted at `mustBeatUs` without building them.
bool Planner::modelRanks(const Candidate &reference, double mustBeatUs) {
  if (lowerBoundUs(reference) < mustBeatUs)
    return false;
  ++ranked;
  return true;
}

/// A configuration that does not fit at the default column block may fit
/// at a narrower one (fewer accumulators in PSUM, smaller weight blocks):
/// the widest that fits, or null.
const Candidate *Planner::fitting(BuildRequest b) {
  for (int64_t n : llvm::reverse(narrower)) {
    if (!given.has(N))
      b.blocks.set(N, n);
    if (const Candidate *f = candidates.get(b); f && f->fits)
      return f;
    if (given.has(N))
      break;
  }
  return nullptr;
}

/// Failing that, K-blocked (a chain's first contraction): the K block that
/// fits with the lowest predicted latency, at the widest column block that
/// fits with it; a shallower block must be policy::kShallowerKBlockGain
/// faster than a deeper one (fewer partial sums, fewer roundings). A block
/// whose strip `schedule` could not double-buffer waits for its fill on
/// every K block, which the estimate counts (KernelCost::serialFillNs).
const Candidate *Planner::kBlockedFit(BuildRequest b) {
  if (shape.contraction <= tile || b.blocks.has(K))
    return nullptr;
  const Candidate *best = nullptr;
  for (int64_t k : llvm::reverse(kBlocks)) {
    if (best && modelRanks(*best, best->us * (1 - policy::kShallowerKBlockGain)))
      break;
    b.blocks.set(K, k);
    const Candidate *f = fitting(b);
    if (f && (!best || f->us < best->us * (1 - policy::kShallowerKBlockGain)))
      best = f;
  }
  return best;
}

/// Failing both, an MLP's two-kernel form: the gated strip goes through
/// HBM, leaving SBUF to the operand strips.
const Candidate *Planner::twoKernelFit(BuildRequest b) {
  if (!shape.splittable || b.params.mlpForm == passes::MlpForm::TwoKernel)
    return nullptr;
  b.params.mlpForm = passes::MlpForm::TwoKernel;
  return fitting(b);
}

/// A strip `c` that does not fit, tried narrower, K-blocked or as two
/// kernels: taken when predicted no slower than the last strip that fits.
const Candidate *Planner::fitStrip(const BuildRequest &request, const Candidate *c,
                                   const Candidate *lastFit) {
  if (lastFit && modelRanks(*c, std::nextafter(lastFit->us, INFINITY)))
    return c;
  const Candidate *f = fitting(request);
  if (!f)
    f = kBlockedFit(request);
  if (!f)
    f = twoKernelFit(request);
  return f && (!lastFit || f->us <= lastFit->us) ? f : c;
}

/// The strips `ms` in order, each as it fits; once one has fit,
/// policy::kStripMissesBeforeStop in a row that do not fit end the walk
/// (larger strips hold more, unless TileGen K-blocks them).
std::vector<const Candidate *> Planner::walkStrips(llvm::ArrayRef<int64_t> ms) {
  std::vector<const Candidate *> strips;
  const Candidate *lastFit = nullptr;
  int misses = 0;
  for (int64_t m : ms) {
    BuildRequest request = chosen;
    request.blocks.set(M, m);
    const Candidate *c = candidates.get(request);
    if (c && !c->fits)
      c = fitStrip(request, c, lastFit);
    if (!c)
      continue;
    strips.push_back(c);
    if (c->fits) {
      lastFit = c;
      misses = 0;
    } else if (lastFit && ++misses == policy::kStripMissesBeforeStop) {
      break;
    }
  }
  return strips;
}

/// The strips 128, 256, ... up to the rows. A chain's shorter strips
/// re-read every weight more often, so its strips are walked from the first
/// whose bound (stripBoundUs) is already the tallest's; a shorter one is
/// then built only when its bound is below the fastest strip that fits (the
/// static model cannot rank it). With none fitting, every strip is walked
/// (the smallest SBUF peak is chosen among them).
std::vector<const Candidate *> Planner::buildStrips() {
  const std::vector<int64_t> all = powerOfTwoTiles(shape.rows, INT64_MAX, tile);
  llvm::ArrayRef<int64_t> ms(all);
  size_t first = 0;
  while (first + 1 < ms.size() && stripBoundUs(ms[first]) > stripBoundUs(ms.back()))
    ++first;
  std::vector<const Candidate *> strips = walkStrips(ms.drop_front(first));
  const Candidate *fastest = nullptr;
  for (const Candidate *c : strips)
    if (c->fits && (!fastest || c->us <= fastest->us))
      fastest = c;
  if (first == 0)
    return strips;
  if (!fastest)
    return walkStrips(ms);
  std::vector<const Candidate *> shorter;
  for (int64_t m : ms.take_front(first)) {
    if (double bound = stripBoundUs(m); bound >= fastest->us) {
      ++ranked;
      rankedStrips.push_back({m, bound, fastest});
      continue;
    }
    BuildRequest request = chosen;
    request.blocks.set(M, m);
    const Candidate *c = candidates.get(request);
    if (c && !c->fits)
      c = fitStrip(request, c, fastest);
    if (c)
      shorter.push_back(c);
  }
  strips.insert(strips.begin(), shorter.begin(), shorter.end());
  return strips;
}

llvm::Error Planner::chooseRowStrip() {
  if (given.has(M))
    return llvm::Error::success();
  std::vector<const Candidate *> strips = buildStrips();
  if (strips.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "no row strip could be built");
  // Candidates ascend: the last that fits is the largest, taken unless a
  // smaller one is predicted faster (an MLP's one-kernel form at a small
  // strip against its two-kernel form at a tall one, whose nests run one
  // after the other).
  const Candidate *pick = nullptr;
  for (const Candidate *c : strips)
    if (c->fits && (!pick || c->us <= pick->us))
      pick = c;
  bool spills = !pick;
  const Candidate *fastestFit = pick;
  if (spills)
    pick = *std::min_element(strips.begin(), strips.end(), [](const Candidate *a, const Candidate *b) {
      return a->cost().sbufLeastPeakBytesPerPartition < b->cost().sbufLeastPeakBytesPerPartition;
    });
  else
    pick = priceSpillingStrips(strips, pick);
  noteStrips(strips, pick);
  chosen.blocks.set(M, pick->lookup(M));
  if (pick->blocks().has(K) && !given.has(K))
    chosen.blocks.set(K, pick->lookup(K));
  chosen.params = pick->request().params;
  chosen.throughAllocate = pick->spills();
  if (pick->spills())
    noteSpillingPick(pick, fastestFit);
  else
    noteStripChoice(strips, pick, spills);
  return llvm::Error::success();
}

/// The strips that do not fit however they are built, each built through
/// `allocate` when its static bound (its matmuls at the peak, a chain's
/// traffic, the engine bound of the form that does not spill: spilling only
/// adds traffic) is policy::kSpillingStripGain below `fastestFit`: the
/// fastest of them when its predicted latency, the spill's saves and
/// reloads included, is that much lower too; else `fastestFit`.
const Candidate *Planner::priceSpillingStrips(llvm::ArrayRef<const Candidate *> strips,
                                              const Candidate *fastestFit) {
  const double mustBeatUs = fastestFit->us * (1 - policy::kSpillingStripGain);
  const Candidate *pick = fastestFit;
  for (const Candidate *c : strips) {
    if (c->fits)
      continue;
    if (std::max(lowerBoundUs(*c), c->cost().boundUs(t)) >= mustBeatUs) {
      ++ranked;
      continue;
    }
    BuildRequest request = c->request();
    request.throughAllocate = true;
    const Candidate *s = candidates.get(request);
    if (!s || (shape.oneKernel && s->cost().scratchBytes > 0))
      continue;
    spillingStrips.push_back(s);
    if (s->us < mustBeatUs && s->us < pick->us)
      pick = s;
  }
  return pick;
}

/// Why a strip that spills: predicted faster than every strip that fits.
void Planner::noteSpillingPick(const Candidate *pick, const Candidate *fastestFit) {
  const KernelCost &cost = pick->cost();
  note(llvm::formatv("m = {0} does not fit SBUF: allocate saves {1:f1} MiB to HBM and "
                     "reloads {2:f1} MiB, and with that traffic it is predicted at {3:f1} us against "
                     "{4:f1} us for m = {5}, the fastest strip that fits",
                     pick->lookup(M), cost.spillSaveBytes / 1048576.0,
                     cost.spillReloadBytes / 1048576.0, pick->us, fastestFit->us,
                     fastestFit->lookup(M)));
}

/// Each strip's predictions, and for a chain the paper's SBUF model beside
/// the buffers the pipeline placed.
void Planner::noteStrips(llvm::ArrayRef<const Candidate *> strips, const Candidate *pick) {
  for (const RankedStrip &r : rankedStrips)
    note(llvm::formatv("  m = {0}: not built: the chain's traffic at this strip takes at least "
                       "{1:f1} us, m = {2} is predicted at {3:f1} us",
                       r.m, r.boundUs, r.against->lookup(M), r.against->us));
  for (const Candidate *c : strips)
    note(llvm::formatv("{0} m = {1}{2}: {3}", c == pick ? "*" : " ", c->lookup(M),
                       c->blocks().has(K) && !given.has(K)
                           ? " (K-blocked: k = " + std::to_string(c->lookup(K)) +
                                 ", n = " + std::to_string(c->lookup(N)) + ")"
                           : std::string(),
                       describeCost(c->cost(), t)));
  // Spilling strips only when one is taken: a kernel that keeps a strip
  // that fits keeps the notes it had before spills were priced.
  if (pick->spills())
    for (const Candidate *c : spillingStrips)
      note(llvm::formatv("{0} m = {1}, spilling (built through allocate): {2}",
                         c == pick ? "*" : " ", c->lookup(M), describeCost(c->cost(), t)));
  if (shape.chainDims.empty())
    return;
  std::string eq11;
  auto addEq11 = [&](int64_t m, int64_t n) {
    int64_t bytes = ChainModel::eq11SbufBytes(shape.chainDims, m, n, tile, shape.elementBytes);
    eq11 += llvm::formatv("{0}m = {1}: {2} ({3:f0}%)", eq11.empty() ? "" : ", ", m, kib(bytes),
                          100.0 * bytes / t.sbuf_bytes_per_partition);
  };
  // A strip not built at TileGen's default column block.
  int64_t defaultN = std::min(geometryFor(t).maxMoving, int64_t(llvm::alignTo(shape.columns, tile)));
  for (const RankedStrip &r : rankedStrips)
    addEq11(r.m, defaultN);
  for (const Candidate *c : strips)
    addEq11(c->lookup(M), c->lookup(N));
  note("eq. 11 SBUF model (one-tile X, weight and output blocks): " + eq11);
}

/// Why `pick`: the ridge point, SBUF, or a faster smaller strip.
void Planner::noteStripChoice(llvm::ArrayRef<const Candidate *> strips, const Candidate *pick,
                              bool spills) {
  const double ridge = t.ridgeFlopsPerByte();
  std::optional<int64_t> firstClearing;
  const Candidate *largestFit = nullptr;
  for (const RankedStrip &r : rankedStrips)
    if (!firstClearing && ChainModel::chain(shape.rows, shape.chainDims, shape.elementBytes)
                                  .arithmeticIntensity(r.m) >= ridge)
      firstClearing = r.m;
  for (const Candidate *c : strips) {
    if (!firstClearing && c->cost().arithmeticIntensity() >= ridge)
      firstClearing = c->lookup(M);
    if (c->fits)
      largestFit = c;
  }
  int64_t m = pick->lookup(M);
  if (!spills && largestFit != pick)
    note(llvm::formatv("m = {0} has the lowest predicted latency of the strips that fit (m = {1}, "
                       "the largest, is predicted at {2:f1} us)",
                       m, largestFit->lookup(M), largestFit->us));
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

/// The output column block at the chosen strip: the fastest that fits
/// (ties to the wider), or null when none does or `n` is given. A strip
/// chosen spilling is built at each through `allocate`: the fastest.
const Candidate *Planner::chooseColumnBlock() {
  const Candidate *final = nullptr;
  if (given.has(N))
    return nullptr;
  for (int64_t n : powerOfTwoTiles(shape.columns, bankColumns, tile)) {
    BuildRequest request = chosen;
    request.blocks.set(N, n);
    const Candidate *c = candidates.get(request);
    if (c && (c->fits || c->spills()) && (!final || c->us <= final->us))
      final = c;
  }
  return final;
}

/// No column block fits the strip (given, or the least-bad spilling one):
/// K-blocked or as two kernels it may; failing both, the K block that
/// leaves the most resident.
const Candidate *Planner::fitChosenStrip() {
  const Candidate *final = candidates.get(chosen);
  if (!final || final->fits || final->spills())
    return final;
  if (const Candidate *f = kBlockedFit(chosen)) {
    note(llvm::formatv("m = {0} fits only K-blocked: k = {1}", f->lookup(M), f->lookup(K)));
    return f;
  }
  if (const Candidate *f = twoKernelFit(chosen)) {
    note(llvm::formatv("m = {0} fits only as two kernels", f->lookup(M)));
    return f;
  }
  if (!given.has(K) && shape.contraction > tile)
    return leastSpillingKBlock(final);
  return final;
}

/// Nothing fits: K-blocked, the strip is the one large buffer, and
/// `allocate` keeps what fits of it resident and spills the rest. The
/// smallest SBUF peak leaves the most resident; each K block saves and
/// reloads the spilled part once more, so the deepest block within
/// policy::kSpillDeeperKBlockSbufShare of SBUF of that peak is taken.
const Candidate *Planner::leastSpillingKBlock(const Candidate *final) {
  auto peak = [](const Candidate *c) { return c->cost().sbufLeastPeakBytesPerPartition; };
  const Candidate *least = final;
  std::vector<const Candidate *> blocked;
  for (int64_t k : kBlocks) {
    BuildRequest b = chosen;
    b.blocks.set(K, k);
    if (const Candidate *c = candidates.get(b)) {
      blocked.push_back(c);
      if (peak(c) < peak(least))
        least = c;
    }
  }
  const Candidate *pickK = least;
  int64_t slack = int64_t(t.sbuf_bytes_per_partition * policy::kSpillDeeperKBlockSbufShare);
  for (const Candidate *c : blocked)
    if (least != final && peak(c) <= peak(least) + slack && c->lookup(K) > pickK->lookup(K))
      pickK = c;
  if (pickK == final)
    return final;
  note(llvm::formatv("m = {0} does not fit even K-blocked; k = {1} (SBUF peak {2}, the "
                     "smallest is {3}; allocate spills what does not fit)",
                     pickK->lookup(M), pickK->lookup(K), kib(peak(pickK)), kib(peak(least))));
  return pickK;
}

/// Each projection's own column block (n_r2, ...), one at a time at the
/// chosen strip and `n`: a narrower block of a projection's accumulators
/// leaves PSUM banks to double-buffer the others. Taken only when predicted
/// policy::kColumnBlockGain faster than that projection at `n`; the same
/// matmuls in a narrower block are never faster than lowerBoundUs.
const Candidate *Planner::chooseProjectionBlocks(const Candidate *final) {
  if (!final->fits)
    return final;
  for (const auto &[name, cols] : shape.projectionColumns) {
    if (given.has(name))
      continue;
    const Candidate *best = final;
    for (int64_t v : powerOfTwoTiles(cols, bankColumns, tile)) {
      BuildRequest request = final->request();
      if (v >= std::min(cols, request.blocks.lookup(N)))
        continue; // as wide as the projection's block at `n`: the same kernel
      if (modelRanks(*final, best->us * (1 - policy::kColumnBlockGain)))
        continue;
      request.blocks.set(name, v);
      const Candidate *c = candidates.get(request);
      if (c && c->fits && c->us < best->us * (1 - policy::kColumnBlockGain))
        best = c;
    }
    if (best != final) {
      note(llvm::formatv("{0} = {1}: predicted {2:f1} us, against {3:f1} us at n = {4}", name,
                         best->lookup(name), best->us, final->us, final->lookup(N)));
      final = best;
    }
  }
  return final;
}

void Planner::noteChoice(const Candidate &final) {
  note("chosen: " + plan.chosen.blocks.str() + ": " + describeCost(final.cost(), t));
  if (shape.chainDims.empty())
    return;
  int64_t bytes = ChainModel::eq11SbufBytes(shape.chainDims, plan.chosen.blocks.lookup(M),
                                            plan.chosen.blocks.lookup(N), tile, shape.elementBytes);
  note(llvm::formatv("chosen: eq. 11 SBUF model {0} ({1:f0}%) beside the kernel's SBUF peak {2}",
                     kib(bytes), 100.0 * bytes / t.sbuf_bytes_per_partition,
                     kib(final.cost().sbufLeastPeakBytesPerPartition)));
}

llvm::Expected<BlockPlan> Planner::run() {
  note(llvm::formatv("target {0}: ridge point {1:f1} flop/B; SBUF limit {2} per partition "
                     "({3:f0}% headroom)",
                     t.name, t.ridgeFlopsPerByte(), kib(plannerSbufLimit(t)), kSbufHeadroom * 100));
  if (llvm::Error err = step("row strip", [&] { return chooseRowStrip(); }))
    return err;
  const Candidate *final = step("column block", [&] { return chooseColumnBlock(); });
  if (!final)
    final = step("fit the strip", [&] { return fitChosenStrip(); });
  if (!final)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the kernel could not be built with " + chosen.blocks.str());
  final = step("projections", [&] { return chooseProjectionBlocks(final); });
  plan.chosen = final->request();
  noteChoice(*final);
  return std::move(plan);
}

} // namespace

llvm::Expected<BlockPlan> planBlocks(const BuildRequest &given, PlanShape shape,
                                     const runtime::Target &target,
                                     MeasureFn measure) {
  return Planner(given, std::move(shape), target, measure).run();
}

} // namespace tessel::compiler

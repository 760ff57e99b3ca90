//===- passes/SelectBlocks.cpp - Block sizes from the cost models ---------===//
//
// `select-blocks` sets the tiling parameters from the cost models (DESIGN §5):
//
//  1. Row strip `m`: every candidate (128, 256, ... up to the rows) is built
//     as the rest of this run's pipeline would build it -- TileGen's form
//     re-tiled, then the structural passes after this one, stopping before
//     `allocate` -- and measured with the static cost model
//     (passes/analysis/KernelCost.h): arithmetic intensity, SBUF/PSUM peak
//     of its buffers, roofline time. The smallest `m` whose AI clears the
//     target's ridge point (peak flops / HBM bandwidth) is the least that
//     can be compute bound; from there the largest `m` whose SBUF peak fits
//     the capacity with kSbufHeadroom to spare is taken (most reuse of the
//     weights, no spilling). When no candidate clears the ridge, the largest
//     that fits (the highest AI) is taken.
//  2. Every other parameter (today `n`): at the chosen `m`, the value with
//     the lowest engine bound (KernelCost::boundUs: roofline, tensor-engine
//     and DMA-queue time) that fits; ties go to the larger value (fewer,
//     longer instructions).
// Parameters the user gave with --block are kept. The choice and each
// candidate's predictions are recorded as `// [select-blocks]` notes above
// the kernel in IR dumps.
//
// The pass runs first: block sizes shape the loop nests TileGen builds, so
// they are chosen before the rewrites, by building each candidate through
// them. A kernel read from IR text cannot be re-tiled (no source): its blocks
// are kept and only the predictions are noted.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"
#include "passes/PassRegistry.h"
#include "passes/analysis/KernelCost.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cstdint>
#include <optional>

namespace tessel::passes {
namespace {

using namespace ir;

/// SBUF kept free by the choice: a policy, not a hardware figure -- room for
/// the allocator's alignment, so a chosen block never spills. Small, because
/// `allocate` places exactly the liveness peak on every compiled kernel the
/// agreement tests cover (tests/unit/analysis); only hand-written IR with
/// odd-sized buffers fragments.
constexpr double kSbufHeadroom = 0.02;

struct Candidate {
  std::map<std::string, int64_t> blocks;
  analysis::KernelCost cost;
  bool fits = false;
};

/// The size of the output's dimension labelled `label` (0 if none).
int64_t outputDim(const Kernel &kernel, llvm::StringRef label) {
  for (const Value *v : kernel.args)
    if (v->role == TensorRole::Output)
      for (const Dim &d : v->type.dims)
        if (d.label == label)
          return d.size;
  return 0;
}

/// The chain's rows (`m` tiles them) and the columns `n` tiles (its rows
/// when the chain has no separate column class).
int64_t stripRows(const Kernel &kernel) { return outputDim(kernel, "M"); }
int64_t stripColumns(const Kernel &kernel) {
  int64_t n = outputDim(kernel, "N");
  return n ? n : stripRows(kernel);
}

/// 128, 256, 512, ... up to `limit` rounded up to 128 (which is included).
std::vector<int64_t> powerOfTwoTiles(int64_t limit, int64_t cap) {
  int64_t top = std::min(cap, (limit + kPartitions - 1) / kPartitions * kPartitions);
  std::vector<int64_t> values;
  for (int64_t v = kPartitions; v < top; v *= 2)
    values.push_back(v);
  values.push_back(top);
  return values;
}

std::string kib(int64_t bytes) { return llvm::formatv("{0:f1} KiB", bytes / 1024.0).str(); }

class SelectBlocksPass : public Pass {
public:
  llvm::StringRef name() const override { return "select-blocks"; }
  llvm::StringRef description() const override {
    return "set the block sizes from the cost models: the smallest row strip clearing the ridge "
           "point, then the largest whose SBUF peak fits with headroom";
  }

  PassResult run(Kernel &kernel, PassContext &ctx) override {
    const runtime::Target &t = ctx.target;
    double ridge = t.ridgeFlopsPerByte();
    int64_t sbufLimit = int64_t(t.sbuf_bytes_per_partition * (1.0 - kSbufHeadroom));
    kernel.notes.erase(std::remove_if(kernel.notes.begin(), kernel.notes.end(),
                                      [](const std::string &n) {
                                        return llvm::StringRef(n).startswith("[select-blocks]");
                                      }),
                       kernel.notes.end());
    auto note = [&](const llvm::Twine &text) {
      kernel.notes.push_back(("[select-blocks] " + text).str());
    };

    if (!ctx.retile) {
      analysis::KernelCost cost = analysis::analyzeKernel(kernel, t);
      note("kernel read from IR text cannot be re-tiled; blocks kept: " + describe(cost, t));
      return PassResult::Changed;
    }

    std::map<std::string, int64_t> chosen = kernel.blockParams;
    for (const auto &[name, value] : ctx.blockOverrides)
      chosen[name] = value;
    note(llvm::formatv("target {0}: ridge point {1:f1} flop/B; SBUF limit {2} per partition "
                       "({3:f0}% headroom)",
                       t.name, ridge, kib(sbufLimit), kSbufHeadroom * 100));

    // 1. The row strip.
    if (!ctx.blockOverrides.count("m")) {
      std::vector<Candidate> strips;
      for (int64_t m : powerOfTwoTiles(stripRows(kernel), INT64_MAX)) {
        std::map<std::string, int64_t> blocks = chosen;
        blocks["m"] = m;
        if (auto c = evaluate(blocks, ctx, sbufLimit))
          strips.push_back(*c);
      }
      const Candidate *pick = nullptr;
      std::optional<int64_t> firstClearing;
      for (const Candidate &c : strips) {
        if (!firstClearing && c.cost.arithmeticIntensity() >= ridge)
          firstClearing = c.blocks.at("m");
        if (c.fits)
          pick = &c; // candidates ascend: the last that fits is the largest
      }
      for (const Candidate &c : strips)
        note(llvm::formatv("{0} m = {1}: {2}", &c == pick ? "*" : " ", c.blocks.at("m"),
                           describe(c.cost, t)));
      if (!pick) {
        ctx.diags.error(kernel.loc, "select-blocks: no row strip of kernel @" + kernel.name +
                                        " fits SBUF on target '" + t.name + "'");
        return PassResult::Failed;
      }
      chosen["m"] = pick->blocks.at("m");
      if (!firstClearing)
        note(llvm::formatv("no strip clears the ridge; m = {0} (the largest that fits) has the "
                           "highest AI",
                           chosen["m"]));
      else if (*firstClearing <= chosen["m"])
        note(llvm::formatv("m = {0} is the smallest strip clearing the ridge; m = {1} the "
                           "largest that fits",
                           *firstClearing, chosen["m"]));
      else
        note(llvm::formatv("m = {0} is the smallest strip clearing the ridge but does not fit; "
                           "m = {1} (the largest that fits) has the highest AI",
                           *firstClearing, chosen["m"]));
    }

    // 2. The output column block, at the chosen strip.
    if (!ctx.blockOverrides.count("n") && chosen.count("n")) {
      const int64_t bankColumns = t.psum_bank_bytes / int64_t(sizeof(float));
      std::optional<Candidate> best;
      for (int64_t n : powerOfTwoTiles(stripColumns(kernel), bankColumns)) {
        std::map<std::string, int64_t> blocks = chosen;
        blocks["n"] = n;
        auto c = evaluate(blocks, ctx, sbufLimit);
        if (c && c->fits && (!best || c->cost.boundUs(t) <= best->cost.boundUs(t)))
          best = c;
      }
      if (best)
        chosen["n"] = best->blocks.at("n");
    }

    std::unique_ptr<Kernel> retiled = ctx.retile(chosen);
    if (!retiled) {
      ctx.diags.error(kernel.loc, "select-blocks: kernel @" + kernel.name +
                                      " could not be built with the chosen blocks");
      return PassResult::Failed;
    }
    std::string summary;
    for (const auto &[name, value] : chosen)
      summary += (summary.empty() ? "" : ", ") + name + " = " + std::to_string(value);
    note("chosen: " + summary);
    retiled->notes = std::move(kernel.notes);
    kernel = std::move(*retiled);
    return PassResult::Changed;
  }

private:
  static std::string describe(const analysis::KernelCost &cost, const runtime::Target &t) {
    return llvm::formatv("AI {0:f1} flop/B, SBUF peak {1} ({2:f0}%), PSUM peak {3}, roofline "
                         "{4:f1} us, engine bound {5:f1} us",
                         cost.arithmeticIntensity(), kib(cost.sbufPeakBytesPerPartition),
                         100.0 * cost.sbufPeakBytesPerPartition / t.sbuf_bytes_per_partition,
                         kib(cost.psumPeakBytesPerPartition), cost.rooflineUs(t), cost.boundUs(t))
        .str();
  }

  /// Builds the candidate through the passes after this one (up to
  /// allocate, which would place or spill) and measures it.
  std::optional<Candidate> evaluate(const std::map<std::string, int64_t> &blocks,
                                    PassContext &ctx, int64_t sbufLimit) {
    std::unique_ptr<Kernel> k = ctx.retile(blocks);
    if (!k)
      return std::nullopt;
    DiagnosticEngine quiet = DiagnosticEngine::quiet(ctx.diags.sourceMgr());
    PassContext trial{ctx.target, quiet, blocks};
    auto self = std::find(ctx.pipeline.begin(), ctx.pipeline.end(), name().str());
    for (auto it = self == ctx.pipeline.end() ? self : self + 1; it != ctx.pipeline.end(); ++it) {
      if (*it == "allocate")
        break;
      const PassInfo *info = lookupPass(*it);
      if (!info || info->create()->run(*k, trial) == PassResult::Failed)
        return std::nullopt;
    }
    Candidate c;
    c.blocks = blocks;
    c.cost = analysis::analyzeKernel(*k, ctx.target);
    c.fits = c.cost.sbufPeakBytesPerPartition <= sbufLimit &&
             c.cost.psumPeakBytesPerPartition <= ctx.target.psum_bytes_per_partition;
    return c;
  }
};

} // namespace

std::unique_ptr<Pass> createSelectBlocksPass() { return std::make_unique<SelectBlocksPass>(); }

} // namespace tessel::passes

//===- passes/IoTranspose.cpp - Which engine transposes a kernel's inputs -===//
//
// `io-transpose` places the I/O transposes that implicit-transpose left (a
// kernel input whose tiles are loaded transposed: X of X @ U, which the
// tensor engine needs with its contraction on the partitions) on the engine
// the target's model makes cheaper, as the paper asks ("eliminate
// intermediate transposes entirely and minimize the cost of I/O
// transposes", §3.3):
//
//   dma transpose %X_T[%kt +: 128, %mi +: 128] <- %X[%r +: 128, %kt +: 128]
//
// stays a transposing DMA (NKI's load_transpose2d) or becomes a plain load,
// a tensor-engine transpose and a copy out of PSUM (nc_transpose), g tiles
// of a row per load when the transposes walk along it:
//
//   for %kt = 0 to K step 128 g {
//     %X_rows = alloc sbuf<bf16, [M:128, K:128 g]> bufs 2
//     dma %X_rows[0 +: 128, 0 +: 128 g] <- %X[%r +: 128, %kt +: 128 g]
//     for %kj = 0 to 128 g step 128 {
//       %X_Tpsum = alloc psum<f32, [K:128, M:128]> bufs 2
//       transpose %X_Tpsum[0 +: 128, 0 +: 128] <- %X_rows[0 +: 128, %kj +: 128]
//       copy %X_T[%kt + %kj +: 128, %mi +: 128] <- %X_Tpsum[0 +: 128, 0 +: 128]
//     }
//   }
//
// A transposing DMA runs at dma_transpose_efficiency of a plain one (0.25 on
// trn1, 0.9 on trn2) on 256-byte rows; the tensor engine transposes a
// 128 x 128 tile in about one matmul's issue interval. Which wins depends on
// the kernel: a phase bound by its DMAs gains, one bound by the tensor engine
// loses. So the pass builds each form (g = 1, 2, 4, ... while g tiles fit
// one PSUM bank's moving width) on a copy of the kernel, runs the passes
// that still shape its buffers (widen-loads, schedule), asks the cost model
// (KernelCost::predictedUs) and keeps the cheapest (on a tie the widest
// loads: fewer transfers leave the queues slack the model does not see), the DMA form unless
// another is at least policy::kMinIoTransposeGain faster and still fits the
// planner's SBUF and PSUM. The choice is noted above the kernel. Only the
// intermediate's transposes are what implicit-transpose removes; an I/O
// transpose on the tensor engine counts in `transpose_flops`, as the paper's
// Table 2 counts the fused kernel's.
//
//===----------------------------------------------------------------------===//
#include "passes/ContractionGroups.h"
#include "passes/Passes.h"
#include "passes/Policy.h"
#include "passes/Trial.h"

#include "ir/Builder.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Casting.h"
#include "llvm/Support/FormatVariadic.h"

#include <map>
#include <string>
#include <vector>

namespace tessel::passes {
namespace {

using namespace ir;

/// The tile extent's largest value: its constant, or the constant side of a
/// `min(c, ...)` (a partial tile); 0 when neither.
int64_t extentBound(const std::optional<IndexExpr> &e) {
  if (!e)
    return 0;
  if (e->isConst())
    return e->constValue();
  if (e->kind() == IndexExpr::Kind::Min) {
    if (e->lhs().isConst())
      return e->lhs().constValue();
    if (e->rhs().isConst())
      return e->rhs().constValue();
  }
  return 0;
}

/// A transposing load of a kernel input, one tile of at most partitions x
/// partitions: what the tensor engine can transpose in one instruction.
bool isIoTranspose(const DmaOp &dma, int64_t partitions) {
  if (!dma.transpose || dma.tag != DmaTag::None || dma.src.base->type.space != MemSpace::HBM ||
      dma.dst.base->type.space != MemSpace::SBUF || dma.src.indices.size() != 2 ||
      dma.dst.indices.size() != 2)
    return false;
  for (const Index &i : dma.src.indices) {
    int64_t b = extentBound(i.extent);
    if (b <= 0 || b > partitions)
      return false;
  }
  return dma.dst.indices[0].isRange() && dma.dst.indices[1].isRange();
}

/// The number of partition tiles of rows of a transposing load of a kernel
/// input that reads a whole number of them, more than one, with at most
/// partitions columns (a column block of W^T filled from W's rows); 0 when
/// it is anything else.
int64_t wideRowTiles(const DmaOp &dma, int64_t partitions) {
  if (!dma.transpose || dma.tag != DmaTag::None || dma.src.base->type.space != MemSpace::HBM ||
      dma.dst.base->type.space != MemSpace::SBUF || dma.src.indices.size() != 2 ||
      dma.dst.indices.size() != 2 || !dma.src.indices[0].isRange() || !dma.src.indices[1].isRange() ||
      !dma.dst.indices[0].isRange() || !dma.dst.indices[1].isRange() ||
      llvm::any_of(dma.src.indices, [](const Index &i) { return i.isPatterned(); }) ||
      llvm::any_of(dma.dst.indices, [](const Index &i) { return i.isPatterned(); }))
    return 0;
  const IndexExpr &rows = *dma.src.indices[0].extent;
  int64_t cols = extentBound(dma.src.indices[1].extent);
  if (!rows.isConst() || rows.constValue() <= partitions || rows.constValue() % partitions != 0 || cols <= 0 ||
      cols > partitions || !dma.dst.indices[1].extent->structurallyEqual(rows))
    return 0;
  return rows.constValue() / partitions;
}

/// A transposing load the tensor engine can take: one partition-square tile
/// at most, or a whole number of tiles of rows (split first).
bool isTensorTransposable(const DmaOp &dma, int64_t partitions) {
  return isIoTranspose(dma, partitions) || wideRowTiles(dma, partitions) > 0;
}

class Rewriter {
public:
  /// Moves the transposing loads of the input named `input` to the tensor
  /// engine, `groups` tiles per plain load.
  Rewriter(Kernel &kernel, std::string input, int64_t groups)
      : kernel(kernel), input(std::move(input)), groups(groups), P(kernel.geometry.partitions) {}

  /// Rewrites every I/O transpose of `block`, recursively.
  void rewrite(Block &block) {
    for (size_t i = 0; i < block.ops.size(); ++i) {
      splitRows(block, i);
      Op *op = block.ops[i].get();
      if (auto *loop = llvm::dyn_cast<ForOp>(op)) {
        if (groupAlongContraction(kernel, *loop, input, groups))
          rewrite(loop->body);
        else if (DmaOp *dma = walksRow(*loop))
          rewriteRow(*loop, *dma);
        else
          rewrite(loop->body);
        continue;
      }
      auto *dma = llvm::dyn_cast<DmaOp>(op);
      if (!dma || !isIoTranspose(*dma, P) || dma->src.base->name != input)
        continue;
      Block tile;
      appendTileForm(*dma, tile);
      size_t count = tile.ops.size();
      block.ops.erase(block.ops.begin() + i);
      block.ops.insert(block.ops.begin() + i, std::make_move_iterator(tile.ops.begin()),
                       std::make_move_iterator(tile.ops.end()));
      i += count - 1;
    }
  }

private:
  /// A transposing load of several partition tiles of rows at `block.ops[i]`,
  /// alone or the only op of a loop, becomes a loop over the row tiles
  /// around it (around the loop: the loop still walks along the rows, so
  /// its loads can widen), each load one tile of rows.
  void splitRows(Block &block, size_t i) {
    auto *loop = llvm::dyn_cast<ForOp>(block.ops[i].get());
    auto *dma = loop ? (loop->body.ops.size() == 1 ? opAt<DmaOp>(loop->body, 0) : nullptr)
                     : llvm::dyn_cast<DmaOp>(block.ops[i].get());
    int64_t tiles = dma && dma->src.base->name == input ? wideRowTiles(*dma, P) : 0;
    if (tiles == 0)
      return;
    Block outer;
    ForOp &rows = appendLoop(kernel, outer, "rt", IndexExpr(0), IndexExpr(tiles * P), P, dma->loc);
    IndexExpr j = IndexExpr::var(rows.iv);
    dma->src.indices[0] = {(dma->src.indices[0].start + j).simplified(), IndexExpr(P)};
    dma->dst.indices[1] = {(dma->dst.indices[1].start + j).simplified(), IndexExpr(P)};
    rows.body.ops.push_back(std::move(block.ops[i]));
    block.ops[i] = std::move(outer.ops[0]);
  }

  /// `loop`'s only op, when it is an I/O transpose of full tiles walking
  /// along one row of the input (`%X[%r +: P, %kt +: P]` into
  /// `%X_T[%kt +: P, ...]`, %kt the loop's variable) and the loop's trips
  /// divide by the group count: its loads can take g tiles of the row at once.
  DmaOp *walksRow(ForOp &loop) const {
    if (groups <= 1 || loop.body.ops.size() != 1 || !loop.lo.isConst() || !loop.hi.isConst() ||
        loop.step != P)
      return nullptr;
    auto *dma = opAt<DmaOp>(loop.body, 0);
    if (!dma || !isIoTranspose(*dma, P) || dma->src.base->name != input)
      return nullptr;
    const Index &col = dma->src.indices[1], &row = dma->src.indices[0], &part = dma->dst.indices[0];
    int64_t trips = ForOp::tripCount(loop.lo.constValue(), loop.hi.constValue(), loop.step);
    if (trips % groups != 0 || !col.hasExtent(P) || !part.hasExtent(P) ||
        !col.start.advancesWith(loop.iv) || !part.start.advancesWith(loop.iv) || row.start.mentions(loop.iv) ||
        row.extent->mentions(loop.iv) || dma->dst.indices[1].start.mentions(loop.iv) ||
        dma->dst.indices[1].extent->mentions(loop.iv))
      return nullptr;
    return dma;
  }

  /// The loop loads g tiles of the row per iteration; an inner loop over
  /// them transposes each and copies it into place.
  void rewriteRow(ForOp &loop, DmaOp &dma) {
    const Access src = dma.src;
    Access dst = dma.dst;
    llvm::SMLoc loc = dma.loc;
    loop.step = P * groups;
    loop.body.ops.clear();
    Value *rows = appendLoad(src, P * groups, loc, loop.body);
    ForOp &inner = appendLoop(kernel, loop.body, loop.iv->name + "j", 0, P * groups, P, loc);
    IndexExpr j = IndexExpr::var(inner.iv);
    dst.indices[0].start = (dst.indices[0].start + j).simplified();
    appendTransposeAndCopy(src.base, makeAccess(rows, {{0, *src.indices[0].extent}, {j, P}}), dst, loc,
                           inner.body);
  }

  /// One tile: a plain load into a fresh SBUF tile, transposed and copied.
  void appendTileForm(const DmaOp &dma, Block &out) {
    const Access &src = dma.src;
    Value *rows = appendLoad(src, P, dma.loc, out);
    Access tile = makeAccess(rows, {{0, *src.indices[0].extent}, {0, *src.indices[1].extent}});
    appendTransposeAndCopy(src.base, tile, dma.dst, dma.loc, out);
  }

  /// A fresh SBUF tile [P, columns] (rows of the input on the partitions)
  /// and a plain load of `src`, `columns` wide (the tile form keeps the
  /// source's own extent), into it.
  Value *appendLoad(const Access &src, int64_t columns, llvm::SMLoc loc, Block &out) {
    const TensorType &t = src.base->type;
    Value *rows = appendAlloc(kernel, out, src.base->name + "_rows", MemSpace::SBUF, t.dtype,
                              {{t.dims[0].label, P}, {t.dims[1].label, columns}}, 2, loc);
    auto load = std::make_unique<DmaOp>();
    load->loc = loc;
    load->src = src;
    if (columns != P)
      load->src.indices[1].extent = IndexExpr(columns);
    IndexExpr width = columns != P ? IndexExpr(columns) : *src.indices[1].extent;
    load->dst = makeAccess(rows, {{0, *src.indices[0].extent}, {0, width}});
    out.ops.push_back(std::move(load));
    return rows;
  }

  /// `tile` of `input` (rows on the partitions) transposed into PSUM on the
  /// tensor engine and copied to `dst`.
  void appendTransposeAndCopy(const Value *input, const Access &tile, const Access &dst, llvm::SMLoc loc,
                              Block &out) {
    const TensorType &t = input->type;
    const IndexExpr &rowsExt = *tile.indices[0].extent, &colsExt = *tile.indices[1].extent;
    Value *psum = appendAlloc(kernel, out, input->name + "_Tpsum", MemSpace::PSUM, DType::F32,
                              {{t.dims[1].label, P}, {t.dims[0].label, P}}, 2, loc);
    auto tr = std::make_unique<TransposeOp>();
    tr->loc = loc;
    tr->dst = makeAccess(psum, {{0, colsExt}, {0, rowsExt}});
    tr->src = tile;
    auto copy = std::make_unique<CopyOp>();
    copy->loc = loc;
    copy->dst = dst;
    copy->src = tr->dst;
    out.ops.push_back(std::move(tr));
    out.ops.push_back(std::move(copy));
  }

  Kernel &kernel;
  std::string input;
  int64_t groups;
  int64_t P;
};

/// Tiles per plain load of each input's transposes moved to the tensor
/// engine (the others stay on the DMA engines).
using Placement = std::map<std::string, int64_t>;

/// The predicted latency of `kernel` with its I/O transposes placed as
/// `placement` says, after the passes that still change its buffers
/// (passes/Trial.h); nullopt when that form does not fit.
std::optional<double> trialUs(const Kernel &kernel, const Placement &placement, const runtime::Target &target) {
  std::unique_ptr<Kernel> trial = copyKernel(kernel);
  if (!trial)
    return std::nullopt;
  for (const auto &[input, groups] : placement)
    Rewriter(*trial, input, groups).rewrite(trial->body);
  return predictAfterLatePasses(*trial, target);
}

/// The inputs loaded transposed, in the order of their first load, and how
/// many such loads there are.
std::vector<std::string> transposedInputs(Kernel &kernel, int &sites) {
  std::vector<std::string> inputs;
  walk(kernel.body, [&](Op &op, llvm::ArrayRef<ForOp *>) {
    auto *dma = llvm::dyn_cast<DmaOp>(&op);
    if (!dma || !isTensorTransposable(*dma, kernel.geometry.partitions))
      return;
    ++sites;
    if (!llvm::is_contained(inputs, dma->src.base->name))
      inputs.push_back(dma->src.base->name);
  });
  return inputs;
}

class IoTransposePass : public Pass {
public:
  llvm::StringRef name() const override { return "io-transpose"; }
  llvm::StringRef description() const override {
    return "put each transposing load of a kernel input on the DMA engines or the tensor engine, "
           "whichever the cost model finds faster for the kernel";
  }

  /// Each input in turn: its loads moved to the tensor engine at the group
  /// count the model predicts fastest, kept when policy::kMinIoTransposeGain
  /// faster than the placement so far.
  PassResult run(Kernel &kernel, PassContext &ctx) override {
    int sites = 0;
    std::vector<std::string> inputs = transposedInputs(kernel, sites);
    if (sites == 0)
      return PassResult::Unchanged;
    const runtime::Target &target = ctx.target;
    Placement placement;
    std::optional<double> dmaCost = trialUs(kernel, placement, target);
    if (!dmaCost)
      return PassResult::Unchanged;
    double dmaUs = *dmaCost, bestUs = dmaUs;
    int64_t maxGroups = std::max<int64_t>(1, kernel.geometry.maxMoving / kernel.geometry.partitions);
    // Widest first, so a tie goes to the fewest transfers: the model may
    // see the phase bound by the tensor engine either way, and fewer, larger
    // loads leave the DMA queues more slack for the weights.
    int64_t widest = 1;
    while (widest * 2 <= maxGroups)
      widest *= 2;
    for (const std::string &input : inputs) {
      double inputBest = bestUs * (1.0 - policy::kMinIoTransposeGain);
      int64_t inputGroups = 0;
      for (int64_t g = widest; g >= 1; g /= 2) {
        Placement p = placement;
        p[input] = g;
        std::optional<double> us = trialUs(kernel, p, target);
        if (us && *us < inputBest) {
          inputBest = *us;
          inputGroups = g;
        }
      }
      if (inputGroups > 0) {
        placement[input] = inputGroups;
        bestUs = inputBest;
      }
    }
    // One input at a time, each may miss the gain while moving them all
    // pays (a layer's many small operands): every input at each group
    // count is a candidate too.
    for (int64_t g = widest; g >= 1; g /= 2) {
      Placement all;
      for (const std::string &input : inputs)
        all[input] = g;
      std::optional<double> us = trialUs(kernel, all, target);
      if (us && *us < bestUs && *us < dmaUs * (1.0 - policy::kMinIoTransposeGain)) {
        placement = all;
        bestUs = *us;
      }
    }
    noteChoice(kernel, sites, placement, bestUs, dmaUs);
    for (const auto &[input, groups] : placement)
      Rewriter(kernel, input, groups).rewrite(kernel.body);
    return placement.empty() ? PassResult::Unchanged : PassResult::Changed;
  }

private:
  static void noteChoice(Kernel &kernel, int sites, const Placement &placement, double bestUs, double dmaUs) {
    if (placement.empty()) {
      kernel.notes.push_back(llvm::formatv("[io-transpose] {0} transposing load{1} kept on the DMA engines "
                                           "(predicted {2:F1} us; the tensor engine's form is not "
                                           "{3}% faster)",
                                           sites, sites == 1 ? "" : "s", dmaUs,
                                           int(policy::kMinIoTransposeGain * 100))
                                 .str());
      return;
    }
    std::string moved;
    for (const auto &[input, groups] : placement)
      moved += llvm::formatv("{0}%{1} ({2} tile{3} per plain load)", moved.empty() ? "" : ", ", input, groups,
                             groups == 1 ? "" : "s")
                   .str();
    kernel.notes.push_back(llvm::formatv("[io-transpose] transposing loads of {0} moved to the tensor engine: "
                                         "predicted {1:F1} us, against {2:F1} us with the {3} transposing load{4} on "
                                         "the DMA engines",
                                         moved, bestUs, dmaUs, sites, sites == 1 ? "" : "s")
                               .str());
  }
};

} // namespace

std::unique_ptr<Pass> createIoTransposePass() { return std::make_unique<IoTransposePass>(); }

} // namespace tessel::passes

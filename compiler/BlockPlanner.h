//===- compiler/BlockPlanner.h - Block sizes from the cost model -*- C++ -*-===//
//
// The block planner chooses the block parameters a kernel is built with
// (docs/passes.md, select-blocks), before it is built: block sizes shape TileGen's loop nests, so
// every candidate is built (by the caller, through the same passes the final
// kernel goes through, stopping before `allocate`) and measured with the
// static cost model (KernelCost):
//
//  1. Row strip `m`: candidates 128, 256, 512, ... (multiples of the target's
//     partitions) up to the rows. The smallest `m` whose arithmetic intensity
//     clears the target's ridge point (peak flops / HBM bandwidth) is the
//     least that can be compute bound; from there the largest `m` whose SBUF
//     peak fits the capacity with Policy's headroom is taken (most reuse of
//     the weights, no spilling), unless a smaller one is predicted faster
//     (KernelCost::predictedUs: an MLP's one-kernel form at a short strip
//     against its two-kernel form at a tall one). When no candidate clears the ridge, the
//     largest that fits (the highest AI) is taken; when none fits, the one
//     with the smallest SBUF peak (allocate then spills it). The SBUF peak
//     grows with `m` (every strip buffer scales with it) except where a
//     taller strip is K-blocked by TileGen, so the search stops after
//     policy::kStripMissesBeforeStop candidates in a row that do not fit once
//     one has: the compile costs the same for any number of rows.
//     A strip that does not fit may fit at a narrower `n`, or K-blocked
//     (`k`: the strip holds one K block, the intermediate accumulates in
//     place, passes/StripAccumulate.cpp); the deepest K block that fits is
//     tried, each at the widest `n` that fits.
//     A strip that does not fit however it is built, whose static bound is
//     policy::kSpillingStripGain below the fastest strip that fits, is built
//     through `allocate` (which spills) and taken when its predicted latency,
//     spill traffic included, is that much lower too; its `n` is then the
//     fastest spilling one.
//  2. Every other parameter (today `n`): at the chosen `m`, the value with the
//     lowest engine bound (KernelCost::boundUs) that fits; ties go to the
//     larger value (fewer, longer instructions).
// Parameters given (--block, --tuned) are kept. The choice and each
// candidate's predictions are returned as notes for the IR dump.
// A candidate is built only when the static cost model cannot rank it: one
// whose lower bound (its matmuls at the tensor engine's peak; a chain's
// ideal traffic at its strip through the DMAs' shared bandwidth,
// ChainModel::streamBoundUs) is already slower than what it must beat is
// passed over unbuilt (BlockPlan::steps counts both). A chain's strips are
// walked from the first whose bound is the tallest's, so the shorter ones
// meet a strip that fits before they are built.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_COMPILER_BLOCKPLANNER_H
#define TESSEL_COMPILER_BLOCKPLANNER_H

#include "ir/BlockConfig.h"
#include "passes/Pass.h"
#include "passes/analysis/KernelCost.h"
#include "runtime/Target.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Error.h"

#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace tessel::compiler {

using passes::analysis::KernelCost;

/// What the planner asks to be built: block sizes (unset ones at TileGen's
/// defaults) and the pipeline's parameters (an MLP's two-kernel form).
struct BuildRequest {
  ir::BlockConfig blocks;
  passes::PipelineParams params = {};
  /// Built through `allocate` too: a strip that does not fit, with the
  /// spill saves and reloads allocate inserts priced in its cost.
  bool throughAllocate = false;
  bool operator<(const BuildRequest &o) const {
    return std::tie(blocks, params, throughAllocate) <
           std::tie(o.blocks, o.params, o.throughAllocate);
  }
};

/// One candidate measured (CompileSession::measure): what it was built with
/// (every block, defaults included) and its cost.
struct MeasuredCandidate {
  BuildRequest built;
  KernelCost cost;
};

/// Builds the kernel as `request` asks (unset block parameters at their
/// defaults) through the pipeline up to `allocate` (through it with
/// BuildRequest::throughAllocate) and measures it; nullopt when that
/// configuration cannot be built.
using MeasureFn =
    llvm::function_ref<std::optional<MeasuredCandidate>(const BuildRequest &request)>;

/// What the kernel's shape bounds: the rows `m` tiles and the columns `n`
/// tiles.
struct PlanShape {
  int64_t rows = 0;
  int64_t columns = 0;
  /// For a plain chain X @ W1 @ ... @ Wn: the widths of X, W1, ..., Wn and
  /// the element bytes, for the paper's eq. 11 SBUF note; empty otherwise.
  std::vector<int64_t> chainDims = {};
  int64_t elementBytes = 0;
  /// The contraction the K block `k` splits (a chain's first matmul), 0 when
  /// the planner should not K-block.
  int64_t contraction = 0;
  /// --mlp-form=one-kernel: a candidate that hands an intermediate between
  /// nests through HBM (KernelCost::scratchBytes) counts as not fitting.
  bool oneKernel = false;
  /// An MLP whose form the planner may choose: a strip that does not fit
  /// as one kernel is also tried as two (PipelineParams::mlpForm).
  bool splittable = false;
  /// The projections' own column blocks (ir::BlockConfig::columnBlockName)
  /// -> the columns each tiles; tried narrower than `n` once `m` and `n` are
  /// chosen.
  std::map<std::string, int64_t> projectionColumns = {};
};

/// One step of the planner as --time-passes reports it.
struct PlanStep {
  std::string name;
  double ms = 0;
  /// Candidates measured in the step (each configuration once).
  unsigned measured = 0;
  /// Candidates the static cost model ranked without a measurement: a lower bound
  /// on their latency (the kernel's matmuls at the peak rate, or a chain's
  /// traffic at the strip, ChainModel) already loses to a candidate built.
  unsigned ranked = 0;
};

struct BlockPlan {
  /// The blocks and the pipeline's parameters to build the final kernel
  /// with (an MLP's two-kernel form when the planner chose it).
  BuildRequest chosen;
  /// "[select-blocks] ..." lines for the kernel's notes.
  std::vector<std::string> notes;
  /// The steps in order.
  std::vector<PlanStep> steps;
};

/// Chooses `m` and `n` (those not in `given.blocks`). Fails only when no
/// candidate can be built at all.
llvm::Expected<BlockPlan> planBlocks(const BuildRequest &given, PlanShape shape,
                                     const runtime::Target &target,
                                     MeasureFn measure);

} // namespace tessel::compiler

#endif

//===- tests/unit/compiler/BlockPlannerTest.cpp - choosing blocks from costs -===//
//
// The planner on synthetic costs: which row strip it takes, that it stops
// building candidates once they stop fitting, and that with nothing fitting
// it still chooses (the smallest SBUF peak; allocate then spills).
//
//===----------------------------------------------------------------------===//
#include "compiler/BlockPlanner.h"

#include <gtest/gtest.h>

#include <map>

using namespace tessel;
using namespace tessel::compiler;
using namespace tessel::passes::analysis;
using tessel::ir::BlockConfig;

namespace {

/// A kernel whose SBUF peak grows by `perRow` bytes per strip row and whose
/// arithmetic intensity grows with the strip; records what was built.
struct FakeKernel {
  int64_t perRow = 100;
  int64_t fixed = 0;
  /// Peak bytes per row of the two-kernel form, when it has its own.
  int64_t twoKernelPerRow = 0;
  std::vector<BlockConfig> built;

  std::optional<MeasuredCandidate> operator()(const BuildRequest &request) {
    BlockConfig full = request.blocks;
    if (!full.has("n"))
      full.set("n", 512);
    built.push_back(full);
    int64_t m = full.lookup("m");
    MeasuredCandidate c;
    c.built = {full, request.params};
    c.cost.flops = uint64_t(1) << 40;
    c.cost.hbmReadBytes = (uint64_t(1) << 40) / uint64_t(m); // AI = m flop/B
    bool two = request.params.mlpForm == passes::MlpForm::TwoKernel;
    c.cost.sbufLeastPeakBytesPerPartition = c.cost.sbufPeakBytesPerPartition =
        two && twoKernelPerRow ? twoKernelPerRow * m : fixed + perRow * m;
    c.cost.psumPeakBytesPerPartition = 1024;
    return c;
  }
};

TEST(BlockPlanner, TakesTheLargestStripThatFits) {
  runtime::Target t = runtime::trn1Target(); // 192 KiB SBUF per partition, ridge ~224 flop/B
  FakeKernel k;
  auto plan = planBlocks({}, {65536, 4096}, t, std::ref(k));
  ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  // 100 B per row: 1024 rows (100 KiB) fit, 2048 rows (200 KiB) do not.
  EXPECT_EQ(plan->chosen.blocks.lookup("m"), 1024);
  // Past two strips in a row that do not fit (2048, 4096), none is built.
  for (const BlockConfig &b : k.built)
    EXPECT_LE(b.lookup("m"), 4096) << b.str();
  EXPECT_EQ(plan->notes.back().rfind("[select-blocks] chosen: m = 1024, n = 512", 0), 0u)
      << plan->notes.back();
}

TEST(BlockPlanner, KeepsGivenBlocks) {
  FakeKernel k;
  auto plan = planBlocks({BlockConfig{{"m", 256}}}, {65536, 4096}, runtime::trn1Target(), std::ref(k));
  ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  EXPECT_EQ(plan->chosen.blocks.lookup("m"), 256);
  for (const BlockConfig &b : k.built)
    EXPECT_EQ(b.lookup("m"), 256) << b.str();
}

TEST(BlockPlanner, ChoosesTheSmallestPeakWhenNothingFits) {
  FakeKernel k;
  k.fixed = 1 << 20; // over SBUF whatever the strip
  auto plan = planBlocks({}, {4096, 4096}, runtime::trn1Target(), std::ref(k));
  ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  EXPECT_EQ(plan->chosen.blocks.lookup("m"), 128);
  bool said = false;
  for (const std::string &n : plan->notes)
    said |= llvm::StringRef(n).contains("no row strip fits SBUF; m = 128");
  EXPECT_TRUE(said);
}

/// FakeKernel whose predicted latency depends on the projection column
/// block n_r: `phased` (ns) for each value, the default for any other.
struct ProjectionKernel {
  FakeKernel base;
  std::map<int64_t, double> phased;
  std::optional<MeasuredCandidate> operator()(const BuildRequest &request) {
    std::optional<MeasuredCandidate> c = base(request);
    auto it = phased.find(request.blocks.lookup("n_r"));
    c->cost.phasedNs = it != phased.end() ? it->second : 1e9;
    return c;
  }
};

TEST(BlockPlanner, TakesAProjectionColumnBlockOnlyWhenClearlyFaster) {
  PlanShape shape{65536, 4096};
  shape.projectionColumns = {{"n_r", 4096}};
  ProjectionKernel fast;
  fast.phased = {{256, 0.95e9}, {128, 0.97e9}};
  auto plan = planBlocks({}, shape, runtime::trn1Target(), std::ref(fast));
  ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  EXPECT_EQ(plan->chosen.blocks.lookup("n_r"), 256);
  bool said = false;
  for (const std::string &n : plan->notes)
    said |= llvm::StringRef(n).startswith("[select-blocks] n_r = 256: predicted 950000.0 us, "
                                          "against 1000000.0 us at n = 512");
  EXPECT_TRUE(said);
  // 1% is within the model's resolution: the projection keeps n.
  ProjectionKernel close;
  close.phased = {{256, 0.99e9}};
  plan = planBlocks({}, shape, runtime::trn1Target(), std::ref(close));
  ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  EXPECT_FALSE(plan->chosen.blocks.has("n_r")) << plan->chosen.blocks.str();
  // A given one is kept, and no other is built.
  ProjectionKernel given;
  given.phased = {{256, 0.5e9}};
  plan = planBlocks({BlockConfig{{"n_r", 128}}}, shape, runtime::trn1Target(), std::ref(given));
  ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  EXPECT_EQ(plan->chosen.blocks.lookup("n_r"), 128);
  for (const BlockConfig &b : given.base.built)
    EXPECT_EQ(b.lookup("n_r"), 128) << b.str();
}

/// The static model ranks before anything is built: a kernel predicted at
/// its matmuls' time at the tensor engine's peak has no faster form, so no
/// narrower projection block is built; one predicted slower is searched.
TEST(BlockPlanner, TheStaticModelRanksBeforeABuild) {
  PlanShape shape{65536, 4096};
  shape.projectionColumns = {{"n_r", 4096}};
  FakeKernel atBound; // compute bound: predicted = flops / peak
  auto plan = planBlocks({}, shape, runtime::trn1Target(), std::ref(atBound));
  ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  for (const BlockConfig &b : atBound.built)
    EXPECT_FALSE(b.has("n_r")) << b.str();
  const PlanStep &projections = plan->steps.back();
  EXPECT_EQ(projections.name, "projections");
  EXPECT_EQ(projections.measured, 0u);
  EXPECT_EQ(projections.ranked, 2u); // n_r = 128 and 256, below n = 512
  // Slower than its bound, the same kernel's projection blocks are built.
  ProjectionKernel slow;
  plan = planBlocks({}, shape, runtime::trn1Target(), std::ref(slow));
  ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  EXPECT_EQ(plan->steps.back().measured, 2u);
  EXPECT_EQ(plan->steps.back().ranked, 0u);
}

/// An MLP that fits only as two kernels is asked for as a pipeline
/// parameter, not as a block: the chosen blocks are the kernel's own.
TEST(BlockPlanner, AsksForTheTwoKernelFormAsAPipelineParameter) {
  PlanShape shape{4096, 4096};
  shape.splittable = true;
  FakeKernel k;
  k.fixed = 1 << 20;       // one kernel fits at no strip or column block
  k.twoKernelPerRow = 100; // two kernels fit up to m = 1024
  auto plan = planBlocks({}, shape, runtime::trn1Target(), std::ref(k));
  ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  EXPECT_EQ(plan->chosen.params.mlpForm, passes::MlpForm::TwoKernel);
  EXPECT_EQ(plan->chosen.blocks.lookup("m"), 1024);
  EXPECT_EQ(plan->chosen.blocks.str(), "m = 1024, n = 512");
  // Not splittable (a forced one-kernel form, or no MLP), it is never asked for.
  shape.splittable = false;
  FakeKernel whole = k;
  plan = planBlocks({}, shape, runtime::trn1Target(), std::ref(whole));
  ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  EXPECT_EQ(plan->chosen.params.mlpForm, passes::MlpForm::Auto);
}

/// FakeKernel (strips up to m = 1024 fit) whose strips that fit are slow
/// (`fitNs` phased) and whose taller strips, built through allocate (their
/// spill priced), take `spilledNs`; unspilled, those are predicted at their bound.
struct SpillingKernel {
  FakeKernel base;
  double fitNs = 1e8, spilledNs = 3e7;
  std::vector<BuildRequest> spilled;
  std::optional<MeasuredCandidate> operator()(const BuildRequest &request) {
    std::optional<MeasuredCandidate> c = base(request);
    if (request.blocks.lookup("m") <= 1024) {
      c->cost.phasedNs = fitNs;
    } else if (request.throughAllocate) {
      spilled.push_back(request);
      c->cost.phasedNs = spilledNs;
      c->cost.spillSaveBytes = c->cost.spillReloadBytes = 1 << 30;
      c->cost.sbufLeastPeakBytesPerPartition = 150 << 10; // placed: it fits, spilled
    }
    return c;
  }
};

/// A strip that does not fit is built through allocate when its bound could
/// beat the strips that fit, and taken when its spill still leaves it faster.
TEST(BlockPlanner, PricesASpillingStrip) {
  SpillingKernel k;
  auto plan = planBlocks({}, {65536, 4096}, runtime::trn1Target(), std::ref(k));
  ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  EXPECT_EQ(plan->chosen.blocks.str(), "m = 2048, n = 512");
  EXPECT_TRUE(plan->chosen.throughAllocate);
  ASSERT_FALSE(k.spilled.empty());
  bool said = false;
  for (const std::string &n : plan->notes)
    said |= llvm::StringRef(n).startswith(
        "[select-blocks] m = 2048 does not fit SBUF: allocate saves 1024.0 MiB to HBM and "
        "reloads 1024.0 MiB, and with that traffic it is predicted at 30000.0 us against "
        "100000.0 us for m = 1024");
  EXPECT_TRUE(said);
  // Predicted within policy::kSpillingStripGain of the strip that fits, it is not taken.
  SpillingKernel close;
  close.spilledNs = 0.97e8;
  plan = planBlocks({}, {65536, 4096}, runtime::trn1Target(), std::ref(close));
  ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  EXPECT_EQ(plan->chosen.blocks.lookup("m"), 1024);
  EXPECT_FALSE(plan->chosen.throughAllocate);
  // A strip that fits at its bound leaves nothing to price: no spill is built.
  SpillingKernel fast;
  fast.fitNs = 0;
  plan = planBlocks({}, {65536, 4096}, runtime::trn1Target(), std::ref(fast));
  ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  EXPECT_EQ(plan->chosen.blocks.lookup("m"), 1024);
  EXPECT_TRUE(fast.spilled.empty());
}

TEST(BlockPlanner, FailsWhenNothingCanBeBuilt) {
  auto none = [](const BuildRequest &) -> std::optional<MeasuredCandidate> { return std::nullopt; };
  auto plan = planBlocks({}, {4096, 4096}, runtime::trn1Target(), none);
  ASSERT_FALSE(bool(plan));
  EXPECT_NE(llvm::toString(plan.takeError()).find("no row strip could be built"), std::string::npos);
}

} // namespace

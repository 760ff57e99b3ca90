//===- tests/unit/ir/IndexBoundsTest.cpp - Extremes over a loop nest -------===//
#include "IRTestUtil.h"

#include "ir/IndexBounds.h"

using namespace tessel::ir;
using tessel::ir::test::IRFixture;

namespace {

using Bound = std::optional<int64_t>;

/// Parses `loops` (a loop nest whose innermost body is a memset) and gives
/// the nest around the memset and each loop variable by name.
struct Nest {
  IRFixture f;
  std::unique_ptr<Module> module;
  llvm::SmallVector<ForOp *, 4> loops;
  std::unique_ptr<LoopNestBounds> bounds;

  explicit Nest(llvm::StringRef loopHeads) {
    std::string text = "kernel @k() -> () {\n  %t = alloc sbuf<bf16, [M:128, N:4]>\n";
    unsigned depth = 0;
    llvm::SmallVector<llvm::StringRef, 4> heads;
    loopHeads.split(heads, ';');
    for (llvm::StringRef head : heads) {
      text += "  " + head.trim().str() + " {\n";
      ++depth;
    }
    text += "  memset %t[0 +: 128, 0 +: 4], 0.0\n";
    for (unsigned i = 0; i < depth; ++i)
      text += "  }\n";
    text += "}\n";
    module = f.parse(text);
    EXPECT_TRUE(module) << f.all();
    walk(module->kernels[0]->body, [&](Op &op, llvm::ArrayRef<ForOp *> enclosing) {
      if (op.kind == OpKind::Memset)
        loops.assign(enclosing.begin(), enclosing.end());
    });
    bounds = std::make_unique<LoopNestBounds>(loops);
  }

  Bound minOf(const IndexExpr &e) {
    auto r = bounds->min(e);
    return r ? Bound(r->value) : std::nullopt;
  }
  Bound maxOf(const IndexExpr &e) {
    auto r = bounds->max(e);
    return r ? Bound(r->value) : std::nullopt;
  }

  IndexExpr var(llvm::StringRef name) const {
    for (ForOp *loop : loops)
      if (loop->iv->name == name)
        return IndexExpr::var(loop->iv);
    ADD_FAILURE() << "no loop %" << name.str();
    return 0;
  }
};

TEST(IndexBounds, PartialTileEndsAtTheDimension) {
  Nest n("for %m = 0 to 1000 step 128");
  IndexExpr m = n.var("m"), extent = min(IndexExpr(128), 1000 - m);
  EXPECT_EQ(n.maxOf(m + extent), Bound(1000));
  auto smallest = n.bounds->min(extent);
  ASSERT_TRUE(smallest);
  EXPECT_EQ(smallest->value, 104);
  auto at = n.bounds->iterationOf(*smallest);
  ASSERT_TRUE(at);
  EXPECT_EQ(*at, (llvm::SmallVector<int64_t, 8>{896}));
}

TEST(IndexBounds, LastIterationOfAnUnevenLoop) {
  // 0, 96, 192: the largest start is 192, not 255.
  Nest n("for %m = 0 to 256 step 96");
  EXPECT_EQ(n.maxOf(n.var("m")), Bound(192));
}

TEST(IndexBounds, StripInsideBlockDependsOnOuterLoop) {
  Nest n("for %mb = 0 to 1000 step 512; for %mi = %mb to min(%mb + 512, 1000) step 128");
  IndexExpr mi = n.var("mi"), extent = min(IndexExpr(128), 1000 - mi);
  EXPECT_EQ(n.maxOf(mi + extent), Bound(1000));
  EXPECT_EQ(n.minOf(mi), Bound(0));
  // The last %mi is not affine in %mb (it rounds down to the step), so the
  // smallest extent (104, at %mb = 512, %mi = 896) is bounded, not reached.
  auto smallest = n.minOf(extent);
  ASSERT_TRUE(smallest);
  EXPECT_GE(*smallest, 1);
  EXPECT_LE(*smallest, 104);
  EXPECT_EQ(n.bounds->residue(mi, 128), Bound(0));
}

TEST(IndexBounds, ResidueNeedsStepsThatAreMultiplesOfTheModulus) {
  Nest n("for %k = 64 to 1024 step 64");
  IndexExpr k = n.var("k");
  EXPECT_FALSE(n.bounds->residue(k, 128));
  EXPECT_EQ(n.bounds->residue(k * 2 + 3, 128), Bound(3));
}

TEST(IndexBounds, SubtractedMinIsNotHandled) {
  Nest n("for %m = 0 to 10 step 1");
  EXPECT_FALSE(n.bounds->max(IndexExpr(10) - min(n.var("m"), IndexExpr(5))));
}

TEST(IndexBounds, OverflowIsNotABound) {
  Nest n("for %m = 0 to 4 step 1");
  EXPECT_FALSE(n.maxOf(n.var("m") * (int64_t(1) << 62)));
  EXPECT_EQ(n.maxOf(n.var("m") * (int64_t(1) << 60)), Bound(int64_t(3) << 60));
}

TEST(IndexBounds, OppositeArmsGiveABound) {
  // min(%m, 9 - %m) peaks at 4 in the middle; the bound is min(9, 9).
  Nest n("for %m = 0 to 10 step 1");
  IndexExpr m = n.var("m");
  auto peak = n.maxOf(min(m, 9 - m));
  ASSERT_TRUE(peak);
  EXPECT_GE(*peak, 4);
  EXPECT_LE(*peak, 9);
}

TEST(IndexBounds, Equality) {
  Nest n("for %mb = 0 to 1000 step 512; for %mi = 0 to 512 step 128");
  IndexExpr mb = n.var("mb"), mi = n.var("mi");
  EXPECT_TRUE(n.bounds->equal(min(IndexExpr(128), 1000 - (mb + mi)),
                              min(1000 - mi - mb, IndexExpr(128))));
  EXPECT_FALSE(n.bounds->equal(IndexExpr(128), min(IndexExpr(128), 1000 - (mb + mi))));
  // 128 at every iteration, though written as a min.
  Nest full("for %m = 0 to 1024 step 128");
  EXPECT_TRUE(full.bounds->equal(IndexExpr(128), min(IndexExpr(128), 1024 - full.var("m"))));
}

TEST(IndexBounds, NeverRuns) {
  Nest n("for %i = 0 to 8 step 1; for %j = %i + 4 to %i + 4 step 1");
  EXPECT_FALSE(n.bounds->neverRuns(n.loops[0]));
  EXPECT_TRUE(n.bounds->neverRuns(n.loops[1]));
}

} // namespace

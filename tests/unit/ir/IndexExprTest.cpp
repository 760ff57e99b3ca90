//===- tests/unit/ir/IndexExprTest.cpp - Folding, evaluation, printing -----===//
#include "ir/IndexExpr.h"
#include "ir/Kernel.h"

#include <gtest/gtest.h>

#include <limits>

using namespace tessel::ir;

namespace {

struct Vars {
  Kernel k;
  Value *m = k.newValue(ValueKind::LoopVar, "m");
  Value *n = k.newValue(ValueKind::LoopVar, "n");
  IndexExpr M = IndexExpr::var(m), N = IndexExpr::var(n);
};

TEST(IndexExpr, ConstantsFold) {
  EXPECT_TRUE((IndexExpr(3) + 4).isConst());
  EXPECT_EQ((IndexExpr(3) + 4).constValue(), 7);
  EXPECT_EQ((IndexExpr(3) - 5).constValue(), -2);
  EXPECT_EQ((IndexExpr(6) * 7).constValue(), 42);
  EXPECT_EQ(min(IndexExpr(128), IndexExpr(7)).constValue(), 7);
}

TEST(IndexExpr, IdentitiesFold) {
  Vars v;
  EXPECT_TRUE((v.M + 0).structurallyEqual(v.M));
  EXPECT_TRUE((IndexExpr(0) + v.M).structurallyEqual(v.M));
  EXPECT_TRUE((v.M - 0).structurallyEqual(v.M));
  EXPECT_TRUE((v.M - v.M).isConst());
  EXPECT_TRUE((v.M * 1).structurallyEqual(v.M));
  EXPECT_EQ((v.M * 0).constValue(), 0);
  EXPECT_TRUE(min(v.M, v.M).structurallyEqual(v.M));
  EXPECT_FALSE((v.M + 1).structurallyEqual(v.M + 2));
  EXPECT_FALSE(v.M.structurallyEqual(v.N));
}

TEST(IndexExpr, Eval) {
  Vars v;
  std::vector<int64_t> env(v.k.numValues());
  env[v.m->id] = 640;
  env[v.n->id] = 3;
  EXPECT_EQ(min(IndexExpr(128), IndexExpr(647) - v.M).eval(env), 7);
  EXPECT_EQ((v.M + v.N * 4).eval(env), 652);
  EXPECT_EQ((v.M - (v.N + 1)).eval(env), 636);
}

TEST(IndexExpr, PrintUsesMinimalParentheses) {
  Vars v;
  EXPECT_EQ(min(IndexExpr(128), IndexExpr(647) - v.M).str(), "min(128, 647 - %m)");
  EXPECT_EQ((v.M + v.N * 128).str(), "%m + %n*128");
  EXPECT_EQ(((v.M + v.N) * 2).str(), "(%m + %n)*2");
  EXPECT_EQ((v.M - (v.N + 1)).str(), "%m - (%n + 1)");
  EXPECT_EQ(((v.M - v.N) + 1).str(), "%m - %n + 1");
  EXPECT_EQ((v.M + -5).str(), "%m + -5");
}

TEST(IndexExpr, CollectVarsAndSubstitute) {
  Vars v;
  IndexExpr e = min(v.M + 1, v.N * 2);
  EXPECT_TRUE(e.mentions(v.m));
  EXPECT_TRUE(e.mentions(v.n));
  IndexExpr s = e.substitute(v.n, IndexExpr(10));
  EXPECT_FALSE(s.mentions(v.n));
  EXPECT_EQ(s.str(), "min(%m + 1, 20)");
}

} // namespace

namespace {

TEST(IndexExpr, SimplifiedCollectsAffineSums) {
  Vars v;
  // The block-relative row of a fused store: (%m + %n) - %m == %n.
  EXPECT_EQ(((v.M + v.N) - v.M).simplified().str(), "%n");
  EXPECT_EQ(((v.M + 128) - (v.M - v.N) + v.N).simplified().str(), "%n*2 + 128");
  EXPECT_EQ((v.M * 2 - v.M - v.M + 5).simplified().str(), "5");
  // min() keeps its shape; its operands are simplified.
  EXPECT_EQ(min(IndexExpr(128), IndexExpr(647) - (v.M + v.N - v.N)).simplified().str(),
            "min(128, 647 - %m)");
  std::vector<int64_t> env(v.k.numValues(), 0);
  env[v.m->id] = 384;
  env[v.n->id] = 3;
  IndexExpr e = (v.M + 128) - (v.M - v.N) * 3;
  EXPECT_EQ(e.simplified().eval(env), e.eval(env));
}

TEST(IndexExpr, OverflowIsKeptForEvalCheckedToReport) {
  Vars v;
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  IndexExpr sum = IndexExpr(kMax) + 1;
  EXPECT_FALSE(sum.isConst());
  EXPECT_FALSE(sum.evalChecked({}));
  EXPECT_FALSE((IndexExpr(kMax) * 2).evalChecked({}));
  EXPECT_EQ((IndexExpr(kMax) - 1).evalChecked({}), std::optional<int64_t>(kMax - 1));
  EXPECT_FALSE((v.M * (kMax / 2) * 4).isAffine());
  EXPECT_TRUE((v.M * 3 - v.N + 7).isAffine());
  EXPECT_FALSE(min(v.M, v.N).isAffine());
}

} // namespace

//===- tests/unit/runtime/AccessPlanTest.cpp - inline affine forms --------===//
#include "runtime/AccessPlan.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

using namespace tessel::runtime;

namespace {

// A planned access evaluates its first row and column with FlatAffine: the
// same values as AffineExpr::eval, wrapping included.
TEST(AccessPlanTest, FlatAffineEvaluatesAsAffineExpr) {
  std::mt19937_64 rng(7);
  std::vector<int64_t> vars(6);
  for (int trial = 0; trial < 200; ++trial) {
    AffineExpr e = AffineExpr::constantExpr(int64_t(rng()));
    const int terms = trial % (FlatAffine::MaxTerms + 1);
    for (int t = 0; t < terms; ++t)
      e.addTerm(uint32_t(t + 1), int64_t(rng()) | 1);
    FlatAffine f;
    ASSERT_TRUE(f.assign(e));
    for (int64_t &v : vars)
      v = trial % 3 == 0 ? std::numeric_limits<int64_t>::max() - int64_t(rng() % 8) : int64_t(rng() % 1000);
    EXPECT_EQ(f.eval(vars.data()), e.eval(vars.data()));
  }
}

// A form of more terms than FlatAffine holds is not planned: such an access
// takes the checked path.
TEST(AccessPlanTest, FlatAffineRefusesMoreTerms) {
  AffineExpr e = AffineExpr::constantExpr(3);
  for (uint32_t v = 0; v <= uint32_t(FlatAffine::MaxTerms); ++v)
    e.addTerm(v, 2);
  FlatAffine f;
  EXPECT_FALSE(f.assign(e));
}

} // namespace

//===- tests/unit/factorize/FactorizeTest.cpp -----------------------------===//
#include "factorize/Factorize.h"

#include "gtest/gtest.h"

#include <cmath>
#include <random>

using namespace tessel::factorize;

namespace {

Matrix gaussian(int64_t rows, int64_t cols, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  Matrix m(rows, cols);
  for (float &x : m.data)
    x = dist(rng);
  return m;
}

Matrix product(const Matrix &a, const Matrix &b) {
  Matrix c(a.rows, b.cols);
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t k = 0; k < a.cols; ++k)
      for (int64_t j = 0; j < b.cols; ++j)
        c.at(i, j) += a.at(i, k) * b.at(k, j);
  return c;
}

/// A weight with a decaying spectrum like a trained layer's: G1 diag(s) G2
/// with s_i = 1 / (1 + i)^0.8.
Matrix decayingWeight(int64_t rows, int64_t cols, unsigned seed) {
  const int64_t k = std::min(rows, cols);
  Matrix g1 = gaussian(rows, k, seed), g2 = gaussian(k, cols, seed + 1);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < k; ++j)
      g1.at(i, j) *= float(1.0 / std::pow(1.0 + j, 0.8));
  return product(g1, g2);
}

Factors mustFactorize(const Matrix &W, Options options) {
  llvm::Expected<Factors> f = factorize(W, options);
  EXPECT_TRUE(bool(f)) << (f ? "" : llvm::toString(f.takeError()));
  return f ? std::move(*f) : Factors{};
}

std::string errorOf(llvm::Expected<RankChoice> r) {
  return r ? std::string("no error") : llvm::toString(r.takeError());
}

} // namespace

TEST(ChooseRank, AlignsToTilesAsThePaperDoes) {
  // DeepSeek-V3 up_proj at ratio 0.2: exact rank 4128.8 = 32.26 tiles -> 32 tiles.
  llvm::Expected<RankChoice> r = chooseRank(7168, 18432, 0.2, 128, 0.5);
  ASSERT_TRUE(bool(r)) << errorOf(std::move(r));
  EXPECT_EQ(r->rank, 4096);
  EXPECT_NEAR(r->exactRank, 0.8 * 7168.0 * 18432.0 / (7168.0 + 18432.0), 1e-6);
  EXPECT_NEAR(r->achievedRatio, 1 - 4096.0 * (7168 + 18432) / (7168.0 * 18432.0), 1e-12);
}

TEST(ChooseRank, ThresholdDecidesTheLastTile) {
  // exact rank 4128.8 -> 0.26 of a tile past 32 tiles.
  EXPECT_EQ(chooseRank(7168, 18432, 0.2, 128, 0.25)->rank, 33 * 128);
  EXPECT_EQ(chooseRank(7168, 18432, 0.2, 128, 0.30)->rank, 32 * 128);
  EXPECT_EQ(chooseRank(7168, 18432, 0.2, 128, 1.0)->rank, 32 * 128);
}

TEST(ChooseRank, RejectsWhatCannotCompress) {
  EXPECT_NE(errorOf(chooseRank(256, 256, 0.0, 128, 0.5)).find("outside (0, 1)"), std::string::npos);
  EXPECT_NE(errorOf(chooseRank(256, 256, 1.0, 128, 0.5)).find("outside (0, 1)"), std::string::npos);
  EXPECT_NE(errorOf(chooseRank(256, 256, 0.9, 128, 0.5)).find("rounds to 0"), std::string::npos);
  EXPECT_NE(errorOf(chooseRank(256, 256, 0.5, 128, 1.5)).find("--threshold"), std::string::npos);
  // 0.01 removed of a 100 x 1000 matrix: exact rank 90 -> one tile of 128 > 100.
  EXPECT_NE(errorOf(chooseRank(100, 1000, 0.01, 128, 0.5)).find("past W's full rank 100"),
            std::string::npos);
  // 128 x 128 at 0.05: exact 60.8 -> rank 128 stores 2x the parameters.
  EXPECT_NE(errorOf(chooseRank(128, 128, 0.05, 128, 0.0)).find("not fewer"), std::string::npos);
}

TEST(Factorize, ErrorFallsAsTheRankGrowsAndMatchesTheDiscardedSpectrum) {
  const Matrix W = decayingWeight(96, 160, 7);
  double previous = 2;
  for (int64_t rank : {8, 16, 32, 64, 96}) {
    Options o;
    o.rank = rank;
    Factors f = mustFactorize(W, o);
    ASSERT_EQ(f.U.rows, 96);
    ASSERT_EQ(f.U.cols, rank);
    ASSERT_EQ(f.V.rows, rank);
    ASSERT_EQ(f.V.cols, 160);
    const double err = relativeError(W, f);
    EXPECT_LT(err, previous) << "rank " << rank;
    previous = err;
    // Eckart-Young: the truncation error is the discarded singular values.
    double tail = 0, all = 0;
    for (size_t i = 0; i < f.singularValues.size(); ++i) {
      const double s2 = double(f.singularValues[i]) * f.singularValues[i];
      all += s2;
      if (int64_t(i) >= rank)
        tail += s2;
    }
    EXPECT_NEAR(err, std::sqrt(tail / all), 1e-3) << "rank " << rank;
  }
  EXPECT_LT(previous, 1e-4); // full rank reproduces W
}

TEST(Factorize, SigmaPlacementChangesTheFactorsNotTheProduct) {
  const Matrix W = decayingWeight(64, 48, 3);
  Options split, intoV;
  split.rank = intoV.rank = 16;
  intoV.sigma = SigmaPlacement::IntoV;
  Factors a = mustFactorize(W, split), b = mustFactorize(W, intoV);
  EXPECT_NEAR(relativeError(W, a), relativeError(W, b), 1e-5);
  // With Sigma in V, U has orthonormal columns.
  double dot = 0;
  for (int64_t i = 0; i < b.U.rows; ++i)
    dot += double(b.U.at(i, 0)) * b.U.at(i, 0);
  EXPECT_NEAR(dot, 1.0, 1e-4);
}

TEST(Factorize, WhiteningLowersTheErrorOnTheActivations) {
  const int64_t m = 64, n = 96, N = 512;
  const Matrix W = decayingWeight(m, n, 11);
  // Activations with a few dominant input channels, as LLM activations have.
  Matrix X = gaussian(N, m, 13);
  for (int64_t i = 0; i < N; ++i)
    for (int64_t j = 0; j < m; ++j)
      X.at(i, j) *= j % 8 == 0 ? 20.0f : 1.0f;
  Options plain, whitened;
  plain.rank = whitened.rank = 16;
  whitened.activations = &X;
  Factors p = mustFactorize(W, plain), w = mustFactorize(W, whitened);
  EXPECT_LT(activationError(X, W, w), 0.8 * activationError(X, W, p));
  // ... at the price of a larger error on W itself.
  EXPECT_GT(relativeError(W, w), relativeError(W, p));
}

TEST(Factorize, RejectsBadInput) {
  const Matrix W = decayingWeight(32, 40, 5);
  Options o;
  o.rank = 33;
  llvm::Expected<Factors> f = factorize(W, o);
  ASSERT_FALSE(bool(f));
  EXPECT_NE(llvm::toString(f.takeError()).find("outside [1, 32]"), std::string::npos);

  Matrix narrow = gaussian(100, 31, 1);
  o.rank = 8;
  o.activations = &narrow;
  f = factorize(W, o);
  ASSERT_FALSE(bool(f));
  EXPECT_NE(llvm::toString(f.takeError()).find("W has 32 rows"), std::string::npos);

  // 8 rows of 32 columns: X^T X has rank 8.
  Matrix few = gaussian(8, 32, 2);
  o.activations = &few;
  f = factorize(W, o);
  ASSERT_FALSE(bool(f));
  EXPECT_NE(llvm::toString(f.takeError()).find("--damping"), std::string::npos);
  o.damping = 1e-3;
  f = factorize(W, o);
  EXPECT_TRUE(bool(f)) << (f ? "" : llvm::toString(f.takeError()));
}

//===- factorize/Factorize.cpp - Block-aligned low-rank factorisation -----===//
#include "factorize/Factorize.h"

#include <cblas.h>
#include <lapacke.h>

#include "fmt/format.h"

#include <algorithm>
#include <climits>
#include <cmath>

namespace tessel::factorize {
namespace {

llvm::Error error(const std::string &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

double frobenius(const std::vector<float> &v) {
  double s = 0;
  for (float x : v)
    s += double(x) * double(x);
  return std::sqrt(s);
}

/// C = X^T X, then C += damping * mean(diag C) * I, as double (the Cholesky
/// factorisation is done in double: the covariance of bf16-like activations
/// is often nearly singular).
std::vector<double> covariance(const Matrix &X, double damping) {
  const int64_t m = X.cols;
  std::vector<float> c(size_t(m * m), 0.0f);
  cblas_ssyrk(CblasRowMajor, CblasLower, CblasTrans, int(m), int(X.rows), 1.0f, X.data.data(),
              int(m), 0.0f, c.data(), int(m));
  std::vector<double> cd(c.begin(), c.end());
  double meanDiag = 0;
  for (int64_t i = 0; i < m; ++i)
    meanDiag += cd[size_t(i * m + i)];
  meanDiag /= double(m);
  for (int64_t i = 0; i < m; ++i)
    cd[size_t(i * m + i)] += damping * meanDiag;
  return cd;
}

} // namespace

llvm::Expected<RankChoice> chooseRank(int64_t rows, int64_t cols, double ratio, int64_t tile,
                                      double threshold) {
  if (!(ratio > 0 && ratio < 1))
    return error(fmt::format("--ratio {} is outside (0, 1): it is the fraction of W's parameters "
                             "the factors remove (0.2 keeps 80%)",
                             ratio));
  if (!(threshold >= 0 && threshold <= 1))
    return error(fmt::format("--threshold {} is outside [0, 1]", threshold));
  if (tile <= 0)
    return error(fmt::format("--tile {} must be positive", tile));
  RankChoice choice;
  const double m = double(rows), n = double(cols);
  choice.exactRank = (1 - ratio) * m * n / (m + n);
  const double tiles = choice.exactRank / double(tile);
  const double whole = std::floor(tiles);
  choice.rank = int64_t(whole + (tiles - whole >= threshold && tiles > whole ? 1 : 0)) * tile;
  const int64_t fullRank = std::min(rows, cols);
  if (choice.rank == 0)
    return error(fmt::format("the rank rounds to 0: ratio {} gives rank {:.1f}, {:.2f} tiles of "
                             "{}; use a smaller --ratio, a smaller --tile or a lower --threshold",
                             ratio, choice.exactRank, tiles, tile));
  if (choice.rank > fullRank)
    return error(fmt::format("the rank rounds to {}, past W's full rank {} ([{}, {}])",
                             choice.rank, fullRank, rows, cols));
  choice.achievedRatio = 1 - double(choice.rank) * (m + n) / (m * n);
  if (choice.achievedRatio <= 0)
    return error(fmt::format("rank {} stores {} parameters, not fewer than W's {}: use a larger "
                             "--ratio or a higher --threshold",
                             choice.rank, choice.rank * (rows + cols), rows * cols));
  return choice;
}

llvm::Expected<Factors> factorize(const Matrix &W, const Options &options) {
  const int64_t m = W.rows, n = W.cols, k = std::min(m, n), r = options.rank;
  if (m <= 0 || n <= 0)
    return error("the weight matrix is empty");
  if (m * n > INT_MAX)
    return error(fmt::format("W [{}, {}] has more than 2^31 elements, past what 32-bit LAPACK "
                             "indexes", m, n));
  if (r < 1 || r > k)
    return error(fmt::format("rank {} is outside [1, {}] for W [{}, {}]", r, k, m, n));

  // A = L^T W with C = L L^T when whitening, else A = W.
  Matrix A = W;
  std::vector<float> lower; // L as float, row-major m x m
  if (const Matrix *X = options.activations) {
    if (X->cols != m)
      return error(fmt::format("the activations are [{}, {}] but W has {} rows: X @ W needs X "
                               "with {} columns",
                               X->rows, X->cols, m, m));
    options.onStage("covariance");
    std::vector<double> c = covariance(*X, options.damping);
    if (!std::all_of(c.begin(), c.end(), [](double v) { return std::isfinite(v); }))
      return error("the activations' covariance X^T X overflows float32: X's values are too large "
                   "(scale X down; the whitening does not depend on X's scale)");
    if (std::all_of(X->data.begin(), X->data.end(), [](float v) { return v == 0; }))
      return error("the activations are all zero: whitening weighs W's rows by the activations "
                   "that reach them, and these reach none (damping is relative to X's scale)");
    options.onStage("cholesky");
    lapack_int info = LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', int(m), c.data(), int(m));
    if (info > 0)
      return error(fmt::format(
          "the activations' covariance X^T X ({} x {}, from {} rows) is not positive definite "
          "(its leading minor of order {} is not positive){}: add damping, e.g. --damping 1e-4, "
          "or give more activation rows",
          m, m, X->rows, info, X->rows < m ? fmt::format("; {} rows < {} columns", X->rows, m) : ""));
    if (info < 0)
      return error(fmt::format("LAPACK dpotrf failed (argument {})", -info));
    lower.assign(size_t(m * m), 0.0f);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j <= i; ++j)
        lower[size_t(i * m + j)] = float(c[size_t(i * m + j)]);
    cblas_strmm(CblasRowMajor, CblasLeft, CblasLower, CblasTrans, CblasNonUnit, int(m), int(n),
                1.0f, lower.data(), int(m), A.data.data(), int(n));
  }

  options.onStage("svd");
  Factors f;
  f.singularValues.assign(size_t(k), 0.0f);
  std::vector<float> P(size_t(m * k)), Qt(size_t(k * n));
  lapack_int info = LAPACKE_sgesdd(LAPACK_ROW_MAJOR, 'S', int(m), int(n), A.data.data(), int(n),
                                   f.singularValues.data(), P.data(), int(k), Qt.data(), int(n));
  if (info != 0)
    return error(info > 0 ? "the SVD did not converge (LAPACK sgesdd)"
                          : fmt::format("LAPACK sgesdd failed (argument {})", -info));

  options.onStage("factors");
  const bool split = options.sigma == SigmaPlacement::Split;
  f.U = Matrix(m, r);
  f.V = Matrix(r, n);
  for (int64_t j = 0; j < r; ++j) {
    const float s = f.singularValues[size_t(j)];
    const float left = split ? std::sqrt(s) : 1.0f, right = split ? std::sqrt(s) : s;
    for (int64_t i = 0; i < m; ++i)
      f.U.at(i, j) = P[size_t(i * k + j)] * left;
    for (int64_t c = 0; c < n; ++c)
      f.V.at(j, c) = Qt[size_t(j * n + c)] * right;
  }
  // Undo the whitening: U = L^-T (P_r Sigma_r^a).
  if (!lower.empty())
    cblas_strsm(CblasRowMajor, CblasLeft, CblasLower, CblasTrans, CblasNonUnit, int(m), int(r),
                1.0f, lower.data(), int(m), f.U.data.data(), int(r));
  return f;
}

/// W - U V.
static std::vector<float> residual(const Matrix &W, const Factors &f) {
  std::vector<float> d = W.data;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(W.rows), int(W.cols), int(f.U.cols),
              -1.0f, f.U.data.data(), int(f.U.cols), f.V.data.data(), int(f.V.cols), 1.0f,
              d.data(), int(W.cols));
  return d;
}

double relativeError(const Matrix &W, const Factors &factors) {
  const double norm = frobenius(W.data);
  return norm == 0 ? 0 : frobenius(residual(W, factors)) / norm;
}

double activationError(const Matrix &X, const Matrix &W, const Factors &factors) {
  auto times = [&](const std::vector<float> &b) {
    std::vector<float> out(size_t(X.rows * W.cols));
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(X.rows), int(W.cols), int(X.cols),
                1.0f, X.data.data(), int(X.cols), b.data(), int(W.cols), 0.0f, out.data(),
                int(W.cols));
    return frobenius(out);
  };
  const double norm = times(W.data);
  return norm == 0 ? 0 : times(residual(W, factors)) / norm;
}

} // namespace tessel::factorize

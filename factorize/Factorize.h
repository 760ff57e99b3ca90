//===- factorize/Factorize.h - Block-aligned low-rank factorisation -*- C++ -*-===//
//
// The weight side of the method (paper §4.1, eq. 2-8): a weight W [m, n] of
// a product X @ W becomes U [m, r] @ V [r, n], with
//  * the rank r chosen from a compression ratio and aligned to the tensor
//    engine's tile (eq. 4-5, chooseRank);
//  * optionally, activation-aware whitening (eq. 2-3): with calibration
//    activations X [N, m], the covariance C = X^T X = L L^T (Cholesky), and
//    since X L^-T has orthonormal columns, ||X (W - UV)||_F = ||L^T (W - UV)||_F:
//    the truncated SVD of L^T W minimises the error on the activations, and
//    U = L^-T P_r Sigma_r^a undoes the whitening;
//  * the SVD by LAPACK (sgesdd), the products by BLAS.
// Everything here is float32 row-major; errors are llvm::Error with a message
// a command prints as is.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_FACTORIZE_FACTORIZE_H
#define TESSEL_FACTORIZE_FACTORIZE_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace tessel::factorize {

/// A dense row-major float32 matrix.
struct Matrix {
  int64_t rows = 0, cols = 0;
  std::vector<float> data;

  Matrix() = default;
  Matrix(int64_t rows, int64_t cols) : rows(rows), cols(cols), data(size_t(rows * cols)) {}
  float &at(int64_t r, int64_t c) { return data[size_t(r * cols + c)]; }
  float at(int64_t r, int64_t c) const { return data[size_t(r * cols + c)]; }
};

/// The rank eq. 4-5 give for a compression ratio.
struct RankChoice {
  double exactRank = 0;   ///< (1 - ratio) m n / (m + n): the rank that removes exactly `ratio`
  int64_t rank = 0;       ///< a multiple of the tile
  double achievedRatio = 0; ///< 1 - r (m + n) / (m n): the parameters actually removed
};

/// ratio = the fraction of W's parameters removed (eq. 4: 1 - params(U, V) /
/// params(W)). The exact rank is rounded to whole tiles: up when its
/// fractional part in tiles is at least `threshold`, down otherwise
/// (threshold 0.5 = ordinary rounding, eq. 5). Errors: ratio outside (0, 1),
/// threshold outside [0, 1], a rank that rounds to 0 or past full rank
/// min(m, n), a rank that would store more parameters than W.
llvm::Expected<RankChoice> chooseRank(int64_t rows, int64_t cols, double ratio, int64_t tile,
                                      double threshold);

/// Where the singular values go: split as sqrt into both factors (the
/// paper's eq. 6-8), or wholly into V.
enum class SigmaPlacement { Split, IntoV };

struct Options {
  int64_t rank = 0;
  SigmaPlacement sigma = SigmaPlacement::Split;
  /// Whitening: calibration activations X [N, m] (nullptr: plain SVD of W).
  const Matrix *activations = nullptr;
  /// Adds damping * mean(diag C) to C's diagonal before the Cholesky factorisation.
  double damping = 0;
  /// Called as each stage starts ("covariance", "cholesky", "svd", "factors").
  llvm::function_ref<void(llvm::StringRef stage)> onStage = [](llvm::StringRef) {};
};

struct Factors {
  Matrix U, V;                       ///< [m, r], [r, n]
  std::vector<float> singularValues; ///< all min(m, n) of W (or of L^T W), descending
};

/// Factorises W. Errors: rank outside [1, min(m, n)], activations whose width
/// is not m, a covariance that is not positive definite (names the damping
/// option), a LAPACK failure.
llvm::Expected<Factors> factorize(const Matrix &W, const Options &options);

/// ||W - U V||_F / ||W||_F.
double relativeError(const Matrix &W, const Factors &factors);
/// ||X (W - U V)||_F / ||X W||_F.
double activationError(const Matrix &X, const Matrix &W, const Factors &factors);

} // namespace tessel::factorize

#endif

//===- tests/unit/runtime/BlasThreadsTest.cpp - BLAS after its pool stops -===//
//
// releaseIdleBlasThreads stops BLAS's idle workers at startup; BLAS calls
// after it (threaded ones included, which start the pool again) give the
// same products, however often it is called.
//
//===----------------------------------------------------------------------===//
#include "runtime/BlasThreads.h"

#include <cblas.h>

#include <gtest/gtest.h>

#include <vector>

namespace {

/// C = A B for n x n row-major matrices of small integers (exact in fp32).
void check(int n) {
  std::vector<float> a(size_t(n) * n), b(a.size()), c(a.size());
  for (int i = 0; i < n * n; ++i) {
    a[size_t(i)] = float(i % 7 - 3);
    b[size_t(i)] = float(i % 5 - 2);
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n,
              0.0f, c.data(), n);
  for (int i = 0; i < n; i += 37)
    for (int j = 0; j < n; j += 41) {
      float want = 0;
      for (int k = 0; k < n; ++k)
        want += a[size_t(i) * n + k] * b[size_t(k) * n + j];
      ASSERT_EQ(c[size_t(i) * n + j], want) << i << "," << j;
    }
}

TEST(BlasThreads, ProductsAreRightAfterThePoolStops) {
  tessel::runtime::releaseIdleBlasThreads();
  check(512); // large enough for OpenBLAS to use its threads
  tessel::runtime::releaseIdleBlasThreads();
  tessel::runtime::releaseIdleBlasThreads();
  check(64);
  check(512);
}

} // namespace

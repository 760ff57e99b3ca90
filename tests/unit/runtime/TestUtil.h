//===- tests/unit/runtime/TestUtil.h - helpers for runtime tests -*- C++ -*-===//
#ifndef TESSEL_TESTS_UNIT_RUNTIME_TESTUTIL_H
#define TESSEL_TESTS_UNIT_RUNTIME_TESTUTIL_H

#include "runtime/BF16.h"
#include "runtime/Program.h"
#include "runtime/Simulator.h"
#include "runtime/Target.h"

#include "gtest/gtest.h"

#include <string>
#include <vector>

namespace tessel::runtime::test {

inline Program parseOrFail(const std::string &text) {
  auto p = parseProgram(text, "test.tasm");
  if (!p) {
    ADD_FAILURE() << llvm::toString(p.takeError());
    return Program();
  }
  return std::move(*p);
}

/// Parses an expected failure and returns the message ("" if it parsed).
inline std::string parseError(const std::string &text) {
  auto p = parseProgram(text, "test.tasm");
  if (p)
    return "";
  return llvm::toString(p.takeError());
}

inline SimResult runOrFail(const Program &p, const SimOptions &o = SimOptions(),
                           const Target &t = trn1Target()) {
  auto r = simulate(p, t, o);
  if (!r) {
    ADD_FAILURE() << llvm::toString(r.takeError());
    return SimResult();
  }
  return std::move(*r);
}

/// Simulates an expected failure and returns the message ("" if it ran).
inline std::string runError(const Program &p, const SimOptions &o = SimOptions(),
                            const Target &t = trn1Target()) {
  auto r = simulate(p, t, o);
  if (r)
    return "";
  return llvm::toString(r.takeError());
}

inline std::vector<float> iota(size_t n, float scale = 1.0f, float offset = 0.0f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = roundToBF16(float(i) * scale + offset);
  return v;
}

/// Row-major C[m,n] = A[m,k] @ B[k,n] in double, returned as float.
inline std::vector<float> matmulRef(const std::vector<float> &A, const std::vector<float> &B, int64_t m,
                                    int64_t k, int64_t n) {
  std::vector<float> C(size_t(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t x = 0; x < k; ++x)
        s += double(A[size_t(i * k + x)]) * double(B[size_t(x * n + j)]);
      C[size_t(i * n + j)] = float(s);
    }
  return C;
}

inline std::string readFile(const std::string &path) {
  FILE *f = fopen(path.c_str(), "rb");
  if (!f)
    return "";
  std::string s;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0)
    s.append(buf, n);
  fclose(f);
  return s;
}

} // namespace tessel::runtime::test

#endif

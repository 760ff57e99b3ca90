//===- tests/unit/compiler/ReferenceTest.cpp - the plain fp32 reference -----===//
#include "compiler/Reference.h"
#include "frontend/Frontend.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace tessel;
using namespace tessel::compiler;

namespace {

/// Compiles `src` (one kernel) and keeps the module alive.
struct Program {
  llvm::SourceMgr sm;
  std::unique_ptr<ast::Module> module;
  explicit Program(llvm::StringRef src, std::vector<Define> defines = {}) {
    sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(src, "t.tsl"), llvm::SMLoc());
    DiagnosticEngine diags(sm);
    module = parseAndCheck(diags, defines);
  }
  const ast::Kernel &kernel() const { return module->kernels.at(0); }
};

HostTensor mat(int64_t r, int64_t c, std::vector<float> v) { return HostTensor{{r, c}, std::move(v), {}}; }

HostTensor run(const Program &p, std::map<std::string, HostTensor> inputs) {
  auto out = evaluateReference(p.kernel(), inputs);
  if (!out) {
    ADD_FAILURE() << llvm::toString(out.takeError());
    return {};
  }
  EXPECT_EQ(out->size(), 1u);
  return out->at(kReferenceResultKey);
}

void expectNear(const HostTensor &got, const HostTensor &want, float tol = 1e-5f) {
  ASSERT_EQ(got.shape, want.shape);
  ASSERT_EQ(got.data.size(), want.data.size());
  for (size_t i = 0; i < got.data.size(); ++i)
    EXPECT_NEAR(got.data[i], want.data[i], tol) << "at " << i;
}

} // namespace

TEST(Reference, MatMulChain) {
  Program p("kernel k(X: bf16[2, 3], U: bf16[3, 2], V: bf16[2, 1]) -> bf16[2, 1] {\n  return X @ U @ V\n}\n");
  ASSERT_TRUE(p.module);
  // X @ U = [[1 2 3],[4 5 6]] @ [[1 0],[0 1],[1 1]] = [[4 5],[10 11]]; @ [[1],[2]] = [[14],[32]]
  HostTensor y = run(p, {{"X", mat(2, 3, {1, 2, 3, 4, 5, 6})},
                         {"U", mat(3, 2, {1, 0, 0, 1, 1, 1})},
                         {"V", mat(2, 1, {1, 2})}});
  expectNear(y, mat(2, 1, {14, 32}));
}

TEST(Reference, ElementwiseAndPrecedence) {
  Program p("kernel k(A: f32[1, 3], B: f32[1, 3], C: f32[1, 3]) -> f32[1, 3] {\n  return A + B * C\n}\n");
  HostTensor y = run(p, {{"A", mat(1, 3, {1, 2, 3})}, {"B", mat(1, 3, {2, 2, 2})}, {"C", mat(1, 3, {-1, 0, 5})}});
  expectNear(y, mat(1, 3, {-1, 2, 13}));
}

TEST(Reference, UnaryFunctions) {
  Program p("kernel k(A: f32[1, 4]) -> f32[1, 4] {\n  s = silu(A); g = gelu(A); r = relu(A); e = exp(A)\n"
            "  return s + g * r + e\n}\n");
  std::vector<float> x = {-2.0f, -0.5f, 0.0f, 1.5f};
  HostTensor y = run(p, {{"A", mat(1, 4, x)}});
  std::vector<float> want;
  for (float v : x) {
    double s = v / (1.0 + std::exp(-double(v)));
    double g = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
    double r = v > 0 ? v : 0;
    want.push_back(float(s + g * r + std::exp(double(v))));
  }
  expectNear(y, mat(1, 4, want));
}

TEST(Reference, ReductionsAlongColumnsAndRows) {
  Program p("kernel k(A: f32[2, 3]) -> f32[2, 1] {\n"
            "  return sum(A, axis=1) + max(A, axis=1) * 10 + min(A, axis=-1) * 100 + mean(A, axis=1) * 1000\n}\n");
  ASSERT_TRUE(p.module);
  HostTensor y = run(p, {{"A", mat(2, 3, {1, -2, 4, 0.5, 3, 1})}});
  expectNear(y, mat(2, 1, {3 + 40 - 200 + 1000, 4.5f + 30 + 50 + 1500}), 1e-3f);
  Program q("kernel k(A: f32[2, 3]) -> f32[1, 3] {\n  return sum(A, axis=0)\n}\n");
  ASSERT_TRUE(q.module);
  expectNear(run(q, {{"A", mat(2, 3, {1, -2, 4, 0.5, 3, 1})}}), mat(1, 3, {1.5f, 1, 5}));
}

TEST(Reference, BroadcastsColumnsRowsAndNumbers) {
  Program p("kernel k(A: f32[2, 3], c: f32[2, 1], b: f32[3]) -> f32[2, 3] {\n"
            "  return (A - c) / b + 1 - 0.5 * A\n}\n");
  ASSERT_TRUE(p.module);
  HostTensor y = run(p, {{"A", mat(2, 3, {1, 2, 3, 4, 5, 6})}, {"c", mat(2, 1, {1, 2})}, {"b", mat(1, 3, {1, 2, 4})}});
  std::vector<float> want;
  float A[2][3] = {{1, 2, 3}, {4, 5, 6}}, c[2] = {1, 2}, b[3] = {1, 2, 4};
  for (int r = 0; r < 2; ++r)
    for (int j = 0; j < 3; ++j)
      want.push_back((A[r][j] - c[r]) / b[j] + 1 - 0.5f * A[r][j]);
  expectNear(y, mat(2, 3, want));
}

TEST(Reference, ComparisonsAndTheSoftmaxOfThePrelude) {
  Program p("kernel k(A: f32[1, 3], B: f32[1, 3]) -> f32[1, 3] {\n"
            "  return (A < B) + (A >= B) * 2 + where(A == B, A, B) * 4\n}\n");
  ASSERT_TRUE(p.module);
  expectNear(run(p, {{"A", mat(1, 3, {1, 2, 3})}, {"B", mat(1, 3, {2, 2, 1})}}), mat(1, 3, {1 + 8, 2 + 8, 2 + 4}));
  Program s("kernel k(A: f32[1, 3]) -> f32[1, 3] {\n  return softmax(A, axis=1)\n}\n");
  ASSERT_TRUE(s.module);
  double z = std::exp(-2.0) + std::exp(-1.0) + 1.0;
  expectNear(run(s, {{"A", mat(1, 3, {1, 2, 3})}}),
             mat(1, 3, {float(std::exp(-2.0) / z), float(std::exp(-1.0) / z), float(1.0 / z)}));
}

TEST(Reference, TransposeBothSpellings) {
  Program p("kernel k(A: f32[2, 3]) -> f32[3, 2] {\n  return transpose(A).T.T\n}\n");
  HostTensor y = run(p, {{"A", mat(2, 3, {1, 2, 3, 4, 5, 6})}});
  expectNear(y, mat(3, 2, {1, 4, 2, 5, 3, 6}));
}

TEST(Reference, TransposedOutputOfChain) {
  Program p("kernel k(X: bf16[1, 2], U: bf16[2, 3]) -> bf16[3, 1] {\n  return (X @ U).T\n}\n");
  HostTensor y = run(p, {{"X", mat(1, 2, {1, 2})}, {"U", mat(2, 3, {1, 2, 3, 4, 5, 6})}});
  expectNear(y, mat(3, 1, {9, 12, 15}));
}

TEST(Reference, MlpFromTheDesign) {
  // The design's mlp kernel on tiny shapes: h = silu(X Ug Vg) * (X Uu Vu); return h Ud Vd.
  Program p("kernel mlp(X: bf16[1, 2], Ug: bf16[2, 1], Vg: bf16[1, 2], Uu: bf16[2, 1], Vu: bf16[1, 2],\n"
            "           Ud: bf16[2, 1], Vd: bf16[1, 2]) -> bf16[1, 2] {\n"
            "  h = silu(X @ Ug @ Vg) * (X @ Uu @ Vu)\n  return h @ Ud @ Vd\n}\n");
  ASSERT_TRUE(p.module);
  HostTensor y = run(p, {{"X", mat(1, 2, {1, -1})},
                         {"Ug", mat(2, 1, {2, 1})},   // X Ug = 1
                         {"Vg", mat(1, 2, {1, -1})},  // gate = [1, -1]
                         {"Uu", mat(2, 1, {1, 0})},   // X Uu = 1
                         {"Vu", mat(1, 2, {3, 4})},   // up = [3, 4]
                         {"Ud", mat(2, 1, {1, 1})},
                         {"Vd", mat(1, 2, {1, 2})}});
  float h0 = float(applyActFn(ActFn::Silu, 1.0)) * 3.0f, h1 = float(applyActFn(ActFn::Silu, -1.0)) * 4.0f;
  expectNear(y, mat(1, 2, {h0 + h1, 2 * (h0 + h1)}));
}

TEST(Reference, NoRoundingOfIntermediates) {
  // 1 + 2^-12 is not representable in bf16; fp32 keeps it.
  Program p("kernel k(A: bf16[1, 1], B: bf16[1, 1]) -> bf16[1, 1] {\n  return A + B\n}\n");
  HostTensor y = run(p, {{"A", mat(1, 1, {1.0f})}, {"B", mat(1, 1, {1.0f / 4096})}});
  EXPECT_EQ(y.data[0], 1.0f + 1.0f / 4096);
}

TEST(Reference, InputErrors) {
  Program p("kernel k(A: f32[2, 2]) -> f32[2, 2] {\n  return A\n}\n");
  auto missing = evaluateReference(p.kernel(), {});
  ASSERT_FALSE(missing);
  EXPECT_EQ(llvm::toString(missing.takeError()), "reference: no input for parameter 'A' of kernel 'k'");
  auto shape = evaluateReference(p.kernel(), {{"A", mat(2, 3, std::vector<float>(6))}});
  ASSERT_FALSE(shape);
  EXPECT_EQ(llvm::toString(shape.takeError()),
            "reference: input 'A' has shape [2 x 3], but the parameter is f32[2 x 2]");
  auto size = evaluateReference(p.kernel(), {{"A", mat(2, 2, std::vector<float>(3))}});
  ASSERT_FALSE(size);
  llvm::consumeError(size.takeError());
  auto extra = evaluateReference(p.kernel(), {{"A", mat(2, 2, std::vector<float>(4))}, {"Z", mat(1, 1, {0})}});
  ASSERT_FALSE(extra);
  EXPECT_EQ(llvm::toString(extra.takeError()), "reference: input 'Z' is not a parameter of kernel 'k'");
}

TEST(Reference, LargerMatMulAgainstNaiveLoop) {
  Program p("kernel k(A: f32[5, 7], B: f32[7, 3]) -> f32[5, 3] {\n  return A @ B\n}\n");
  HostTensor a = mat(5, 7, {}), b = mat(7, 3, {});
  for (int i = 0; i < 35; ++i)
    a.data.push_back(float((i * 7) % 11) - 5.0f);
  for (int i = 0; i < 21; ++i)
    b.data.push_back(float((i * 5) % 13) * 0.25f);
  HostTensor want = mat(5, 3, std::vector<float>(15, 0.0f));
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 7; ++k)
        want.data[i * 3 + j] += a.data[i * 7 + k] * b.data[k * 3 + j];
  expectNear(run(p, {{"A", a}, {"B", b}}), want, 1e-4f);
}

TEST(Reference, ErrorEstimateOfAStoredProductIsItsRounding) {
  // Exact inputs: the product's estimate is its bf16 rounding plus a tiny
  // fp32 accumulation term; a sum adds its operands' estimates in quadrature.
  Program p("kernel k(X: bf16[1, 2], W: bf16[2, 1]) -> bf16[1, 1] {\n  h = X @ W\n  return h + h\n}\n");
  ASSERT_TRUE(p.module);
  HostTensor out = run(p, {{"X", mat(1, 2, {1, 2})}, {"W", mat(2, 1, {3, 4})}});
  ASSERT_EQ(out.error.size(), 1u);
  double u = ErrorModel::kStoreRoundoff;
  double product = 11 * u; // |h| = 11, plus ~1e-6 of accumulation
  double expected = std::sqrt(2.0) * product + u * 22;
  EXPECT_NEAR(out.error[0], expected, 1e-5);
}

// Head h of the result reads head h / (H / G) of an operand with G heads:
// 4 heads of A against 2 of B pair A's heads 0, 1 with B's 0 and 2, 3 with
// B's 1; a 2-D C serves every head. Inputs come as [H, S, D] or flattened.
TEST(Reference, GroupedHeadsPerHead) {
  Program p("kernel k(A: f32[4, 1, 2], B: f32[2, 2, 1], C: f32[1, 1]) -> f32[4, 1, 1] {\n"
            "  return A @ B + C\n}\n");
  HostTensor a{{4, 1, 2}, {1, 2, 3, 4, 5, 6, 7, 8}, {}};
  HostTensor b = mat(4, 1, {1, 10, 100, 1000}); // the flattened [2 x 2 x 1]
  HostTensor out = run(p, {{"A", a}, {"B", b}, {"C", mat(1, 1, {0.5f})}});
  HostTensor want{{4, 1, 1}, {21.5f, 43.5f, 6500.5f, 8700.5f}, {}};
  expectNear(out, want);
}

// merge_heads lays head h of [H, S, D] in columns h * D .. h * D + D - 1 of
// a result without heads; the statement without heads (W2 = W * 2) is
// computed once, the one with heads (y) head by head, A's 2 heads serving
// groups of 2 of B's 4 (head h reads A's head h / 2).
TEST(Reference, MergeHeadsSideBySide) {
  Program p("kernel k(A: f32[2, 1, 2], B: f32[4, 2, 1], W: f32[4, 1]) -> f32[1, 1] {\n"
            "  W2 = W * 2\n"
            "  y = A @ B\n"
            "  return merge_heads(y) @ W2\n}\n");
  HostTensor a{{2, 1, 2}, {1, 2, 3, 4}, {}};
  HostTensor b{{4, 2, 1}, {1, 0, 0, 1, 1, 1, 2, 0}, {}};
  // y's heads: [1, 2] @ [1, 0]^T = 1, [1, 2] @ [0, 1]^T = 2, [3, 4] @ [1, 1]^T = 7, [3, 4] @ [2, 0]^T = 6.
  HostTensor out = run(p, {{"A", a}, {"B", b}, {"W", mat(4, 1, {1, 10, 100, 1000})}});
  expectNear(out, mat(1, 1, {2 * (1 + 20 + 700 + 6000)}));
}

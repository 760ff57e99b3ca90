//===- tests/unit/compiler/CheckTest.cpp - run --check's per-element bound --===//
#include "compiler/Check.h"
#include "frontend/Frontend.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <gtest/gtest.h>

using namespace tessel;
using namespace tessel::compiler;

namespace {

/// A kernel parsed and checked from `text`, and the simulator's result to compare.
struct Parsed {
  llvm::SourceMgr sm;
  std::unique_ptr<ast::Module> module;
  runtime::SimResult result;

  explicit Parsed(const char *text) {
    sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, "t.tsl"), llvm::SMLoc());
    DiagnosticEngine diags(sm);
    module = parseAndCheck(diags, {});
  }
};

/// X @ W of two cancelling products: 1 * 200 + 1 * -199.984375 = 1/64.
struct Cancelling : Parsed {
  Cancelling() : Parsed("kernel k(X: bf16[1, 2], W: bf16[2, 1]) -> bf16[1, 1] {\n  return X @ W\n}\n") {
    result.inputs.push_back({"X", DType::BF16, {1, 2}, {1, 1}});
    result.inputs.push_back({"W", DType::BF16, {2, 1}, {200, -199.984375f}});
  }

  bool check(float output, llvm::ArrayRef<float> extraError = {}) {
    result.outputs = {{"out", DType::BF16, {1, 1}, {output}}};
    llvm::json::Object report;
    return checkAgainstReference(module->kernels.at(0), result, "out", report, 0, extraError);
  }
};

} // namespace

TEST(Check, ExtraErrorHoldsRoundingsTheReferenceDoesNotModel) {
  Cancelling c;
  ASSERT_TRUE(c.module);
  EXPECT_TRUE(c.check(0.015625f));
  // Each product stored in bf16 before the add (as --tp's partials are): 200
  // and -200 sum to 0, a whole bf16 step of the products from the reference.
  EXPECT_FALSE(c.check(0.0f));
  const float partialRounding = 283.0f / 256; // hypot(200, 200) * 2^-8
  EXPECT_TRUE(c.check(0.0f, {partialRounding}));
  // The allowance is of the partials' roundings, not of any size.
  EXPECT_FALSE(c.check(50.0f, {partialRounding}));
}

TEST(Check, ExtraErrorOfTheWrongSizeIsAnError) {
  Cancelling c;
  ASSERT_TRUE(c.module);
  EXPECT_FALSE(c.check(0.015625f, {1.0f, 1.0f}));
}

namespace {

/// The fp32 kernel X @ W over 64 products (1 + j/64) * 1/3.
struct Fp32Dot : Parsed {
  double exact = 0;

  Fp32Dot() : Parsed("kernel k(X: f32[1, 64], W: f32[64, 1]) -> f32[1, 1] {\n  return X @ W\n}\n") {
    std::vector<float> x(64), w(64);
    for (int j = 0; j < 64; ++j) {
      x[size_t(j)] = 1.0f + float(j) / 64;
      w[size_t(j)] = 1.0f / 3;
      exact += double(x[size_t(j)]) * double(w[size_t(j)]);
    }
    result.inputs.push_back({"X", DType::F32, {1, 64}, x});
    result.inputs.push_back({"W", DType::F32, {64, 1}, w});
  }

  bool check(double output) {
    result.outputs = {{"out", DType::F32, {1, 1}, {float(output)}}};
    llvm::json::Object report;
    return checkAgainstReference(module->kernels.at(0), result, "out", report);
  }
};

} // namespace

// An fp32 kernel is held to fp32's rounding, not bf16's: a result off by a
// bf16 step (what a kernel that stored an intermediate in bf16 gives) fails
// (it passed under the bf16 bound); the exact one and one off by a few fp32
// steps pass.
TEST(Check, Fp32KernelIsHeldToFp32Rounding) {
  Fp32Dot d;
  ASSERT_TRUE(d.module);
  EXPECT_TRUE(d.check(d.exact));
  EXPECT_TRUE(d.check(d.exact * (1 + 4.0 / 16777216)));
  EXPECT_FALSE(d.check(d.exact * (1 + 1.0 / 512)));
  EXPECT_FALSE(d.check(d.exact * (1 - 1.0 / 256)));
}

//===- tests/unit/compiler/RandomInputsTest.cpp - random input scales -------===//
#include "compiler/RandomInputs.h"
#include "frontend/Frontend.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace tessel;
using namespace tessel::compiler;

namespace {

std::map<std::string, double> halfWidths(llvm::StringRef src) {
  llvm::SourceMgr sm;
  sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(src, "t.tsl"), llvm::SMLoc());
  DiagnosticEngine diags(sm);
  auto module = parseAndCheck(diags, {});
  EXPECT_TRUE(module);
  return module ? randomInputHalfWidths(module->kernels.at(0)) : std::map<std::string, double>{};
}

} // namespace

TEST(RandomInputs, ActivationsUnitWeightsByFanIn) {
  auto s = halfWidths("kernel k(X: bf16[2048, 512], W0: bf16[256, 512], W1: bf16[256, 128], "
                      "G: bf16[2048, 128]) -> bf16[2048, 128] {\n"
                      "  return silu(X @ W0.T @ W1) * G\n}\n");
  EXPECT_DOUBLE_EQ(s.at("X"), std::sqrt(3.0));         // an activation, whatever its rows
  EXPECT_DOUBLE_EQ(s.at("G"), std::sqrt(3.0));         // used elementwise only
  EXPECT_DOUBLE_EQ(s.at("W0"), std::sqrt(3.0 / 512));  // W0.T: fan-in = W0's columns
  EXPECT_DOUBLE_EQ(s.at("W1"), std::sqrt(3.0 / 256));  // fan-in = W1's rows
}

TEST(RandomInputs, ATensorOnTheRightOfAnyMatmulIsAWeight) {
  auto s = halfWidths("kernel gram(X: bf16[640, 256]) -> bf16[256, 256] {\n  return X.T @ X\n}\n");
  EXPECT_DOUBLE_EQ(s.at("X"), std::sqrt(3.0 / 640));
}

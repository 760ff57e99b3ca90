//===- tests/unit/support/SuggestTest.cpp - "did you mean" ---------------===//
#include "support/Suggest.h"

#include <gtest/gtest.h>

using namespace tessel;

namespace {

std::string closest(llvm::StringRef name, std::vector<llvm::StringRef> candidates) {
  return closestName(name, candidates);
}

TEST(Suggest, PicksTheClosePlausibleTypo) {
  EXPECT_EQ(closest("matmull", {"dma", "matmul", "memset"}), "matmul");
  EXPECT_EQ(closest("alocate", {"allocate", "fuse"}), "allocate");
  EXPECT_EQ(closest("slu", {"silu", "gelu", "relu", "exp"}), "silu"); // ties: the first
  EXPECT_EQ(closest("Xz", {"X", "Xs"}), "X");
}

TEST(Suggest, OneThresholdForShortAndLongNames) {
  // At most max(2, |name| / 3) edits...
  EXPECT_EQ(closest("tensor_scaler", {"tensor_scalar"}), "tensor_scalar");
  EXPECT_EQ(closest("tnsr_sclr", {"tensor_scalar"}), "");
  EXPECT_EQ(closest("abcdefghi", {"abcxyzghi"}), "abcxyzghi"); // 3 edits, 9 chars
  EXPECT_EQ(closest("abcdefghi", {"axyzefgwv"}), "");
  // ...and never a name with nothing in common.
  EXPECT_EQ(closest("a", {"b"}), "");
  EXPECT_EQ(closest("ab", {"xy"}), "");
  EXPECT_EQ(closest("M", {"MM"}), "MM");
  EXPECT_EQ(closest("anything", {}), "");
}

TEST(Suggest, StringCandidatesAgree) {
  std::vector<std::string> names = {"hbm", "sbuf", "psum"};
  EXPECT_EQ(closestName("sbuff", names), "sbuf");
}

TEST(Suggest, Lists) {
  EXPECT_EQ(alternatives({"bf16", "f32"}), "bf16 or f32");
  EXPECT_EQ(alternatives({"a", "b", "c"}), "a, b or c");
  EXPECT_EQ(alternatives({"only"}), "only");
  EXPECT_EQ(alternatives({}), "");
  EXPECT_EQ(quotedList({"M", "K"}), "'M', 'K'");
  EXPECT_EQ(quotedList({}), "");
}

} // namespace

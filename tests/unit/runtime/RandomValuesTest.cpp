//===- tests/unit/runtime/RandomValuesTest.cpp - the seeded inputs --------===//
#include "TestUtil.h"

#include "runtime/RandomValues.h"

#include <random>

using namespace tessel::runtime;

namespace {

TEST(RandomValues, BlocksAreStdMersenneTwister64) {
  for (uint64_t seed : {uint64_t(0), uint64_t(5489), ~uint64_t(0) / 3}) {
    std::mt19937_64 ref(seed);
    MersenneTwister64 blocks(seed);
    uint64_t out[MersenneTwister64::BlockSize];
    for (int b = 0; b < 3; ++b) {
      blocks.nextBlock(out);
      for (uint64_t x : out)
        ASSERT_EQ(x, ref()) << "seed " << seed << ", block " << b;
    }
  }
}

TEST(RandomValues, BF16BitsAreTheRoundedFloats) {
  TensorDecl t;
  t.name = "W";
  t.dtype = DType::BF16;
  t.shape = {100, 7}; // not a whole number of blocks
  std::vector<float> f = randomFloats(t, 3, std::nullopt);
  std::vector<uint16_t> b = randomBF16Bits(t, 3, std::nullopt);
  ASSERT_EQ(f.size(), 700u);
  ASSERT_EQ(b.size(), 700u);
  for (size_t i = 0; i < f.size(); ++i)
    EXPECT_EQ(bf16BitsToFloat(b[i]), f[i]) << i;
  EXPECT_EQ(randomTensorValues(t, 3), f);
}

} // namespace

//===- tests/unit/ir/GeometryTest.cpp - The verifier checks the kernel's geometry -===//
#include "IRTestUtil.h"

using namespace tessel::ir;
using tessel::ir::test::IRFixture;
using tessel::ir::test::kMatmulExample;

namespace {

/// trn1 halved on every tile dimension, like tests/lit/target's synthetic
/// target.
TileGeometry halfGeometry() {
  TileGeometry g = tessel::test::trn1Geometry();
  g.partitions = g.maxContraction = g.maxStationary = 64;
  g.maxMoving = 256;
  g.psumBankBytes = 1024;
  return g;
}

TEST(Geometry, ParserSetsTheGivenGeometryOnEveryKernel) {
  IRFixture f;
  f.geometry = halfGeometry();
  auto module = f.parse(kMatmulExample);
  ASSERT_TRUE(module) << f.all();
  EXPECT_EQ(module->kernels.front()->geometry.partitions, 64);
  EXPECT_EQ(module->kernels.front()->geometry.maxMoving, 256);
}

TEST(Geometry, AKernelWithoutGeometryIsRejected) {
  IRFixture f;
  f.geometry = TileGeometry{};
  EXPECT_FALSE(f.verify(kMatmulExample));
  EXPECT_TRUE(f.has("has no tile geometry")) << f.all();
}

// The trn1-shaped example breaks every rule that depends on the geometry
// once the target is half as large.
TEST(Geometry, TheSameIRIsCheckedAgainstASmallerTarget) {
  IRFixture f;
  f.geometry = halfGeometry();
  EXPECT_FALSE(f.verify(kMatmulExample));
  EXPECT_TRUE(f.has("more than one 1 KiB bank (1024 bytes)")) << f.all();
  EXPECT_TRUE(f.has("matmul contraction size K")) << f.all();
  EXPECT_TRUE(f.has("matmul stationary free size M")) << f.all();
  EXPECT_TRUE(f.has("matmul moving free size N")) << f.all();
  EXPECT_TRUE(f.has("transpose source free size")) << f.all();
}

TEST(Geometry, PartitionFoldsFollowTheGeometry) {
  TensorType t{MemSpace::SBUF, DType::BF16, {{"K", 256}, {"N", 4}}};
  EXPECT_EQ(t.partitionFolds(128), 2);
  EXPECT_EQ(t.partitionFolds(64), 4);
  EXPECT_EQ(t.bytesPerPartition(64), 4 * 4 * 2);
}

} // namespace

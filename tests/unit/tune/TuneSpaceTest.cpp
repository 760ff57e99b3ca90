//===- tests/unit/tune/TuneSpaceTest.cpp - tessel tune's search space ---===//
#include "tune/TuneSpace.h"

#include "runtime/Target.h"

#include <gtest/gtest.h>

#include <set>

using namespace tessel;
using namespace tessel::tune;

namespace {

SpaceBounds bounds(int64_t rows, int64_t cols) {
  SpaceBounds b;
  b.names = {"m", "n"};
  b.rows = rows;
  b.cols = cols;
  return b;
}

std::vector<int64_t> valuesOf(const std::vector<BlockConfig> &space, const std::string &name) {
  std::set<int64_t> values;
  for (const BlockConfig &c : space)
    values.insert(c.lookup(name));
  return {values.begin(), values.end()};
}

std::string errorOf(llvm::Error err) { return err ? llvm::toString(std::move(err)) : ""; }

TEST(TuneSpace, DefaultValuesArePowersOfTwoUpToTheDimension) {
  const runtime::Target &t = runtime::trn1Target();
  auto space = enumerateSpace(bounds(640, 1024), {}, t);
  // m: powers of two, then one block over all 640 rows; n: up to one PSUM bank.
  EXPECT_EQ(valuesOf(space, "m"), (std::vector<int64_t>{128, 256, 512, 640}));
  EXPECT_EQ(valuesOf(space, "n"), (std::vector<int64_t>{128, 256, 512}));
  EXPECT_EQ(space.size(), 12u);
  EXPECT_EQ(formatBlock(space.front()), "m=128,n=128");
  EXPECT_EQ(formatBlock(space.back()), "m=640,n=512");
}

TEST(TuneSpace, LargeDimensionsStopAtTheDefaultMaximum) {
  auto space = enumerateSpace(bounds(100000, 256), {}, runtime::trn1Target());
  EXPECT_EQ(valuesOf(space, "m"), (std::vector<int64_t>{128, 256, 512, 1024, 2048, 4096}));
  EXPECT_EQ(valuesOf(space, "n"), (std::vector<int64_t>{128, 256}));
}

TEST(TuneSpace, RowsJustPastTheMaximumAddOneStripOverAllRows) {
  // M = 4097: the planner may pick m = 4224 (33 tiles, all the rows); the
  // space must hold it, or --tuned loses to plain -O2.
  auto space = enumerateSpace(bounds(4097, 256), {}, runtime::trn1Target());
  EXPECT_EQ(valuesOf(space, "m"), (std::vector<int64_t>{128, 256, 512, 1024, 2048, 4096, 4224}));
  // Rows a doubling would not pass stop at the maximum (above).
  space = enumerateSpace(bounds(8193, 256), {}, runtime::trn1Target());
  EXPECT_EQ(valuesOf(space, "m").back(), 4096);
}

TEST(TuneSpace, SmallDimensionsRoundUpToOneTile) {
  auto space = enumerateSpace(bounds(7, 100), {}, runtime::trn1Target());
  ASSERT_EQ(space.size(), 1u);
  EXPECT_EQ(formatBlock(space.front()), "m=128,n=128");
}

TEST(TuneSpace, RestrictionReplacesTheDefaultValues) {
  SpaceRestriction r;
  ASSERT_FALSE(errorOf(parseSpaceSpec("m=512,256,256", r)).size());
  auto space = enumerateSpace(bounds(4096, 4096), r, runtime::trn1Target());
  EXPECT_EQ(valuesOf(space, "m"), (std::vector<int64_t>{256, 512}));
  EXPECT_EQ(space.size(), 6u);
}

TEST(TuneSpace, ProjectionColumnBlocksAreSearchedOnlyWhenNamed) {
  const runtime::Target &t = runtime::trn1Target();
  SpaceBounds b = bounds(1024, 2048);
  b.names.push_back("n_r2");
  b.projectionColumns = {{"n_r2", 300}};
  // Unnamed, the projection takes `n`: the space is m x n alone.
  auto space = enumerateSpace(b, {}, t);
  EXPECT_EQ(space.size(), 12u);
  for (const BlockConfig &c : space)
    EXPECT_FALSE(c.has("n_r2")) << formatBlock(c);
  // Named, its values are bounded by its own columns (300, so 384), not the
  // result's.
  EXPECT_EQ(maxBlockValue("n_r2", b, t), 384);
  SpaceRestriction r;
  ASSERT_FALSE(errorOf(parseSpaceSpec("n_r2=128,384", r)).size());
  ASSERT_EQ(errorOf(validateSpace(r, b, t)), "");
  space = enumerateSpace(b, r, t);
  EXPECT_EQ(valuesOf(space, "n_r2"), (std::vector<int64_t>{128, 384}));
  EXPECT_EQ(space.size(), 24u);
  SpaceRestriction wide;
  ASSERT_FALSE(errorOf(parseSpaceSpec("n_r2=512", wide)).size());
  EXPECT_NE(errorOf(validateSpace(wide, b, t)).find("dimension R2 has 300 columns"), std::string::npos);
}

TEST(TuneSpace, SpaceSpecErrors) {
  SpaceRestriction r;
  EXPECT_EQ(errorOf(parseSpaceSpec("m=", r)), "--space m=: empty search space (no values for 'm')");
  EXPECT_EQ(errorOf(parseSpaceSpec("512", r)),
            "malformed --space '512': expected NAME=INT,INT,..., e.g. --space m=256,512");
  EXPECT_EQ(errorOf(parseSpaceSpec("n=12x", r)), "--space n=12x: '12x' is not an integer");
  SpaceRestriction twice;
  ASSERT_EQ(errorOf(parseSpaceSpec("n=128", twice)), "");
  EXPECT_EQ(errorOf(parseSpaceSpec("n=256", twice)), "--space gives 'n' twice");
}

TEST(TuneSpace, ValidationNamesTheBadValue) {
  const runtime::Target &t = runtime::trn1Target();
  auto check = [&](llvm::StringRef spec) {
    SpaceRestriction r;
    EXPECT_EQ(errorOf(parseSpaceSpec(spec, r)), "");
    return errorOf(validateSpace(r, bounds(640, 1024), t));
  };
  EXPECT_EQ(check("m=128,640"), "");
  EXPECT_EQ(check("k=128"), "--space: unknown block parameter 'k'; this kernel's block "
                            "parameters are: m, n");
  EXPECT_EQ(check("m=0"), "--space m=0: a block must be a positive multiple of the 128-row tile");
  EXPECT_EQ(check("n=192"), "--space n=192: a block must be a positive multiple of the 128-column tile");
  EXPECT_EQ(check("m=768"), "--space m=768: impossible value, the kernel has 640 rows (at most m=640)");
  EXPECT_NE(check("n=1024").find("(at most n=512)"), std::string::npos);
}

TEST(TuneSpace, ContractionBlockIsBoundedByTheContraction) {
  const runtime::Target &t = runtime::trn1Target();
  auto check = [&](llvm::StringRef spec, int64_t contraction) {
    SpaceBounds b = bounds(640, 1024);
    b.names.push_back("k");
    b.contraction = contraction;
    SpaceRestriction r;
    EXPECT_EQ(errorOf(parseSpaceSpec(spec, r)), "");
    return errorOf(validateSpace(r, b, t));
  };
  // Up to the whole contraction, dividing it or not.
  EXPECT_EQ(check("k=1024,3072,7168", 7168), "");
  EXPECT_EQ(check("k=8192", 7168),
            "--space k=8192: impossible value, the contraction K has 7168 elements (at most k=7168)");
  EXPECT_EQ(check("k=7040", 7000),
            "--space k=7040: impossible value, the contraction K has 7000 elements (at most k=6912)");
  EXPECT_EQ(check("k=128", 64),
            "--space k=128: impossible value, the contraction K has 64 elements, fewer than one "
            "128-row tile, so it cannot be K-blocked (leave k out of --space)");
  // No contraction labelled K known: unbounded, as before.
  EXPECT_EQ(check("k=8192", 0), "");
}

TEST(TuneSpace, ShardsPartitionTheSpace) {
  auto space = enumerateSpace(bounds(4096, 4096), {}, runtime::trn1Target());
  ASSERT_EQ(space.size(), 18u);
  std::set<std::string> seen;
  size_t total = 0;
  for (unsigned i = 0; i < 4; ++i) {
    auto shard = selectShard(space, Shard{i, 4});
    EXPECT_GE(shard.size(), 4u);
    EXPECT_LE(shard.size(), 5u);
    total += shard.size();
    for (const BlockConfig &c : shard)
      EXPECT_TRUE(seen.insert(formatBlock(c)).second) << formatBlock(c) << " in two shards";
  }
  EXPECT_EQ(total, space.size());
  EXPECT_EQ(selectShard(space, Shard{}).size(), space.size());
  EXPECT_TRUE(selectShard(space, Shard{18, 19}).empty());
}

TEST(TuneSpace, ShardSpecs) {
  auto ok = parseShard("2/5");
  ASSERT_TRUE(bool(ok));
  EXPECT_EQ(ok->index, 2u);
  EXPECT_EQ(ok->count, 5u);
  EXPECT_EQ(errorOf(parseShard("3/2").takeError()),
            "--shard 3/2: shard index 3 is not below the shard count 2 (shards are numbered 0 to 1)");
  EXPECT_EQ(errorOf(parseShard("0/0").takeError()), "--shard 0/0: the shard count must be at least 1");
  EXPECT_EQ(errorOf(parseShard("-1/2").takeError()),
            "malformed --shard '-1/2': expected I/N (0-based shard I of N), e.g. 0/4");
  EXPECT_EQ(errorOf(parseShard("1").takeError()),
            "malformed --shard '1': expected I/N (0-based shard I of N), e.g. 0/4");
}

} // namespace

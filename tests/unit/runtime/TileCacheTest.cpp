//===- tests/unit/runtime/TileCacheTest.cpp - shared float32 operand copies ===//
//
// A tile at the same write generation is converted once, whichever thread
// asks; the oldest copies make room in the arena; a pinned copy in the way
// is never overwritten.
//
//===----------------------------------------------------------------------===//
#include "runtime/TileCache.h"

#include "gtest/gtest.h"

#include <atomic>
#include <thread>

using namespace tessel::runtime;

namespace {

/// A [128, F] tile of buffer `id` at element `base`.
TileView tile(uint32_t id, int64_t base, int64_t F = 128) {
  TileView v;
  v.isBuffer = true;
  v.id = id;
  v.base = base;
  v.P = 128;
  v.pStride = 512;
  v.nf = 1;
  v.fSize[0] = v.F = F;
  v.fStride[0] = 1;
  return v;
}

constexpr size_t TileBytes = 128 * 128 * sizeof(float);

TEST(TileCache, ConvertsATileOncePerWriteGeneration) {
  TileCache cache(4 * TileBytes);
  int fills = 0;
  auto fillWith = [&](float value) {
    return [&fills, value](float *out) {
      ++fills;
      std::fill_n(out, 128 * 128, value);
    };
  };
  EXPECT_EQ(cache.get(tile(0, 0), 1, fillWith(1)).data()[5], 1.0f);
  EXPECT_EQ(cache.get(tile(0, 0), 1, fillWith(9)).data()[5], 1.0f); // the copy made before
  EXPECT_EQ(fills, 1);
  EXPECT_EQ(cache.get(tile(0, 0), 2, fillWith(2)).data()[5], 2.0f); // written since
  EXPECT_EQ(cache.get(tile(0, 128), 1, fillWith(3)).data()[5], 3.0f); // another tile
  EXPECT_EQ(cache.get(tile(1, 0), 1, fillWith(4)).data()[5], 4.0f);   // another buffer
  EXPECT_EQ(fills, 4);
}

TEST(TileCache, TheOldestCopiesMakeRoom) {
  TileCache cache(3 * TileBytes);
  int fills = 0;
  auto fill = [&](float *out) {
    ++fills;
    out[0] = float(fills);
  };
  for (int64_t t = 0; t < 4; ++t) // the fourth takes the first one's place
    cache.get(tile(0, t * 128), 1, fill);
  EXPECT_EQ(fills, 4);
  EXPECT_EQ(cache.get(tile(0, 3 * 128), 1, fill).data()[0], 4.0f);
  EXPECT_EQ(cache.get(tile(0, 2 * 128), 1, fill).data()[0], 3.0f);
  EXPECT_EQ(fills, 4);
  EXPECT_EQ(cache.get(tile(0, 0), 1, fill).data()[0], 5.0f); // converted again
}

TEST(TileCache, WrappingDropsEveryCopyInTheWay) {
  constexpr int64_t Unit = 64; // [128, 64] floats
  TileCache cache(4 * 128 * Unit * sizeof(float));
  auto fillWith = [](float value) { return [value](float *out) { out[0] = value; }; };
  cache.get(tile(0, 0, 2 * Unit), 1, fillWith(1));   // arena units [0, 2)
  cache.get(tile(0, 256, Unit), 1, fillWith(2));     // [2, 3)
  cache.get(tile(0, 384, Unit), 1, fillWith(3));     // [3, 4)
  cache.get(tile(1, 0, 2 * Unit), 1, fillWith(4));   // wraps: [0, 2)
  cache.get(tile(2, 0, 3 * Unit), 1, fillWith(5));   // wraps again: [0, 3), over the copy before
  EXPECT_EQ(cache.get(tile(2, 0, 3 * Unit), 1, fillWith(0)).data()[0], 5.0f);
  EXPECT_EQ(cache.get(tile(1, 0, 2 * Unit), 1, fillWith(6)).data()[0], 6.0f); // converted again
}

TEST(TileCache, APinnedCopyIsNeverOverwritten) {
  TileCache cache(2 * TileBytes);
  auto fillWith = [](float value) { return [value](float *out) { std::fill_n(out, 128 * 128, value); }; };
  TileCache::Pin held = cache.get(tile(0, 0), 1, fillWith(1));
  cache.get(tile(0, 128), 1, fillWith(2));
  // The arena is full and its oldest copy is pinned: the new one is served
  // from memory of its own.
  EXPECT_EQ(cache.get(tile(0, 256), 1, fillWith(3)).data()[100], 3.0f);
  EXPECT_EQ(held.data()[100], 1.0f);
  EXPECT_EQ(held.data()[128 * 128 - 1], 1.0f);
}

TEST(TileCache, ThreadsShareOneConversion) {
  TileCache cache(8 * TileBytes);
  std::atomic<int> fills{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int64_t i = 0; i < 100; ++i) {
        TileCache::Pin p = cache.get(tile(0, (i % 4) * 128), 1, [&](float *out) {
          ++fills;
          std::fill_n(out, 128 * 128, float(i % 4));
        });
        EXPECT_EQ(p.data()[77], float(i % 4));
      }
    });
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(fills.load(), 4);
}

} // namespace

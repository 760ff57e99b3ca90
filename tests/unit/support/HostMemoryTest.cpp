//===- tests/unit/support/HostMemoryTest.cpp - The memory a run may take ---===//
#include "support/HostMemory.h"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace tessel;

TEST(HostMemory, ParsesSizesWithSuffixes) {
  EXPECT_EQ(parseByteSize("1048576"), 1048576u);
  EXPECT_EQ(parseByteSize("8G"), uint64_t(8) << 30);
  EXPECT_EQ(parseByteSize("512m"), uint64_t(512) << 20);
  EXPECT_EQ(parseByteSize("16GiB"), uint64_t(16) << 30);
  EXPECT_EQ(parseByteSize("2TB"), uint64_t(2) << 40);
  EXPECT_EQ(parseByteSize(" 4k "), 4096u);
  EXPECT_EQ(parseByteSize("100B"), 100u);
}

TEST(HostMemory, RejectsWhatIsNotASize) {
  for (const char *bad : {"", "G", "-1G", "0", "1.5G", "lots", "8X", "99999999999T"})
    EXPECT_EQ(parseByteSize(bad), std::nullopt) << bad;
}

TEST(HostMemory, ReadsMemAvailable) {
  EXPECT_EQ(parseMemAvailable("MemTotal:       24000000 kB\nMemFree:  1 kB\nMemAvailable:   20000000 kB\n"),
            uint64_t(20000000) * 1024);
  EXPECT_EQ(parseMemAvailable("MemTotal:       24000000 kB\n"), std::nullopt);
}

TEST(HostMemory, EnvironmentOverridesTheMachine) {
  setenv("TESSEL_MEMORY_LIMIT", "3G", 1);
  llvm::Expected<std::optional<MemoryLimit>> limit = hostMemoryLimit();
  ASSERT_TRUE(bool(limit));
  ASSERT_TRUE(limit->has_value());
  EXPECT_EQ((*limit)->bytes, uint64_t(3) << 30);
  EXPECT_EQ((*limit)->source, "TESSEL_MEMORY_LIMIT");
  setenv("TESSEL_MEMORY_LIMIT", "three", 1);
  limit = hostMemoryLimit();
  ASSERT_FALSE(bool(limit));
  EXPECT_EQ(llvm::toString(limit.takeError()),
            "TESSEL_MEMORY_LIMIT='three' is not a size: give bytes, or a count with K, M, G or T (e.g. 16G)");
  unsetenv("TESSEL_MEMORY_LIMIT");
}

TEST(HostMemory, FormatsBytes) {
  EXPECT_EQ(formatBytes(512), "512 B");
  EXPECT_EQ(formatBytes(1536), "1.50 KiB");
  EXPECT_EQ(formatBytes(double(uint64_t(3) << 30)), "3.00 GiB");
}

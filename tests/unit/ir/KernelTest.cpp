//===- tests/unit/ir/KernelTest.cpp - Values and fresh names ---------------===//
#include "ir/Kernel.h"

#include <gtest/gtest.h>

using namespace tessel::ir;

namespace {

Value *fresh(Kernel &k, llvm::StringRef hint) {
  return k.newValue(ValueKind::Buffer, k.uniqueName(hint));
}

TEST(KernelNames, FirstFreeSuffix) {
  Kernel k;
  EXPECT_EQ(fresh(k, "t")->name, "t");
  EXPECT_EQ(fresh(k, "t")->name, "t1");
  EXPECT_EQ(fresh(k, "t")->name, "t2");
  EXPECT_EQ(k.uniqueName("u"), "u");
}

TEST(KernelNames, SkipsNamesTakenOtherwise) {
  Kernel k;
  k.newValue(ValueKind::Buffer, "x");
  k.newValue(ValueKind::Buffer, "x1");
  k.newValue(ValueKind::Buffer, "x3");
  EXPECT_EQ(fresh(k, "x")->name, "x2");
  EXPECT_EQ(fresh(k, "x")->name, "x4");
  // A name taken after the hint's last call is still seen.
  k.newValue(ValueKind::Buffer, "x5");
  EXPECT_EQ(k.uniqueName("x"), "x6");
  // Another hint's fresh names count as taken: "x" + "1" vs "x1" + "".
  EXPECT_EQ(fresh(k, "x1")->name, "x11");
}

TEST(KernelNames, AskingTwiceWithoutCreatingGivesTheSameName) {
  Kernel k;
  k.newValue(ValueKind::Buffer, "acc");
  EXPECT_EQ(k.uniqueName("acc"), "acc1");
  EXPECT_EQ(k.uniqueName("acc"), "acc1");
}

TEST(KernelNames, ThousandsOfFreshNames) {
  Kernel k;
  for (int i = 0; i < 5000; ++i)
    fresh(k, "v");
  EXPECT_EQ(k.valueById(4999)->name, "v4999");
  EXPECT_EQ(k.uniqueName("v"), "v5000");
}

} // namespace

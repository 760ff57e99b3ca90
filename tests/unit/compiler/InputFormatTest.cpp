//===- tests/unit/compiler/InputFormatTest.cpp - which format a program is --===//
#include "compiler/InputFormat.h"

#include <gtest/gtest.h>

using namespace tessel::compiler;

TEST(InputFormat, SniffsEachFormatFromItsFirstSignificantLine) {
  EXPECT_EQ(sniffFormat("# a comment\n\nkernel xw(X: bf16[2, 2]) -> bf16[2, 2] {\n"), InputFormat::Tsl);
  EXPECT_EQ(sniffFormat("const M = 4\nkernel k(X: bf16[M, 2]) -> bf16[M, 2] {"), InputFormat::Tsl);
  EXPECT_EQ(sniffFormat("// RUN: x\nkernel @mm(%A: hbm<bf16, [M:2, K:2]>) -> ()"), InputFormat::Tir);
  EXPECT_EQ(sniffFormat("# prog\nkernel xw\ntarget trn1\n"), InputFormat::Tasm);
  EXPECT_EQ(sniffFormat("target trn1-small-sbuf\n"), InputFormat::Tasm);
  EXPECT_EQ(sniffFormat("\xEF\xBB\xBFkernel k # a comment\n"), InputFormat::Tasm);
}

TEST(InputFormat, AnythingElseIsUnknown) {
  EXPECT_EQ(sniffFormat(""), llvm::None);
  EXPECT_EQ(sniffFormat("hello\n"), llvm::None);
  EXPECT_EQ(sniffFormat("kernel k = 3\n"), llvm::None);
  EXPECT_EQ(sniffFormat("# only a comment\n"), llvm::None);
  EXPECT_EQ(sniffFormat(llvm::StringRef("\0\0\0", 3)), llvm::None);
}

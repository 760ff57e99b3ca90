//===- tests/unit/passes/BlockParamsTest.cpp - --block parsing and checks -===//
#include "passes/BlockParams.h"

#include <gtest/gtest.h>

using namespace tessel::passes;

namespace {
std::string errorOf(llvm::Error err) { return err ? llvm::toString(std::move(err)) : ""; }

std::string check(const tessel::ir::BlockConfig &o, int64_t rows = 2048) {
  tessel::ir::BlockConfig known{{"m", 512}, {"n", 512}};
  return errorOf(validateBlockConfig(o, known, rows, tessel::runtime::trn1Target()));
}
} // namespace

TEST(BlockParams, ParsesNameValueLists) {
  tessel::ir::BlockConfig o;
  EXPECT_EQ(errorOf(parseBlockSpec("m=1024, n=256", o)), "");
  EXPECT_EQ(o, (tessel::ir::BlockConfig{{"m", 1024}, {"n", 256}}));
  EXPECT_NE(errorOf(parseBlockSpec("m=1", o)).find("'m' twice"), std::string::npos);
  tessel::ir::BlockConfig p;
  EXPECT_NE(errorOf(parseBlockSpec("m", p)).find("malformed --block 'm'"), std::string::npos);
  EXPECT_NE(errorOf(parseBlockSpec("m=abc", p)).find("expected NAME=INT"), std::string::npos);
  EXPECT_NE(errorOf(parseBlockSpec("=5", p)).find("malformed"), std::string::npos);
}

TEST(BlockParams, AcceptsPossibleBlocks) {
  EXPECT_EQ(check({{"m", 128}}), "");
  EXPECT_EQ(check({{"m", 2048}, {"n", 512}}), "");
  EXPECT_EQ(check({{"m", 256}}, /*rows=*/130), "") << "rows round up to whole tiles";
  EXPECT_EQ(check({{"m", 4096}}, /*rows=*/0), "") << "rows 0: no upper bound known";
}

TEST(BlockParams, RejectsImpossibleBlocksSayingWhy) {
  EXPECT_NE(check({{"k", 128}}).find("unknown block parameter 'k'; this kernel's block "
                                     "parameters are: m, n"),
            std::string::npos);
  EXPECT_NE(check({{"m", 100}}).find("positive multiple of the 128-row tile"), std::string::npos);
  EXPECT_NE(check({{"m", 0}}).find("positive multiple"), std::string::npos);
  EXPECT_NE(check({{"m", 4096}}).find("larger than the kernel's 2048 rows (at most m=2048)"),
            std::string::npos);
  EXPECT_NE(check({{"n", 1024}}).find("needs 4096 bytes per partition, over one 2048-byte PSUM "
                                      "bank of target 'trn1' (at most n=512)"),
            std::string::npos);
}

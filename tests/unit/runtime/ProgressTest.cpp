//===- tests/unit/runtime/ProgressTest.cpp - count and progress line ------===//
#include "TestUtil.h"

using namespace tessel::runtime;
using namespace tessel::runtime::test;

namespace {

TEST(DynamicInstructionCount, LoopsMultiplyStepsAndEmptyLoopsCount0) {
  Program p = parseOrFail(R"(
tensor %A : bf16[128, 128] input
buffer %a : sbuf bf16[128, 128] bufs=2 addr=0
for %i = 0 to 10 step 3 {
  for %j = 5 to 5 {
    alloc %a
    dma %a <- %A queue=0
  }
  alloc %a
  dma %a <- %A queue=0
  memset %a <- 0
}
dma %a <- %A queue=1
)");
  EXPECT_EQ(dynamicInstructionCount(p), uint64_t(4 * 2 + 1));
}

TEST(TerminalProgress, ShowsShareAndClearsAtTheEnd) {
  std::string out;
  llvm::raw_string_ostream os(out);
  auto progress = terminalProgress(os, "k", /*afterSeconds=*/0);
  progress(50, 200);
  EXPECT_NE(out.find("tessel: simulating k: 25.0% of 200 instructions"), std::string::npos) << out;
  progress(60, 200); // within a quarter second of the last update: nothing
  EXPECT_EQ(out.find("30.0%"), std::string::npos);
  out.clear();
  progress(200, 200);
  EXPECT_EQ(out, "\r\x1b[K");
}

TEST(TerminalProgress, SilentForShortRuns) {
  std::string out;
  llvm::raw_string_ostream os(out);
  auto progress = terminalProgress(os, "k", /*afterSeconds=*/3600);
  progress(50, 200);
  progress(200, 200);
  EXPECT_EQ(out, "");
}

} // namespace

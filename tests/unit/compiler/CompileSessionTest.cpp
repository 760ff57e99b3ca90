//===- tests/unit/compiler/CompileSessionTest.cpp - build and measure ------===//
//
// CompileSession: TileGen at the defaults runs once per frontend and target
// however often the block names are asked for (by the session, by
// tileGenBlockParams, by the compile's own check of the blocks given), and
// measure() counts the kernels it builds -- the planner's candidates
// included.
//
//===----------------------------------------------------------------------===//
#include "compiler/CompileSession.h"

#include "passes/Pipelines.h"

#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

using namespace tessel;
using namespace tessel::compiler;

namespace {

constexpr const char *kChain = R"(
kernel chain(X: bf16[512, 256], W1: bf16[256, 256], W2: bf16[256, 256]) -> bf16[512, 256] {
  return X @ W1 @ W2
}
)";

class CompileSessionTest : public ::testing::Test {
protected:
  void SetUp() override {
    fe.sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(kChain, "chain.tsl"),
                                    llvm::SMLoc());
    fe.diags = std::make_unique<DiagnosticEngine>(fe.sourceMgr);
    fe.module = parseAndCheck(*fe.diags, {});
    ASSERT_TRUE(fe.module && !fe.diags->hadError());
    fe.kernel = &fe.module->kernels.front();
  }
  Frontend fe;
  runtime::Target target = runtime::trn1Target();
};

TEST_F(CompileSessionTest, TileGenRunsOnceForTheBlockNames) {
  CompileSession session(fe, target);
  const BlockNames &names = session.blockNames();
  EXPECT_TRUE(names.params.has("m") && names.params.has("n") && names.params.has("k"));
  EXPECT_EQ(names.contraction, 256);
  session.blockNames();
  tileGenBlockParams(fe, target);
  CompileSession(fe, target).blockNames();
  EXPECT_EQ(fe.tileGenDefaultRuns, 1u);
  // The compile checks the blocks given against the same names.
  CompileOptions options;
  options.passes = *passes::buildPipeline("O2");
  ASSERT_NE(CompileSession(fe, target, options).compile(), nullptr);
  EXPECT_EQ(fe.tileGenDefaultRuns, 1u);
  // Another geometry is another TileGen.
  runtime::Target smaller = target;
  smaller.sbuf_bytes_per_partition /= 2;
  CompileSession(fe, smaller).blockNames();
  EXPECT_EQ(fe.tileGenDefaultRuns, 2u);
}

TEST_F(CompileSessionTest, MeasureBuildsAndCounts) {
  CompileOptions options;
  options.passes = *passes::buildPipeline("O2");
  CompileSession session(fe, target, options);
  std::optional<Measurement> m = session.measure({{"m", 256}});
  ASSERT_TRUE(m.has_value());
  ASSERT_TRUE(m->program.has_value());
  EXPECT_EQ(m->blocks.lookup("m"), 256);
  EXPECT_GT(m->cost.flops, 0u);
  // One measurement, and one per candidate the planner built for `n`.
  EXPECT_GT(session.measured(), 1u);
  // The planner's form: the passes given, no program.
  CompileSession quiet(fe, target);
  std::optional<Measurement> c = quiet.measure({{"m", 128}}, {"implicit-transpose", "fuse"});
  ASSERT_TRUE(c.has_value());
  EXPECT_FALSE(c->program.has_value());
  EXPECT_EQ(quiet.measured(), 1u);
}

} // namespace

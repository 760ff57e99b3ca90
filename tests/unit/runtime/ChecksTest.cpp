//===- tests/unit/runtime/ChecksTest.cpp - each run-time check fires -------===//
#include "TestUtil.h"

using namespace tessel::runtime;
using namespace tessel::runtime::test;

namespace {

struct Case {
  const char *name;
  const char *text;
  std::vector<const char *> expect;
  bool timingOnlyToo = true; ///< also fires without numerics
};

const char *kHeader = R"(kernel checks
tensor %X : bf16[300, 256] input
tensor %Y : f32[300, 256] output
buffer %x : sbuf bf16[128, 256] bufs=2 addr=0
buffer %y : sbuf f32[128, 512] bufs=1 addr=1024
buffer %w : sbuf bf16[128, 256] bufs=1 addr=4096
buffer %p : psum f32[128, 512] bufs=1 addr=0
buffer %q : psum f32[128, 512] bufs=1 addr=1024
)";
// kHeader has 8 lines; the first body line is line 9.

TEST(Checks, EachRunTimeCheckFiresWithInstructionAndIteration) {
  Case cases[] = {
      {"hbm out of bounds",
       "for %i = 0 to 3 {\n  dma %x <- %X[%i*128 : 128, 0:256] queue=0\n}\n",
       {"test.tasm:10:3: error: `dma`: out-of-bounds read of %X: dimension 0 range [256, 384) exceeds size 300",
        "(iteration %i=2)", "dma %x[0:128, 0:256] <- %X[%i*128 : 128, 0:256] queue=0"}},
      {"buffer out of bounds",
       "dma %x <- %X[0:128, 0:256] queue=0\nfor %j = 0 to 3 {\n  copy %y[0:128, %j*192 : 256] <- %x\n}\n",
       {"test.tasm:11:3: error: `copy`: out-of-bounds write of %y: dimension 1 range [384, 640) exceeds size 512",
        "(iteration %j=2)"}},
      {"index out of bounds",
       "dma %w[0:128, 0:1] <- %X[400, 0:128] queue=0\n",
       {"`dma`: out-of-bounds read of %X: index 400 in dimension 0 of size 300"}},
      {"partial extent empty",
       "for %i = 0 to 4 {\n  dma %x[0 : min(128, 300 - %i*128), 0:256] <- %X[%i*128 : min(128, 300 - %i*128), 0:256] queue=0\n}\n",
       {"empty extent (-84)", "(iteration %i=3)"}},
      {"tile shape mismatch",
       "dma %x <- %X[0:128, 0:256] queue=0\ncopy %y[0:64, 0:256] <- %x\n",
       {"`copy`: tile shapes differ: the first source is [128, 256] but the destination is [64, 256]"}},
      {"never written sbuf",
       "copy %y[0:128, 0:256] <- %w\n",
       {"`copy`: the first source reads never-written data of SBUF buffer %w (slot 0)", "[0, 0]"},
       false},
      {"partially written sbuf",
       "dma %w[0:100, 0:256] <- %X[0:100, 0:256] queue=0\ncopy %y[0:128, 0:256] <- %w\n",
       {"never-written data of SBUF buffer %w", "tile element [100, 0]"},
       false},
      {"stale after alloc",
       "dma %x <- %X[0:128, 0:256] queue=0\nalloc %x\nalloc %x\ncopy %y[0:128, 0:256] <- %x\n",
       {"never-written data of SBUF buffer %x (slot 1)"},
       false},
      {"accumulate onto never-written psum",
       "dma %w <- %X[0:128, 0:256] queue=0\nmatmul %p[0:128, 0:256] <- %w[0:128, 0:128], %w accumulate\n",
       {"`matmul`: accumulation (PSUM read-modify-write) reads never-written data of PSUM buffer %p"},
       false},
      {"matmul M too large",
       "buffer %big : sbuf bf16[128, 512] bufs=1 addr=8192\ndma %big[0:128, 0:256] <- %X[0:128, 0:256] queue=0\n"
       "matmul %p[0:128, 0:256] <- %big[0:128, 0:256], %big[0:128, 0:256] reset\n",
       {"output tile is [128, 256] but stationary [128, 256]"}},
      {"matmul M limit",
       "buffer %big : sbuf bf16[128, 512] bufs=1 addr=8192\nbuffer %pp : psum f32[256, 4] bufs=1 addr=4096\n",
       {"has 256 partitions"}},
      {"matmul N limit",
       "buffer %big : sbuf bf16[128, 1024] bufs=1 addr=8192\nbuffer %pp : psum f32[128, 1024] bufs=1 addr=4096\n"
       "matmul %pp <- %big[0:128, 0:128], %big reset\n",
       {"moving free size N = 1024 exceeds the limit of 512"}},
      {"sbuf capacity",
       "buffer %huge : sbuf bf16[128, 40000] bufs=2 addr=40000\n",
       {"SBUF capacity exceeded: buffer %huge", "[40000, 200000)", "196608"}},
      {"psum capacity",
       "buffer %pp : psum f32[128, 512] bufs=8 addr=2048\n",
       {"PSUM capacity exceeded: buffer %pp"}},
      {"dma queue",
       "dma %x <- %X[0:128, 0:256] queue=16\n",
       {"DMA queue 16 does not exist: target trn1 has 16 queues (0-15)"}},
      {"transpose shape",
       "dma %x <- %X[0:128, 0:256] queue=0\ntranspose %p[0:128, 0:256] <- %x[0:128, 0:256]\n",
       {"TensorE transposes tiles of at most [128, 128], got [128, 256]"}},
      {"transposing dma shape",
       "dma %x[0:128, 0:256] <- %X[0:128, 0:256] queue=0 transpose\n",
       {"a transposing dma turns a [128, 256] tile into [256, 128]"}},
      {"f32 matmul output",
       "buffer %pb : psum bf16[128, 512] bufs=1 addr=4096\ndma %w <- %X[0:128, 0:256] queue=0\n"
       "matmul %pb[0:128, 0:256] <- %w[0:128, 0:128], %w reset\n",
       {"must be an f32 PSUM buffer"}},
  };
  for (Case &c : cases) {
    Program p = parseOrFail(std::string(kHeader) + c.text);
    for (bool timingOnly : {false, true}) {
      if (timingOnly && !c.timingOnlyToo)
        continue;
      SimOptions o;
      o.timingOnly = timingOnly;
      std::string err = runError(p, o);
      for (const char *e : c.expect)
        EXPECT_NE(err.find(e), std::string::npos)
            << c.name << (timingOnly ? " (timing only)" : "") << ": expected '" << e << "' in:\n" << err;
    }
  }
}

TEST(Checks, PsumBankOverflowOfAnAccumulationGroup) {
  Program p = parseOrFail(R"(
tensor %X : bf16[128, 512] input
buffer %w : sbuf bf16[128, 512] bufs=1 addr=0
buffer %p : psum f32[128, 1024] bufs=1 addr=0
dma %w <- %X queue=0
matmul %p[0:128, 256:512] <- %w[0:128, 0:128], %w reset
)");
  std::string err = runError(p);
  EXPECT_NE(err.find("the accumulation group %p spans PSUM bytes [1024, 3072) of each partition, crossing a "
                     "bank boundary (banks are 2048 bytes; N = 512 fp32 values need 2048 bytes)"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("test.tasm:6:1"), std::string::npos) << err;
}

TEST(Checks, OutputsNeverWrittenAreWarned) {
  Program p = parseOrFail(R"(
tensor %X : f32[4, 4] input
tensor %Y : f32[4, 4] output
buffer %x : sbuf f32[4, 4] bufs=1 addr=0
dma %x <- %X queue=0
dma %Y[0:2, 0:4] <- %x[0:2, 0:4] queue=0
)");
  SimResult r = runOrFail(p);
  ASSERT_EQ(r.report.warnings.size(), 1u);
  EXPECT_NE(r.report.warnings[0].find("output %Y: 8 of 16 elements were never written"), std::string::npos);
}

TEST(Checks, ScratchRoundTripThroughHbm) {
  // Store to a scratch tensor, reload it: RAW through HBM is honoured and
  // reading never-written scratch is an error.
  Program p = parseOrFail(R"(
tensor %X : f32[4, 4] input
tensor %S : f32[4, 4] scratch
tensor %Y : f32[4, 4] output
buffer %x : sbuf f32[4, 4] bufs=1 addr=0
buffer %z : sbuf f32[4, 4] bufs=1 addr=64
dma %x <- %X queue=0
dma %S <- %x queue=1
dma %z <- %S queue=2
dma %Y <- %z queue=3
)");
  SimOptions o;
  o.inputData["X"] = iota(16);
  o.recordTimeline = true;
  SimResult r = runOrFail(p, o);
  EXPECT_EQ(r.output("Y")->data, iota(16));
  ASSERT_EQ(r.timeline.size(), 4u);
  EXPECT_GE(r.timeline[2].startNs, r.timeline[1].startNs + r.timeline[1].durNs);
  EXPECT_EQ(r.report.trafficIntermediates, 2u * 64);
  Program q = parseOrFail(R"(
tensor %S : f32[4, 4] scratch
buffer %z : sbuf f32[4, 4] bufs=1 addr=64
dma %z <- %S queue=2
)");
  EXPECT_NE(runError(q).find("reads never-written data of scratch tensor %S"), std::string::npos);
}

} // namespace

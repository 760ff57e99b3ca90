//===- tests/unit/runtime/FuzzTest.cpp - mutated programs never crash -----===//
//
// Deterministic byte- and token-level mutations of a valid program: each must
// either fail with a located error or parse, round-trip through the printer,
// and simulate (timing-only and functional) without crashing.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

#include <random>

using namespace tessel::runtime;
using namespace tessel::runtime::test;

namespace {

const char *kSeed = R"(kernel fz
tensor %X : bf16[200, 256] input
tensor %U : bf16[256, 128] input
tensor %Y : f32[200, 128] output
buffer %x : sbuf bf16[128, 2, 128] bufs=2 addr=0
buffer %u : sbuf bf16[128, 2, 128] bufs=1 addr=1024
buffer %y : sbuf f32[128, 128] bufs=2 addr=2048
buffer %p : psum f32[128, 128] bufs=2 addr=0
for %k = 0 to 2 {
  dma %u[0:128, %k, 0:128] <- %U[%k*128 : 128, 0:128] queue=1
}
for %m = 0 to 2 {
  alloc %x
  for %k = 0 to 2 {
    dma %x[0:128, %k, 0 : min(128, 200 - %m*128)] <- %X[%m*128 : min(128, 200 - %m*128), %k*128 : 128] queue=0 transpose
  }
  alloc %p
  for %k = 0 to 2 {
    matmul %p[0 : min(128, 200 - %m*128), 0:128] <- %x[0:128, %k, 0 : min(128, 200 - %m*128)], %u[0:128, %k, 0:128] reset_if_first(%k)
  }
  alloc %y
  activation.silu %y[0 : min(128, 200 - %m*128), 0:128] <- %p[0 : min(128, 200 - %m*128), 0:128] scale=0.5
  tensor_tensor.mul %y[0 : min(128, 200 - %m*128), 0:128] <- %y[0 : min(128, 200 - %m*128), 0:128], %p[0 : min(128, 200 - %m*128), 0:128]
  dma %Y[%m*128 : min(128, 200 - %m*128), 0:128] <- %y[0 : min(128, 200 - %m*128), 0:128] queue=2
}
)";

uint64_t dynamicBound(const Program &p, const std::vector<Stmt> &body) {
  uint64_t n = 0;
  for (const Stmt &s : body) {
    if (s.kind == Stmt::Kind::For) {
      const Loop &l = p.loops[s.id];
      n += uint64_t(std::max<int64_t>(0, std::min<int64_t>(l.tripCount(), 1000000))) *
           std::max<uint64_t>(1, dynamicBound(p, l.body));
    } else {
      ++n;
    }
    if (n > 1000000)
      return n;
  }
  return n;
}

TEST(Fuzz, MutatedProgramsFailCleanlyOrRoundTrip) {
  Program seed = parseOrFail(kSeed);
  ASSERT_EQ(runError(seed), "");
  std::mt19937 rng(1234);
  const std::string text = kSeed;
  const char *tokens[] = {"0", "1", "-1", "128", "129", "512", "513", "%m", "%k", "%x", "%X", "%p", ":", ",",
                          "[", "]", "min(", ")", "*", "+", "-", "<-", "queue=15", "queue=99", "transpose",
                          "accumulate", "reset", "bufs=3", "addr=196000", "f32", "bf16", "psum", "sbuf",
                          "for %z = 0 to 3 {", "}", "alloc %y", "\n", " ", "engine=gpsimd", "2000000000000"};
  int parsed = 0, simulated = 0;
  for (int iter = 0; iter < 4000; ++iter) {
    std::string t = text;
    int edits = rng() % 4 == 0 ? 2 : 1;
    for (int e = 0; e < edits; ++e) {
      size_t pos = rng() % t.size();
      switch (rng() % 4) {
      case 0: t.erase(pos, 1 + rng() % 6); break;
      case 1: t.insert(pos, tokens[rng() % (sizeof(tokens) / sizeof(tokens[0]))]); break;
      case 2: t[pos] = char(32 + rng() % 95); break;
      default: {
        size_t len = 1 + rng() % 8;
        t.replace(pos, std::min(len, t.size() - pos), tokens[rng() % (sizeof(tokens) / sizeof(tokens[0]))]);
      }
      }
    }
    auto p = parseProgram(t, "fuzz.tasm");
    if (!p) {
      std::string err = llvm::toString(p.takeError());
      EXPECT_NE(err.find("fuzz.tasm"), std::string::npos) << err;
      continue;
    }
    ++parsed;
    std::string once = printProgramToString(*p);
    auto q = parseProgram(once, "again.tasm");
    ASSERT_TRUE(bool(q)) << llvm::toString(q.takeError()) << "\n" << once;
    EXPECT_EQ(printProgramToString(*q), once);
    if (dynamicBound(*p, p->body) > 20000)
      continue;
    uint64_t elems = 0;
    for (const TensorDecl &td : p->tensors)
      elems += uint64_t(td.numElements());
    for (bool timingOnly : {true, false}) {
      if (!timingOnly && elems > (uint64_t(1) << 22))
        continue;
      SimOptions o;
      o.timingOnly = timingOnly;
      auto r = simulate(*p, trn1Target(), o);
      if (r)
        ++simulated;
      else
        EXPECT_NE(llvm::toString(r.takeError()).find("error:"), std::string::npos);
    }
  }
  EXPECT_GT(parsed, 150);
  EXPECT_GT(simulated, 20);
}

} // namespace

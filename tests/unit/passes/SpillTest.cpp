//===- tests/unit/passes/SpillTest.cpp - Spill estimates and the rewrite --===//
#include "passes/Spill.h"

#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "tests/unit/TestGeometry.h"

#include "llvm/Support/Casting.h"

#include <gtest/gtest.h>

using namespace tessel;
using namespace tessel::ir;
using namespace tessel::passes;

namespace {

/// A 2 KiB strip %aT (filled once, read per 256-column block) and a
/// streaming tile %b.
const char *kMatmul = R"(kernel @mm(%A: hbm<bf16, [M:128, K:1024]>, %B: hbm<bf16, [K:1024, N:512]>) -> (%C: hbm<bf16, [M:128, N:512]>) {
  %aT = alloc sbuf<bf16, [K:1024, M:128]>
  for %k0 = 0 to 1024 step 128 {
    dma transpose %aT[%k0 +: 128, 0 +: 128] <- %A[0 +: 128, %k0 +: 128]
  }
  for %n = 0 to 512 step 256 {
    %acc = alloc psum<f32, [M:128, N:256]>
    for %k = 0 to 1024 step 128 {
      %b = alloc sbuf<bf16, [K:128, N:256]> bufs 2
      dma %b[0 +: 128, 0 +: 256] <- %B[%k +: 128, %n +: 256]
      matmul %acc[0 +: 128, 0 +: 256] <- %aT[%k +: 128, 0 +: 128], %b[0 +: 128, 0 +: 256] reset(%k)
    }
    %c = alloc sbuf<bf16, [M:128, N:256]>
    copy %c[0 +: 128, 0 +: 256] <- %acc[0 +: 128, 0 +: 256]
    dma %C[0 +: 128, %n +: 256] <- %c[0 +: 128, 0 +: 256]
  }
}
)";

/// %v is rewritten in every %j iteration and read in %i (which runs) and
/// %e (which never runs).
const char *kHoist = R"(kernel @h(%A: hbm<bf16, [M:128, N:128]>) -> (%B: hbm<bf16, [M:128, N:128]>) {
  %v = alloc sbuf<bf16, [M:128, N:128]>
  for %j = 0 to 4 step 1 {
    dma %v[0 +: 128, 0 +: 128] <- %A[0 +: 128, 0 +: 128]
    for %i = 0 to 2 step 1 {
      %w = alloc sbuf<bf16, [M:128, N:128]>
      tensor_scalar add %w[0 +: 128, 0 +: 128] <- %v[0 +: 128, 0 +: 128], 1.0
      dma %B[0 +: 128, 0 +: 128] <- %w[0 +: 128, 0 +: 128]
    }
    for %e = 0 to 0 step 1 {
      %u = alloc sbuf<bf16, [M:128, N:128]>
      tensor_scalar mul %u[0 +: 128, 0 +: 128] <- %v[0 +: 128, 0 +: 128], 2.0
      dma %B[0 +: 128, 0 +: 128] <- %u[0 +: 128, 0 +: 128]
    }
  }
}
)";

class SpillTest : public ::testing::Test {
protected:
  SpillTest() : diags(sm) {
    sm.setDiagHandler(
        [](const llvm::SMDiagnostic &d, void *ctx) {
          *static_cast<std::string *>(ctx) += d.getMessage().str() + "\n";
        },
        &errors);
  }

  Kernel &parse(const char *text) {
    module = parseModuleString(text, "k.tir", diags, test::trn1Geometry());
    EXPECT_TRUE(module && errors.empty()) << errors;
    return *module->kernels[0];
  }

  static AllocOp *allocOf(Kernel &k, llvm::StringRef name) {
    AllocOp *found = nullptr;
    walk(k.body, [&](Op &op, llvm::ArrayRef<ForOp *>) {
      if (auto *a = llvm::dyn_cast<AllocOp>(&op); a && a->result->name == name)
        found = a;
    });
    return found;
  }

  static std::string text(const Kernel &k) {
    std::string s;
    llvm::raw_string_ostream os(s);
    printKernel(k, os);
    return os.str();
  }

  llvm::SourceMgr sm;
  DiagnosticEngine diags;
  std::unique_ptr<Module> module;
  std::string errors;
};

} // namespace

TEST_F(SpillTest, StripFreesSpaceStreamingTileDoesNot) {
  Kernel &k = parse(kMatmul);
  OpPositions pos = numberOps(k);
  unsigned at = pos.pos.lookup(allocOf(k, "b"));

  SpillEstimate strip = estimateSpill(k, *allocOf(k, "aT"), pos, at);
  EXPECT_TRUE(strip.spillable);
  // 8 folds x 256 bytes, minus the [K:128, M:128] bufs 2 reload tile live in
  // the %k loop; the save tile lives in the first nest only.
  EXPECT_EQ(strip.freedBytes, 2048 - 512);
  EXPECT_EQ(strip.stagingBytes, 512 + 512);
  // 256 KiB saved once and reloaded once per %n iteration.
  EXPECT_DOUBLE_EQ(strip.trafficBytes, 3 * 1024 * 128 * 2);

  SpillEstimate tile = estimateSpill(k, *allocOf(k, "b"), pos, at);
  EXPECT_TRUE(tile.spillable);
  EXPECT_LE(tile.freedBytes, 0) << "a streaming tile's staging tiles are as large as itself";

  SpillEstimate psum = estimateSpill(k, *allocOf(k, "acc"), pos, at);
  EXPECT_FALSE(psum.spillable);
}

TEST_F(SpillTest, RewriteVerifiesAndTouchesTheSlotOnlyThroughSpillDmas) {
  Kernel &k = parse(kMatmul);
  Value *old = allocOf(k, "aT")->result;
  Value *slot = spillToHbm(k, *allocOf(k, "aT"));
  EXPECT_EQ(slot->name, "aT_spill");
  EXPECT_EQ(slot->type.space, MemSpace::HBM);
  EXPECT_EQ(slot->role, TensorRole::Spill);
  EXPECT_TRUE(verifyKernel(k, diags)) << errors << text(k);

  int saves = 0, reloads = 0;
  walk(k.body, [&](Op &op, llvm::ArrayRef<ForOp *>) {
    for (Access *a : op.reads())
      EXPECT_NE(a->base, old);
    if (Access *w = op.write()) {
      EXPECT_NE(w->base, old);
    }
    if (auto *d = llvm::dyn_cast<DmaOp>(&op)) {
      saves += d->tag == DmaTag::SpillSave;
      reloads += d->tag == DmaTag::SpillReload;
    }
  });
  EXPECT_EQ(saves, 1);
  EXPECT_EQ(reloads, 1);
  std::string t = text(k);
  EXPECT_NE(t.find("dma spill_save %aT_spill[%k0 +: 128, 0 +: 128] <- %aT_save[0 +: 128, 0 +: 128]"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("matmul %acc[0 +: 128, 0 +: 256] <- %aT_reload[0 +: 128, 0 +: 128]"), std::string::npos)
      << t;

  // Staging tiles are never spilled in turn.
  OpPositions pos = numberOps(k);
  AllocOp *reload = allocOf(k, "aT_reload");
  ASSERT_NE(reload, nullptr);
  EXPECT_FALSE(estimateSpill(k, *reload, pos, pos.pos.lookup(reload)).spillable);
}

TEST_F(SpillTest, ReloadsHoistOnlyOutOfLoopsThatRunAndDoNotWrite) {
  Kernel &k = parse(kHoist);
  spillToHbm(k, *allocOf(k, "v"));
  ASSERT_TRUE(verifyKernel(k, diags)) << errors << text(k);
  auto &j = llvm::cast<ForOp>(*k.body.ops[1]);
  std::vector<std::string> body;
  for (auto &op : j.body.ops) {
    std::string s;
    llvm::raw_string_ostream os(s);
    if (auto *d = llvm::dyn_cast<DmaOp>(op.get()))
      os << "dma " << d->dst.base->name << " <- " << d->src.base->name;
    else if (auto *a = llvm::dyn_cast<AllocOp>(op.get()))
      os << "alloc " << a->result->name;
    else if (auto *l = llvm::dyn_cast<ForOp>(op.get()))
      os << "for " << l->iv->name << " (" << l->body.ops.size() << " ops)";
    body.push_back(os.str());
  }
  // %i's reload moved in front of it; %e's stays inside (5 ops: the staging
  // alloc and reload, then its own three).
  EXPECT_EQ(body, (std::vector<std::string>{"alloc v_save", "dma v_save <- A", "dma v_spill <- v_save",
                                            "alloc v_reload", "dma v_reload <- v_spill", "for i (3 ops)",
                                            "for e (5 ops)"}));
}

namespace {

/// A strip %s [K:256, M:1024] zeroed whole, filled per 256-column block %c
/// and read as a matmul's stationary operand one [128, 128] tile per
/// contraction step %k of each 128-row tile %m.
const char *kStrip = R"(kernel @st(%A: hbm<bf16, [K:256, M:1024]>, %B: hbm<bf16, [K:256, N:512]>) -> (%C: hbm<bf16, [M:1024, N:512]>) {
  %s = alloc sbuf<bf16, [K:256, M:1024]>
  for %r = 0 to 256 step 128 {
    memset %s[%r +: 128, 0 +: 1024], 0.0
  }
  for %c = 0 to 1024 step 256 {
    for %r2 = 0 to 256 step 128 {
      dma %s[%r2 +: 128, %c +: 256] <- %A[%r2 +: 128, %c +: 256]
    }
  }
  %b = alloc sbuf<bf16, [K:256, N:512]>
  for %k0 = 0 to 256 step 128 {
    dma %b[%k0 +: 128, 0 +: 512] <- %B[%k0 +: 128, 0 +: 512]
  }
  for %m = 0 to 1024 step 128 {
    %acc = alloc psum<f32, [M:128, N:512]> bufs 2
    for %k = 0 to 256 step 128 {
      matmul %acc[0 +: 128, 0 +: 512] <- %s[%k +: 128, %m +: 128], %b[%k +: 128, 0 +: 512] reset(%k)
    }
    %o = alloc sbuf<bf16, [M:128, N:512]> bufs 2
    copy %o[0 +: 128, 0 +: 512] <- %acc[0 +: 128, 0 +: 512]
    dma %C[%m +: 128, 0 +: 512] <- %o[0 +: 128, 0 +: 512]
  }
}
)";

} // namespace

TEST_F(SpillTest, TailSplitKeepsTheHeadResidentAndSplitsCrossingLoops) {
  Kernel &k = parse(kStrip);
  AllocOp *s = allocOf(k, "s");
  // The loops indexing the columns step by 256 and 128: cuts at multiples of 256.
  EXPECT_EQ(tailGranule(k, *s), 256);
  AllocOp *tail = splitTail(k, *s, 512);
  ASSERT_NE(tail, nullptr);
  ASSERT_TRUE(verifyKernel(k, diags)) << errors << text(k);
  EXPECT_EQ(s->result->type.dims[1].size, 512);
  EXPECT_EQ(tail->result->name, "s_tail");
  EXPECT_EQ(tail->result->type.dims[1].size, 512);
  std::string t = text(k);
  for (const char *want :
       {"memset %s[%r +: 128, 0 +: 512], 0.0", "memset %s_tail[%r +: 128, 0 +: 512], 0.0",
        "for %c = 0 to 512 step 256", "dma %s[%r2 +: 128, %c +: 256]",
        "dma %s_tail[%r21 +: 128, %c1 - 512 +: 256]", "for %m = 0 to 512 step 128",
        "<- %s[%k +: 128, %m +: 128]", "for %m1 = 512 to 1024 step 128",
        "<- %s_tail[%k1 +: 128, %m1 - 512 +: 128]"})
    EXPECT_NE(t.find(want), std::string::npos) << want << "\n" << t;
}

TEST_F(SpillTest, SpilledStationaryRowsAreReloadedFourTilesWide) {
  Kernel &k = parse(kStrip);
  AllocOp *s = allocOf(k, "s");
  widenReductionReloads(k, *s);
  spillToHbm(k, *s);
  ASSERT_TRUE(verifyKernel(k, diags)) << errors << text(k);
  std::string t = text(k);
  // Four row tiles per iteration: one accumulator of four partition groups,
  // one [128, 512] reload per contraction step, each tile a quarter of it.
  for (const char *want :
       {"for %m = 0 to 1024 step 512", "alloc psum<f32, [M:512, N:512]>",
        "dma spill_reload %s_reload[0 +: 128, 0 +: 512] <- %s_spill[%k +: 128, %m +: 512]",
        "matmul %acc1[%mt +: 128, 0 +: 512] <- %s_reload[0 +: 128, %mt +: 128], %b[%k +: 128, 0 +: 512] reset(%k)",
        "copy %o[0 +: 128, 0 +: 512] <- %acc1[%mr +: 128, 0 +: 512]",
        "dma %C[%m + %mr +: 128, 0 +: 512] <- %o[0 +: 128, 0 +: 512]"})
    EXPECT_NE(t.find(want), std::string::npos) << want << "\n" << t;
}

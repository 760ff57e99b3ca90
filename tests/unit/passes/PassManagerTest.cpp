//===- tests/unit/passes/PassManagerTest.cpp - Dumps, verify-each, records -===//
#include "passes/PassManager.h"

#include "ir/Parser.h"
#include "ir/Printer.h"
#include "tests/unit/TestGeometry.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

using namespace tessel;
using namespace tessel::passes;

namespace {

const char *kKernel = R"(kernel @k(%A: hbm<bf16, [M:128, N:128]>) -> (%B: hbm<bf16, [M:128, N:128]>) {
  %t = alloc sbuf<bf16, [M:128, N:128]>
  dma %t[0 +: 128, 0 +: 128] <- %A[0 +: 128, 0 +: 128]
  dma %B[0 +: 128, 0 +: 128] <- %t[0 +: 128, 0 +: 128]
}
)";

/// A test pass whose behaviour is a function.
class FakePass : public Pass {
public:
  FakePass(std::string n, std::function<PassResult(ir::Kernel &, PassContext &)> fn)
      : n(std::move(n)), fn(std::move(fn)) {}
  llvm::StringRef name() const override { return n; }
  llvm::StringRef description() const override { return "test"; }
  PassResult run(ir::Kernel &k, PassContext &ctx) override { return fn(k, ctx); }

private:
  std::string n;
  std::function<PassResult(ir::Kernel &, PassContext &)> fn;
};

std::unique_ptr<Pass> touch(std::string name) {
  return std::make_unique<FakePass>(name, [name](ir::Kernel &k, PassContext &) {
    k.blockParams.set(name.substr(0, 1), 128);
    noteStatistic("touches", 1, "blocks set");
    return PassResult::Changed;
  });
}
std::unique_ptr<Pass> noop(std::string name) {
  return std::make_unique<FakePass>(name, [](ir::Kernel &, PassContext &) { return PassResult::Unchanged; });
}

class PassManagerTest : public ::testing::Test {
protected:
  PassManagerTest() : diags(sm) {
    sm.setDiagHandler(
        [](const llvm::SMDiagnostic &d, void *ctx) {
          static_cast<PassManagerTest *>(ctx)->errors += d.getMessage().str() + "\n";
        },
        this);
    module = ir::parseModuleString(kKernel, "k.tir", diags, test::trn1Geometry());
  }
  bool run(PassManager &pm) {
    PassContext ctx{runtime::trn1Target(), diags};
    return pm.run(*module->kernels[0], ctx);
  }

  llvm::SourceMgr sm;
  DiagnosticEngine diags;
  std::unique_ptr<ir::Module> module;
  std::string errors, dumps;
  llvm::raw_string_ostream os{dumps};
};

} // namespace

TEST_F(PassManagerTest, RecordsResultsAndPipelineString) {
  PassManager pm;
  pm.addPass(touch("a-pass"));
  pm.addPass(noop("b-pass"));
  EXPECT_FALSE(pm.addPass("no-such-pass"));
  EXPECT_TRUE(pm.addPass("allocate"));
  EXPECT_EQ(pm.pipelineString(), "a-pass,b-pass,allocate");
  ASSERT_TRUE(run(pm)) << errors;
  ASSERT_EQ(pm.records().size(), 3u);
  EXPECT_EQ(pm.records()[0].result, PassResult::Changed);
  EXPECT_EQ(pm.records()[1].result, PassResult::Unchanged);
  EXPECT_EQ(pm.records()[2].result, PassResult::Changed);
  EXPECT_EQ(module->kernels[0]->blockParams.lookup("a"), 128);
  bool sawTouches = false;
  for (const Statistic &s : pm.statistics().stats)
    sawTouches |= s.pass == "a-pass" && s.name == "touches" && s.value == 1;
  EXPECT_TRUE(sawTouches);
}

TEST_F(PassManagerTest, PrintChangedShowsStartChangedAndUnchangedBanner) {
  InstrumentationOptions o;
  o.printChanged = true;
  PassManager pm(o, os);
  pm.addPass(touch("a-pass"));
  pm.addPass(noop("b-pass"));
  ASSERT_TRUE(run(pm));
  EXPECT_EQ(dumps.find("// -----// IR Dump At Start on @k //----- //\nkernel @k("), 0u) << dumps;
  EXPECT_NE(dumps.find("// -----// IR Dump After a-pass on @k //----- //\nkernel @k("),
            std::string::npos);
  EXPECT_NE(dumps.find("// -----// IR Dump After b-pass on @k (unchanged) //----- //\n"),
            std::string::npos);
  // The banner is the whole output of the unchanged pass.
  EXPECT_EQ(dumps.find("(unchanged) //----- //\nkernel"), std::string::npos);
}

TEST_F(PassManagerTest, PrintBeforeAndAfterNamedPasses) {
  InstrumentationOptions o;
  o.printIRBefore = {"b-pass"};
  o.printIRAfter = {"a-pass"};
  PassManager pm(o, os);
  pm.addPass(touch("a-pass"));
  pm.addPass(noop("b-pass"));
  ASSERT_TRUE(run(pm));
  size_t after = dumps.find("IR Dump After a-pass on @k");
  size_t before = dumps.find("IR Dump Before b-pass on @k");
  EXPECT_NE(after, std::string::npos);
  EXPECT_NE(before, std::string::npos);
  EXPECT_LT(after, before);
  EXPECT_EQ(dumps.find("After b-pass"), std::string::npos);
  // Each dump parses back.
  auto reparsed = ir::parseModuleString(dumps.substr(dumps.find("kernel @k"), before - dumps.find("kernel @k")), "d.tir", diags, test::trn1Geometry());
  EXPECT_TRUE(reparsed) << errors;
}

TEST_F(PassManagerTest, VerifyEachNamesThePassThatBrokeTheIR) {
  PassManager pm;
  pm.addPass(std::make_unique<FakePass>("breaker", [](ir::Kernel &k, PassContext &) {
    llvm::cast<ir::AllocOp>(k.body.ops[0].get())->bufs = 0;
    return PassResult::Changed;
  }));
  pm.addPass(touch("never"));
  EXPECT_FALSE(run(pm));
  EXPECT_NE(errors.find("pass 'breaker' produced invalid IR for kernel @k"), std::string::npos)
      << errors;
  EXPECT_EQ(pm.records().size(), 1u) << "the pipeline stops at the broken pass";

  InstrumentationOptions off;
  off.verifyEach = false;
  PassManager lax(off);
  lax.addPass(std::make_unique<FakePass>("breaker", [](ir::Kernel &k, PassContext &) {
    return PassResult::Changed;
  }));
  EXPECT_TRUE(run(lax));
}

TEST_F(PassManagerTest, FailedPassStopsThePipeline) {
  PassManager pm;
  pm.addPass(std::make_unique<FakePass>("silent", [](ir::Kernel &, PassContext &) {
    return PassResult::Failed;
  }));
  pm.addPass(touch("never"));
  EXPECT_FALSE(run(pm));
  EXPECT_NE(errors.find("pass 'silent' failed on kernel @k"), std::string::npos) << errors;
  EXPECT_EQ(module->kernels[0]->blockParams.has("n"), false);
}

TEST_F(PassManagerTest, DumpDirWritesNumberedParseableFiles) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("tessel-pm-test", dir));
  InstrumentationOptions o;
  o.dumpDir = std::string(dir) + "/nested";
  PassManager pm(o);
  pm.addPass(touch("a-pass"));
  pm.addPass(noop("b-pass"));
  ASSERT_TRUE(run(pm)) << errors;
  for (const char *name : {"00-input.tir", "01-a-pass.tir", "02-b-pass.tir"}) {
    llvm::SmallString<128> path(o.dumpDir);
    llvm::sys::path::append(path, name);
    auto buf = llvm::MemoryBuffer::getFile(path);
    ASSERT_TRUE(bool(buf)) << path.str().str();
    auto m = ir::parseModuleString((*buf)->getBuffer(), name, diags, test::trn1Geometry());
    ASSERT_TRUE(m) << errors;
    EXPECT_EQ(m->kernels[0]->blockParams.has("a"), std::string(name) != "00-input.tir");
    llvm::sys::fs::remove(path);
  }
  llvm::sys::fs::remove(o.dumpDir);
  llvm::sys::fs::remove(dir);
}

TEST(PassManagerNames, DumpFileNamesAndBanners) {
  EXPECT_EQ(dumpFileName(0, ""), "00-input.tir");
  EXPECT_EQ(dumpFileName(3, "strip-cache"), "03-strip-cache.tir");
  EXPECT_EQ(dumpFileName(12, "x"), "12-x.tir");
  EXPECT_EQ(dumpBanner("After", "fuse", "xuv", true),
            "// -----// IR Dump After fuse on @xuv (unchanged) //----- //");
}

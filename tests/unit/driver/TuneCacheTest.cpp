//===- tests/unit/driver/TuneCacheTest.cpp - the tune cache and its key --===//
#include "driver/TuneCache.h"

#include "passes/Pipelines.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace tessel;
using namespace tessel::driver;

namespace {

const char *kSource = "const M = 256\n"
                      "# a comment with a brace }\n"
                      "kernel xw(X: bf16[M, 128], W: bf16[128, 256]) -> bf16[M, 256] {\n"
                      "  # } inside the body's comment\n"
                      "  return X @ W\n"
                      "}\n"
                      "kernel other(A: bf16[128, 128]) -> bf16[128, 128] {\n"
                      "  return A\n"
                      "}\n";

/// A parsed source with one kernel selected, as the driver's frontend holds it.
struct Parsed {
  Frontend fe;
  Parsed(llvm::StringRef text, std::vector<Define> defines = {}, std::string kernel = "xw") {
    fe.sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, "k.tsl"),
                                    llvm::SMLoc());
    fe.diags = std::make_unique<DiagnosticEngine>(fe.sourceMgr);
    fe.module = parseAndCheck(*fe.diags, defines);
    EXPECT_TRUE(fe.module);
    fe.kernel = fe.module ? fe.module->findKernel(kernel) : nullptr;
    EXPECT_TRUE(fe.kernel);
  }
  TuneKey key(const runtime::Target &target = runtime::trn1Target(),
              llvm::StringRef pipeline = "O2") {
    return makeTuneKey(fe, target, *passes::buildPipeline(pipeline));
  }
};

std::string tempPath(llvm::StringRef name) {
  llvm::SmallString<128> dir;
  EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("tune-cache-test", dir));
  llvm::sys::path::append(dir, name);
  return std::string(dir);
}

TEST(TuneCache, KernelTextRunsFromItsNameToItsClosingBrace) {
  Parsed p(kSource);
  llvm::StringRef buffer = p.fe.sourceMgr.getMemoryBuffer(p.fe.sourceMgr.getMainFileID())->getBuffer();
  llvm::StringRef text = kernelSourceText(*p.fe.kernel, buffer);
  EXPECT_TRUE(text.startswith("xw(X: bf16[M, 128]")) << text.str();
  EXPECT_TRUE(text.endswith("return X @ W\n}")) << text.str();
}

TEST(TuneCache, KeyFollowsWhatDecidesTheAnswer) {
  TuneKey base = Parsed(kSource).key();
  EXPECT_EQ(base.kernel, "xw");
  EXPECT_EQ(base.shapes, "X: bf16[256 x 128], W: bf16[128 x 256] -> bf16[256 x 256]");
  EXPECT_EQ(base.target, "trn1");
  EXPECT_EQ(base.hash.size(), 40u);
  // Text outside the kernel (comments, other kernels) does not matter.
  std::string edited = std::string("# tuned on Monday\n") + kSource + "# the end\n";
  EXPECT_EQ(Parsed(edited).key().hash, base.hash);
  // The kernel's body, its shapes (-D), the target and the pipeline do.
  std::string body = kSource;
  body.replace(body.find("return X @ W"), 12, "return (X @ W)");
  EXPECT_NE(Parsed(body).key().hash, base.hash);
  EXPECT_NE(Parsed(kSource, {{"M", "512"}}).key().hash, base.hash);
  auto trn2 = runtime::loadTarget("trn2");
  ASSERT_TRUE(bool(trn2));
  EXPECT_NE(Parsed(kSource).key(*trn2).hash, base.hash);
  EXPECT_NE(Parsed(kSource).key(runtime::trn1Target(), "O0").hash, base.hash);
}

TEST(TuneCache, SaveAndLoadKeepEveryEntry) {
  std::string path = tempPath("sub/tune.json");
  TuneKey key = Parsed(kSource).key();
  TuneKey other = Parsed(kSource, {{"M", "384"}}).key();
  {
    TuneCache cache(path);
    cache.load();
    CacheEntry &e = cache.update(key);
    ConfigResult r;
    r.block = {{"m", 256}, {"n", 256}};
    r.status = ConfigStatus::Simulated;
    r.model = ModelEstimate{1, 2, 3, 0};
    r.sim = SimMeasure{4, 0.5, 2, 3, 0};
    e.configs[formatBlock(r.block)] = r;
    e.best = r.block;
    ASSERT_FALSE(bool(cache.save()));
  }
  {
    // Another process adds its entry; the first one stays.
    TuneCache cache(path);
    cache.update(other);
    ASSERT_FALSE(bool(cache.save()));
  }
  TuneCache cache(path);
  cache.load();
  const CacheEntry *e = cache.find(key.hash);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->key.shapes, key.shapes);
  ASSERT_EQ(e->configs.size(), 1u);
  EXPECT_DOUBLE_EQ(e->configs.begin()->second.sim->latencyUs, 4);
  ASSERT_TRUE(e->best);
  EXPECT_EQ(formatBlock(*e->best), "m=256,n=256");
  EXPECT_TRUE(cache.find(other.hash));
}

TEST(TuneCache, UntrustedFilesAreIgnored) {
  for (llvm::StringRef text : {"{", R"({"format": "x"})",
                               R"({"format": "tessel-tune-cache", "tessel_version": "0.0.0", "entries": {}})",
                               R"({"format": "tessel-tune-cache", "tessel_version": ")" TESSEL_VERSION_STRING
                               R"(", "entries": {"abc": {"kernel": "k"}}})"}) {
    std::string path = tempPath("tune.json");
    {
      std::error_code ec;
      llvm::raw_fd_ostream os(path, ec);
      os << text;
    }
    TuneCache cache(path);
    cache.load();
    EXPECT_TRUE(cache.allEntries().empty()) << text.str();
  }
}

} // namespace

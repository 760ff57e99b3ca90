//===- tests/unit/tune/TuneCacheTest.cpp - the tune cache and its key --===//
#include "tune/TuneCache.h"

#include "passes/Pipelines.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

using namespace tessel;
using namespace tessel::compiler;
using namespace tessel::tune;

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

ConfigResult simulated(int64_t m, int64_t n, double latencyUs) {
  ConfigResult r;
  r.block = {{"m", m}, {"n", n}};
  r.status = ConfigStatus::Simulated;
  r.model = ModelEstimate{1, 2, 3, 0};
  r.sim = SimMeasure{latencyUs, 0.5, 2, 3, 0};
  return r;
}

/// A cache of `count` entries (kSource at M = 128, 256, ...) at `path`.
std::vector<TuneKey> writeEntries(const std::string &path, int count) {
  std::vector<TuneKey> keys;
  TuneCache cache(path);
  for (int i = 1; i <= count; ++i) {
    keys.push_back(Parsed(kSource, {{"M", std::to_string(128 * i)}}).key());
    CacheEntry &e = cache.update(keys.back());
    ConfigResult r = simulated(128, 256, i);
    e.configs[formatBlock(r.block)] = r;
    e.best = r.block;
  }
  EXPECT_FALSE(bool(cache.save()));
  return keys;
}

std::string readText(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  return buffer ? (*buffer)->getBuffer().str() : std::string();
}

void writeText(const std::string &path, llvm::StringRef text) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  os << text;
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

TEST(TuneCache, OneMalformedEntryDropsOnlyThatEntry) {
  std::string path = tempPath("tune.json");
  std::vector<TuneKey> keys = writeEntries(path, 5);
  std::string text = readText(path);
  // Tamper with the first entry's only result.
  size_t at = text.find("\"status\": \"simulated\"");
  ASSERT_NE(at, std::string::npos);
  std::string original = text;
  text.replace(at, 21, "\"status\": \"fast\"");
  writeText(path, text);
  TuneCache cache(path);
  cache.load();
  EXPECT_EQ(cache.allEntries().size(), 4u);
  // Saving backs the file up as it was first, then drops the bad entry.
  ASSERT_FALSE(bool(cache.save()));
  EXPECT_EQ(readText(path + ".bak"), text);
  TuneCache again(path);
  again.load();
  EXPECT_EQ(again.allEntries().size(), 4u);
  // A second unreadable file goes to FILE.bak.1: the first backup stays.
  writeText(path, text + "garbage");
  ASSERT_FALSE(bool(again.save()));
  EXPECT_EQ(readText(path + ".bak"), text);
  EXPECT_EQ(readText(path + ".bak.1"), text + "garbage");
}

TEST(TuneCache, FileCutOffAnywhereKeepsItsCompleteEntries) {
  std::string path = tempPath("tune.json");
  std::vector<TuneKey> keys = writeEntries(path, 4);
  std::string text = readText(path);
  size_t previous = 0;
  for (size_t length = 0; length <= text.size(); ++length) {
    std::string cut = tempPath("cut.json");
    writeText(cut, llvm::StringRef(text).take_front(length));
    TuneCache cache(cut);
    cache.load();
    size_t kept = cache.allEntries().size();
    // More text never keeps fewer entries; each kept entry is whole.
    EXPECT_GE(kept, previous) << "at " << length;
    previous = kept;
    for (const auto &kv : cache.allEntries())
      EXPECT_EQ(kv.second.configs.size(), 1u) << "at " << length;
  }
  EXPECT_EQ(previous, keys.size());
  // Cut just before the closing of the "entries" object: all four are kept.
  std::string cut = tempPath("cut.json");
  writeText(cut, llvm::StringRef(text).take_front(text.find("\"format\"")));
  TuneCache cache(cut);
  cache.load();
  EXPECT_EQ(cache.allEntries().size(), 4u);
}

TEST(TuneCache, TwoWritersOfOneKeyKeepEveryConfiguration) {
  std::string path = tempPath("tune.json");
  TuneKey key = Parsed(kSource).key();
  TuneCache a(path), b(path);
  a.load();
  b.load();
  a.update(key).configs["m=128,n=256"] = simulated(128, 256, 5);
  b.update(key).configs["m=256,n=256"] = simulated(256, 256, 4);
  b.update(key).best = BlockConfig{{"m", 256}, {"n", 256}};
  ASSERT_FALSE(bool(b.save()));
  ASSERT_FALSE(bool(a.save()));
  TuneCache cache(path);
  cache.load();
  const CacheEntry *e = cache.find(key.hash);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->configs.size(), 2u);
  ASSERT_TRUE(e->best); // a did not finish: b's best stays
  EXPECT_EQ(formatBlock(*e->best), "m=256,n=256");
  EXPECT_TRUE(llvm::sys::fs::exists(path + ".lock"));
}

TEST(TuneCache, SaveWritesThroughASymlink) {
  std::string target = tempPath("shared.json");
  std::vector<TuneKey> keys = writeEntries(target, 1);
  std::string link = tempPath("link.json");
  ASSERT_FALSE(llvm::sys::fs::create_link(target, link));
  TuneCache cache(link);
  cache.load();
  EXPECT_EQ(cache.allEntries().size(), 1u);
  cache.update(Parsed(kSource, {{"M", "512"}}).key());
  ASSERT_FALSE(bool(cache.save()));
  llvm::sys::fs::file_status st;
  ASSERT_FALSE(llvm::sys::fs::status(link, st, /*follow=*/false));
  EXPECT_EQ(st.type(), llvm::sys::fs::file_type::symlink_file);
  TuneCache shared(target);
  shared.load();
  EXPECT_EQ(shared.allEntries().size(), 2u);
}

TEST(TuneCache, PathsThatAreNotRegularFilesAreRefused) {
  std::string dir = tempPath("dir");
  ASSERT_FALSE(llvm::sys::fs::create_directory(dir));
  std::string fifo = tempPath("pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string dangling = tempPath("dangling.json");
  ASSERT_FALSE(llvm::sys::fs::create_link(tempPath("nowhere.json"), dangling));
  for (const std::string &path : {dir, fifo, dangling}) {
    TuneCache cache(path);
    llvm::Error refused = cache.check();
    EXPECT_TRUE(bool(refused)) << path;
    llvm::consumeError(std::move(refused));
    cache.load(); // a warning; must not block on the pipe
    EXPECT_TRUE(cache.allEntries().empty());
    cache.update(Parsed(kSource).key());
    llvm::Error err = cache.save();
    EXPECT_TRUE(bool(err)) << path;
    llvm::consumeError(std::move(err));
  }
  llvm::sys::fs::file_status st;
  ASSERT_FALSE(llvm::sys::fs::status(fifo, st));
  EXPECT_EQ(st.type(), llvm::sys::fs::file_type::fifo_file);
  EXPECT_TRUE(llvm::sys::fs::is_directory(dir));
  // A device is refused by check() (read-only here: save() is never tried on it).
  llvm::Error err = TuneCache("/dev/null").check();
  ASSERT_TRUE(bool(err));
  EXPECT_NE(llvm::toString(std::move(err)).find("a character device, not a regular file"),
            std::string::npos);
}

} // namespace

TEST(TuneCache, ACutOffFileWithAnEntryNameThatIsNotTextIsSalvagedNotACrash) {
  // Found by fuzz-tune-cache: the salvage of a cut-off file used the raw
  // name as a JSON key (an assertion in LLVM's JSON for invalid UTF-8).
  std::string text = std::string("{\"format\": \"tessel-tune-cache\", \"entries\": {\n  \"ab\xff\xfe\": {\"key\": ");
  ParsedCache parsed = parseCacheText(text);
  EXPECT_TRUE(parsed.entries.empty());
  ASSERT_EQ(parsed.badEntries.size(), 1u);
  EXPECT_EQ(parsed.badEntries[0], "an entry whose name is not UTF-8 text (and the rest of the file)");
}

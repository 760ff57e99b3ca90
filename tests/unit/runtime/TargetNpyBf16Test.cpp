//===- tests/unit/runtime/TargetNpyBf16Test.cpp - targets, .npy, bf16 ------===//
#include "TestUtil.h"

#include "runtime/Npy.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <limits>

using namespace tessel::runtime;
using namespace tessel::runtime::test;

namespace {

// ---- bf16 ----

TEST(BF16, RoundsToNearestEven) {
  EXPECT_EQ(roundToBF16(1.0f), 1.0f);
  EXPECT_EQ(roundToBF16(1.0f + 1.0f / 256), 1.0f);                       // tie -> even (down)
  EXPECT_EQ(roundToBF16(1.0f + 3.0f / 256), 1.0f + 1.0f / 64);           // tie -> even (up)
  EXPECT_EQ(roundToBF16(1.0f + 1.0f / 256 + 1.0f / 65536), 1.0f + 1.0f / 128); // above tie -> up
  EXPECT_EQ(roundToBF16(-(1.0f + 3.0f / 256)), -(1.0f + 1.0f / 64));
  EXPECT_EQ(floatToBF16Bits(3.14159274f), 0x4049);
  EXPECT_EQ(roundToBF16(0.0f), 0.0f);
  EXPECT_TRUE(std::signbit(roundToBF16(-0.0f)));
}

TEST(BF16, SpecialValues) {
  float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(roundToBF16(inf), inf);
  EXPECT_EQ(roundToBF16(-inf), -inf);
  EXPECT_TRUE(std::isnan(roundToBF16(std::numeric_limits<float>::quiet_NaN())));
  // A NaN whose payload lives only in the low bits must stay NaN (not become Inf).
  EXPECT_TRUE(std::isnan(roundToBF16(bitsFloat(0x7f800001u))));
  EXPECT_TRUE(std::isnan(roundToBF16(bitsFloat(0xff800001u))));
  // The largest finite float rounds up to Inf; the largest bf16 stays.
  EXPECT_EQ(roundToBF16(std::numeric_limits<float>::max()), inf);
  EXPECT_EQ(roundToBF16(bitsFloat(0x7f7f0000u)), bitsFloat(0x7f7f0000u));
  // Subnormals round like everything else.
  EXPECT_EQ(floatToBF16Bits(bitsFloat(0x00008000u)), 0x0000); // tie -> even (0)
  EXPECT_EQ(floatToBF16Bits(bitsFloat(0x00018000u)), 0x0002); // tie -> even (2)
}

TEST(BF16, HalfToFloat) {
  EXPECT_EQ(halfBitsToFloat(0x3c00), 1.0f);
  EXPECT_EQ(halfBitsToFloat(0xc000), -2.0f);
  EXPECT_EQ(halfBitsToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(halfBitsToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(halfBitsToFloat(0x7c00), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(halfBitsToFloat(0x7e00)));
}

// ---- .npy ----

std::string npyBytes(const std::string &dict, const std::string &data, char major = 1) {
  std::string h = dict;
  size_t total = 10 + h.size() + 1;
  h.append((total + 63) / 64 * 64 - total, ' ');
  h += '\n';
  std::string out("\x93NUMPY", 6);
  out.push_back(major);
  out.push_back(0);
  out.push_back(char(h.size() & 0xff));
  out.push_back(char(h.size() >> 8));
  return out + h + data;
}

TEST(Npy, RoundTrip) {
  std::vector<float> v = {1.5f, -2, 0, 3.25f, 1e-20f, 7};
  std::string bytes = serializeNpy({2, 3}, v);
  EXPECT_EQ(bytes.size() % 64, (6 * 4) % 64); // header padded to 64
  auto a = parseNpy(bytes, "x.npy");
  ASSERT_TRUE(bool(a)) << llvm::toString(a.takeError());
  EXPECT_EQ(a->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(a->data, v);
  EXPECT_EQ(a->descr, "<f4");
  auto one = parseNpy(serializeNpy({5}, {1, 2, 3, 4, 5}), "y.npy");
  ASSERT_TRUE(bool(one));
  EXPECT_EQ(one->shape, (std::vector<int64_t>{5}));
  EXPECT_NE(serializeNpy({5}, {1, 2, 3, 4, 5}).find("'shape': (5,)"), std::string::npos);
}

TEST(Npy, EmptyArray) {
  // Found by fuzz-npy: no data to copy (UBSan: memcpy to a null pointer).
  auto a = parseNpy(npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 4), }", ""), "e.npy");
  ASSERT_TRUE(bool(a)) << llvm::toString(a.takeError());
  EXPECT_EQ(a->shape, (std::vector<int64_t>{0, 4}));
  EXPECT_TRUE(a->data.empty());
}

TEST(Npy, Float16AndVersion2) {
  std::string data;
  for (uint16_t h : {uint16_t(0x3c00), uint16_t(0xc000), uint16_t(0x3800)}) {
    data.push_back(char(h & 0xff));
    data.push_back(char(h >> 8));
  }
  auto a = parseNpy(npyBytes("{'descr': '<f2', 'fortran_order': False, 'shape': (3,), }", data), "h.npy");
  ASSERT_TRUE(bool(a)) << llvm::toString(a.takeError());
  EXPECT_EQ(a->data, (std::vector<float>{1, -2, 0.5f}));
  // version 2.0 has a 4-byte header length
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1), }";
  std::string h = dict + std::string(64 - (12 + dict.size() + 1) % 64, ' ') + "\n";
  std::string v2("\x93NUMPY\x02\x00", 8);
  for (int i = 0; i < 4; ++i)
    v2.push_back(char((h.size() >> (8 * i)) & 0xff));
  float one = 1.0f;
  v2 += h + std::string(reinterpret_cast<char *>(&one), 4);
  auto b = parseNpy(v2, "v2.npy");
  ASSERT_TRUE(bool(b)) << llvm::toString(b.takeError());
  EXPECT_EQ(b->data, std::vector<float>{1.0f});
}

TEST(Npy, ErrorsNameTheProblem) {
  std::string four(16, '\0');
  struct Case {
    std::string bytes;
    const char *expect;
  } cases[] = {
      {"hello world, not numpy", "x.npy: not a .npy file"},
      {npyBytes("{'descr': '>f4', 'fortran_order': False, 'shape': (4,), }", four), "big-endian dtype '>f4'"},
      {npyBytes("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", four), "Fortran-order"},
      {npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", four), "dtype '<f8' is not supported"},
      {npyBytes("{'descr': '<i4', 'fortran_order': False, 'shape': (4,), }", four), "dtype '<i4' is not supported"},
      {npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (8,), }", four),
       "truncated data: shape [8] needs 32 bytes, file has 16"},
      {npyBytes("{'descr': '<f4', 'shape': (4,), }", four), "malformed .npy header"},
      {npyBytes("{'descr': '<f8', 'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", four),
       "malformed .npy header"},
      {npyBytes("{'descr': '<f4', 'fortran_order': 'yes', 'shape': (4,), }", four),
       "malformed fortran_order 'yes'"},
      {npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': 4, }", four),
       "malformed shape '4' in .npy header (expected a tuple)"},
      {npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", four, 9), "unsupported .npy format version 9"},
      {std::string("\x93NUMPY\x01\x00\xff\x00{", 11), "truncated .npy header"},
  };
  for (const Case &c : cases) {
    auto a = parseNpy(c.bytes, "x.npy");
    ASSERT_FALSE(bool(a)) << c.expect;
    std::string e = llvm::toString(a.takeError());
    EXPECT_NE(e.find(c.expect), std::string::npos) << e;
    EXPECT_NE(e.find("x.npy"), std::string::npos) << e;
  }
  auto missing = readNpy("/nonexistent/dir/q.npy");
  ASSERT_FALSE(bool(missing));
  std::string e = llvm::toString(missing.takeError());
  EXPECT_NE(e.find("/nonexistent/dir/q.npy: cannot open"), std::string::npos) << e;
}

// ---- targets ----

TEST(Target, Trn1Numbers) {
  const Target &t = trn1Target();
  EXPECT_EQ(t.name, "trn1");
  EXPECT_NEAR(t.peakBf16Flops(), 91.75e12, 0.01e12);
  EXPECT_EQ(t.sbufCapacityBytes(), 24 * 1024 * 1024);
  EXPECT_EQ(t.psumCapacityBytes(), 2 * 1024 * 1024);
  EXPECT_EQ(t.psum_banks * t.psum_bank_bytes, t.psum_bytes_per_partition);
  EXPECT_NEAR(t.ridgeFlopsPerByte(), 223.8, 0.1);
  EXPECT_EQ(t.dma_engines, 16);
  EXPECT_DOUBLE_EQ(t.dma_fixed_latency_ns, 1300);
  EXPECT_FALSE(bool(validateTarget(t, "trn1")));
}

TEST(Target, BuiltinsAndDumpRoundTrip) {
  auto names = builtinTargetNames();
  EXPECT_NE(std::find(names.begin(), names.end(), "trn2"), names.end());
  auto t2 = loadTarget("trn2");
  ASSERT_TRUE(bool(t2)) << llvm::toString(t2.takeError());
  EXPECT_EQ(t2->name, "trn2");
  EXPECT_NEAR(t2->peakBf16Flops(), 78.64e12, 0.01e12);
  EXPECT_EQ(t2->sbuf_bytes_per_partition, 224 * 1024);
  for (const Target *t : std::vector<const Target *>{&trn1Target(), &*t2}) {
    std::string text = targetToJSONText(*t);
    auto back = parseTargetJSON(text, "dump.json");
    ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
    EXPECT_EQ(llvm::formatv("{0}", targetToJSON(*back)).str(), llvm::formatv("{0}", targetToJSON(*t)).str());
  }
}

TEST(Target, JsonErrorsNameTheField) {
  std::string base = targetToJSONText(trn1Target());
  auto edit = [&](const std::string &from, const std::string &to) {
    std::string s = base;
    size_t p = s.find(from);
    EXPECT_NE(p, std::string::npos) << from;
    if (p != std::string::npos)
      s.replace(p, from.size(), to);
    return s;
  };
  struct Case {
    std::string text;
    const char *expect;
  } cases[] = {
      {edit("\"tensor_clock_ghz\": 2.8", "\"tensor_clock_ghz\": 0"), "field 'tensor_clock_ghz' must be > 0, got 0"},
      {edit("\"hbm_bandwidth_gbs\": 410", "\"hbm_bandwidth_gbs\": -1"), "field 'hbm_bandwidth_gbs' must be > 0"},
      {edit("\"pe_rows\": 128", "\"pe_rows\": \"128\""), "field 'pe_rows' must be an integer (PEs), got a string"},
      {edit("\"pe_rows\": 128", "\"pe_rows\": 127.5"), "field 'pe_rows' must be an integer (PEs), got a fractional"},
      {edit("\"vector_clock_ghz\": 1.12", "\"vector_clock_ghz\": true"), "field 'vector_clock_ghz' must be a number"},
      {edit("\"dma_queues\": 16,\n", ""), "missing field 'dma_queues'"},
      {edit("\"dma_transpose_efficiency\": 0.25", "\"dma_transpose_efficiency\": 1.5"),
       "field 'dma_transpose_efficiency' must be in (0, 1]"},
      {edit("\"pe_rows\": 128", "\"pe_rowz\": 128"), "unknown field 'pe_rowz'"},
      {edit("\"psum_banks\": 8", "\"psum_banks\": 9"), "psum_banks * psum_bank_bytes (18432) exceeds"},
      {"[1, 2]", "must be a JSON object"},
      {"{\"name\": ", "invalid JSON"},
  };
  for (const Case &c : cases) {
    auto t = parseTargetJSON(c.text, "my.json");
    ASSERT_FALSE(bool(t)) << c.expect;
    std::string e = llvm::toString(t.takeError());
    EXPECT_NE(e.find(c.expect), std::string::npos) << e;
    EXPECT_EQ(e.rfind("my.json: ", 0), 0u) << e;
  }
  // A target given as a file works; missing files and unknown names are explained.
  llvm::SmallString<128> path;
  int fd;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("target", "json", fd, path));
  {
    llvm::raw_fd_ostream os(fd, true);
    os << edit("\"name\": \"trn1\"", "\"name\": \"slow\"");
  }
  auto t = loadTarget(path);
  ASSERT_TRUE(bool(t)) << llvm::toString(t.takeError());
  EXPECT_EQ(t->name, "slow");
  llvm::sys::fs::remove(path);
  auto missing = loadTarget("/no/such/target.json");
  ASSERT_FALSE(bool(missing));
  EXPECT_NE(llvm::toString(missing.takeError()).find("cannot open target file '/no/such/target.json'"),
            std::string::npos);
  auto unknown = loadTarget("trn9");
  ASSERT_FALSE(bool(unknown));
  EXPECT_NE(llvm::toString(unknown.takeError()).find("unknown target 'trn9' (expected one of trn1, trn2"),
            std::string::npos);
}

} // namespace

//===- tests/unit/runtime/TargetBaseTest.cpp - "base" in target files ------===//
#include "TestUtil.h"

#include "llvm/Support/FormatVariadic.h"

using namespace tessel::runtime;

namespace {

std::string jsonOf(const Target &t) { return llvm::formatv("{0}", targetToJSON(t)).str(); }

std::string errorOf(llvm::Expected<Target> t) {
  if (t)
    return "(accepted)";
  return llvm::toString(t.takeError());
}

TEST(TargetBase, FieldsNotGivenComeFromTheBase) {
  auto t = parseTargetJSON(R"({"base": "trn1", "name": "small-sbuf", "sbuf_bytes_per_partition": 65536})",
                           "small.json");
  ASSERT_TRUE(bool(t)) << llvm::toString(t.takeError());
  Target expected = trn1Target();
  expected.name = "small-sbuf";
  expected.description = "";
  expected.sbuf_bytes_per_partition = 65536;
  EXPECT_EQ(jsonOf(*t), jsonOf(expected));
}

TEST(TargetBase, AnEmbeddedTargetIsABase) {
  auto t = parseTargetJSON(R"({"base": "trn2", "name": "fast-dma", "description": "trn2, faster DMA",
                               "dma_engine_bandwidth_gbs": 30})",
                           "fast.json");
  ASSERT_TRUE(bool(t)) << llvm::toString(t.takeError());
  auto trn2 = loadTarget("trn2");
  ASSERT_TRUE(bool(trn2)) << llvm::toString(trn2.takeError());
  Target expected = *trn2;
  expected.name = "fast-dma";
  expected.description = "trn2, faster DMA";
  expected.dma_engine_bandwidth_gbs = 30;
  EXPECT_EQ(jsonOf(*t), jsonOf(expected));
}

TEST(TargetBase, ABasedTargetDumpsToACompleteFile) {
  auto t = parseTargetJSON(R"({"base": "trn1", "name": "slow", "tensor_clock_ghz": 1.4})", "slow.json");
  ASSERT_TRUE(bool(t)) << llvm::toString(t.takeError());
  auto back = parseTargetJSON(targetToJSONText(*t), "dump.json");
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(jsonOf(*back), jsonOf(*t));
}

TEST(TargetBase, TheFileStillNeedsAName) {
  EXPECT_EQ(errorOf(parseTargetJSON(R"({"base": "trn1"})", "x.json")), "x.json: missing field 'name' (string)");
}

TEST(TargetBase, GivenFieldsAreCheckedAsWithoutABase) {
  EXPECT_EQ(errorOf(parseTargetJSON(R"({"base": "trn1", "name": "x", "psum_banks": 9})", "x.json")),
            "x.json: psum_banks * psum_bank_bytes (18432) exceeds psum_bytes_per_partition (16384)");
  EXPECT_EQ(errorOf(parseTargetJSON(R"({"base": "trn1", "name": "x", "pe_rowz": 9})", "x.json")).rfind(
                "x.json: unknown field 'pe_rowz'", 0),
            0u);
}

TEST(TargetBase, AnUnknownBaseListsTheBuiltins) {
  EXPECT_EQ(errorOf(parseTargetJSON(R"({"base": "trn9", "name": "x"})", "x.json")),
            "x.json: field 'base' names no built-in target: \"trn9\" (built-in: trn1, trn2)");
  EXPECT_EQ(errorOf(parseTargetJSON(R"({"base": "my.json", "name": "x"})", "x.json")),
            "x.json: field 'base' names no built-in target: \"my.json\" (built-in: trn1, trn2)");
  EXPECT_EQ(errorOf(parseTargetJSON(R"({"base": 1, "name": "x"})", "x.json")),
            "x.json: field 'base' must be a string naming a built-in target (trn1, trn2), got a number");
}

TEST(TargetBase, WithoutABaseAMissingFieldSuggestsOne) {
  std::string e = errorOf(parseTargetJSON(R"({"name": "x", "pe_rows": 64, "pe_cols": 64})", "x.json"));
  EXPECT_EQ(e.rfind("x.json: missing field 'matmul_max_moving' (integer, elements: max moving free size N "
                    "per matmul (one PSUM bank of fp32)) and 42 more (tensor_clock_ghz, ",
                    0),
            0u)
      << e;
  EXPECT_NE(e.find(", base_clock_ghz); a file that gives only some fields names a built-in target for the "
                   "others, e.g. \"base\": \"trn1\" (built-in: trn1, trn2)"),
            std::string::npos)
      << e;
}

} // namespace

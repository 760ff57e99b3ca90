//===- tests/unit/support/JsonLimitsTest.cpp - JSON nesting limit ---------===//
#include "support/JsonLimits.h"

#include <gtest/gtest.h>

#include <string>

using namespace tessel;

namespace {

std::string depthError(llvm::StringRef text, unsigned maxDepth, llvm::StringRef what = "f.json") {
  llvm::Error e = checkJsonDepth(text, what, maxDepth);
  return e ? llvm::toString(std::move(e)) : "";
}

std::string nested(unsigned depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(JsonLimits, AllowsUpToTheLimit) {
  EXPECT_EQ(depthError(nested(3), 3), "");
  EXPECT_EQ(depthError("{\"a\": [{\"b\": [1]}]}", 4), "");
  EXPECT_EQ(depthError("", 1), "");
  EXPECT_EQ(depthError("17", 0), "");
  EXPECT_EQ(depthError(nested(kMaxJsonDepth), kMaxJsonDepth), "");
}

TEST(JsonLimits, RejectsOneLevelMoreWithItsPlace) {
  EXPECT_EQ(depthError(nested(4), 3), "f.json: JSON nested deeper than 3 levels (line 1, column 4)");
  EXPECT_EQ(depthError("{\n  \"a\": {\n    \"b\": [1]}}", 2),
            "f.json: JSON nested deeper than 2 levels (line 3, column 10)");
  EXPECT_EQ(depthError("[[[", 2, ""), "JSON nested deeper than 2 levels (line 1, column 3)");
}

TEST(JsonLimits, SiblingsDoNotAddUp) {
  std::string flat;
  for (int i = 0; i < 1000; ++i)
    flat += i ? ",[{}]" : "[[{}]";
  flat += "]";
  EXPECT_EQ(depthError(flat, 3), "");
  EXPECT_NE(depthError(flat, 2), "");
}

TEST(JsonLimits, BracketsInStringsDoNotCount) {
  EXPECT_EQ(depthError("[\"[[[[{{{{\"]", 1), "");
  // An escaped quote does not end the string...
  EXPECT_EQ(depthError(R"(["a\"[[[[", 1])", 1), "");
  // ...an escaped backslash does not escape the quote after it.
  EXPECT_NE(depthError(R"(["a\\", [[1]]])", 2), "");
  EXPECT_EQ(depthError(R"(["a\\", [[1]]])", 3), "");
  // Unbalanced closers are left to the parser.
  EXPECT_EQ(depthError("]]]][[", 2), "");
}

TEST(JsonLimits, HundredThousandLevelsFailWithoutParsing) {
  std::string deep(100000, '[');
  llvm::Expected<llvm::json::Value> v = parseJsonBounded(deep, "deep.json");
  ASSERT_FALSE(bool(v));
  EXPECT_EQ(llvm::toString(v.takeError()),
            "deep.json: JSON nested deeper than 64 levels (line 1, column 65)");
}

TEST(JsonLimits, ParsesWhatIsWithinTheLimit) {
  llvm::Expected<llvm::json::Value> v = parseJsonBounded(R"({"a": [1, {"b": "]]"}]})", "x");
  ASSERT_TRUE(bool(v)) << llvm::toString(v.takeError());
  ASSERT_NE(v->getAsObject(), nullptr);
  EXPECT_EQ(v->getAsObject()->getArray("a")->size(), 2u);
}

TEST(JsonLimits, SyntaxErrorsNameTheSource) {
  llvm::Expected<llvm::json::Value> v = parseJsonBounded("[1, 2", "broken.json");
  ASSERT_FALSE(bool(v));
  EXPECT_EQ(llvm::StringRef(llvm::toString(v.takeError())).startswith("broken.json: invalid JSON: "),
            true);
}

} // namespace

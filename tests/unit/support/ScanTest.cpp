//===- tests/unit/support/ScanTest.cpp - The lexers' shared scanners -----===//
#include "support/Scan.h"

#include <gtest/gtest.h>

using namespace tessel;

namespace {

/// The prefix of `text` that scanNumber takes, and whether it is a float.
std::pair<std::string, bool> number(llvm::StringRef text) {
  bool isFloat = true;
  const char *end = scan::scanNumber(text.begin(), text.end(), isFloat);
  return {std::string(text.begin(), end), isFloat};
}

TEST(Scan, Numbers) {
  EXPECT_EQ(number("128]"), std::make_pair(std::string("128"), false));
  EXPECT_EQ(number("1.5,"), std::make_pair(std::string("1.5"), true));
  EXPECT_EQ(number("2."), std::make_pair(std::string("2."), true));
  EXPECT_EQ(number("1e-05 "), std::make_pair(std::string("1e-05"), true));
  EXPECT_EQ(number("3E+2"), std::make_pair(std::string("3E+2"), true));
  // An exponent needs digits: `2e` is the integer 2 followed by `e`.
  EXPECT_EQ(number("2e"), std::make_pair(std::string("2"), false));
  EXPECT_EQ(number("2e+x"), std::make_pair(std::string("2"), false));
}

TEST(Scan, DecimalWithOverflowCheck) {
  EXPECT_EQ(scan::parseDecimal("0"), 0u);
  EXPECT_EQ(scan::parseDecimal("9223372036854775807"), uint64_t(INT64_MAX));
  EXPECT_EQ(scan::parseDecimal("9223372036854775808"), std::nullopt);
  EXPECT_EQ(scan::parseDecimal("99999999999999999999999"), std::nullopt);
  EXPECT_EQ(scan::parseDecimal("1099511627776", uint64_t(1) << 40), uint64_t(1) << 40);
  EXPECT_EQ(scan::parseDecimal("1099511627777", uint64_t(1) << 40), std::nullopt);
  EXPECT_EQ(scan::parseDecimal(""), std::nullopt);
  EXPECT_EQ(scan::parseDecimal("12a"), std::nullopt);
}

TEST(Scan, CharacterClassesAndSkipping) {
  EXPECT_TRUE(scan::isIdentStart('_'));
  EXPECT_FALSE(scan::isIdentStart('1'));
  EXPECT_TRUE(scan::isIdentChar('1'));
  EXPECT_FALSE(scan::isIdentChar('.'));
  EXPECT_TRUE(scan::isNameChar('.'));
  EXPECT_TRUE(scan::isBlank('\t'));
  EXPECT_FALSE(scan::isBlank('\n'));
  llvm::StringRef line = "# comment\nnext";
  EXPECT_EQ(llvm::StringRef(scan::skipToEndOfLine(line.begin(), line.end())), "\nnext");
  llvm::StringRef last = "// no newline";
  EXPECT_EQ(scan::skipToEndOfLine(last.begin(), last.end()), last.end());
  llvm::StringRef name = "x.T_1 rest";
  EXPECT_EQ(llvm::StringRef(scan::skipWhile(name.begin(), name.end(), scan::isNameChar)), " rest");
}

} // namespace

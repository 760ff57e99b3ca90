//===- tests/unit/frontend/RobustnessTest.cpp - never crash, bounded errors -===//
//
// Any input must end in a module or in errors: no crash, no assertion, no
// unbounded recursion, at most kMaxErrors errors. Run under the sanitizer
// build (TESSEL_SANITIZE=ON) for the full guarantee.
//
//===----------------------------------------------------------------------===//
#include "FrontendTestUtil.h"

#include "frontend/Lexer.h"
#include "frontend/Parser.h"

#include <random>

using namespace tessel;
using namespace tessel::testutil;

namespace {
/// At most the error limit plus nothing else counted as an error.
void expectBounded(const Compiled &c) {
  EXPECT_LE(c.errors, frontend::kMaxErrors + 0u);
  EXPECT_EQ(c.module == nullptr, c.errors != 0);
}
} // namespace

TEST(Robustness, EveryPrefixOfTheDesignKernels) {
  std::string src = kDesignKernels;
  for (size_t n = 0; n <= src.size(); ++n)
    expectBounded(compile(src.substr(0, n)));
}

TEST(Robustness, EveryPrefixIsOneErrorOrCompiles) {
  // A truncated file should produce one clear error, not a cascade.
  std::string src = kDesignKernels;
  for (size_t n = 0; n <= src.size(); ++n) {
    Compiled c = compile(src.substr(0, n));
    EXPECT_LE(c.errors, 2u) << "prefix " << n << ":\n" << c.diags;
  }
}

TEST(Robustness, RandomTokenSoup) {
  const char *pieces[] = {"kernel", "const", "return", "X", "M", "=", "@", "*", "+", ".T", "(", ")", "[",
                          "]", "{", "}", ",", ":", "->", "bf16", "f32", "8", "\n", ";", "silu", "$", "#c\n"};
  std::mt19937 rng(42);
  for (int iter = 0; iter < 2000; ++iter) {
    std::string src;
    int len = int(rng() % 60);
    for (int i = 0; i < len; ++i) {
      src += pieces[rng() % (sizeof(pieces) / sizeof(pieces[0]))];
      src += ' ';
    }
    expectBounded(compile(src));
  }
}

TEST(Robustness, MutatedDesignKernels) {
  std::string base = kDesignKernels;
  std::mt19937 rng(7);
  const std::string alphabet = "()[]{},:;=@*+.-#\n 0123456789MXUVhT";
  for (int iter = 0; iter < 2000; ++iter) {
    std::string src = base;
    for (int m = 0; m < 3; ++m) {
      size_t pos = rng() % src.size();
      switch (rng() % 3) {
      case 0:
        src.erase(pos, 1);
        break;
      case 1:
        src.insert(pos, 1, alphabet[rng() % alphabet.size()]);
        break;
      default:
        src[pos] = alphabet[rng() % alphabet.size()];
      }
    }
    expectBounded(compile(src));
  }
}

TEST(Robustness, DeepParenthesesAreAnError) {
  std::string src = "kernel k(A: bf16[8, 8]) -> bf16[8, 8] {\n  return " + std::string(100000, '(') + "A" +
                    std::string(100000, ')') + "\n}\n";
  Compiled c = compile(src);
  EXPECT_FALSE(c.module);
  EXPECT_NE(c.diags.find("error: expression is nested too deeply (more than 200 levels)"), std::string::npos);
  EXPECT_EQ(c.errors, 1u) << c.diags.substr(0, 2000);
}

TEST(Robustness, DeepCallsAreAnError) {
  std::string src = "kernel k(A: bf16[8, 8]) -> bf16[8, 8] {\n  return ";
  for (int i = 0; i < 50000; ++i)
    src += "silu(";
  Compiled c = compile(src);
  EXPECT_NE(c.diags.find("nested too deeply"), std::string::npos);
  EXPECT_LE(c.errors, 2u);
}

TEST(Robustness, LongOperatorChainsAreAnError) {
  // Left-associative chains build deep trees without parentheses.
  std::string chain = "A";
  for (int i = 0; i < 100000; ++i)
    chain += " @ A";
  Compiled c = compile("kernel k(A: bf16[8, 8]) -> bf16[8, 8] {\n  return " + chain + "\n}\n");
  EXPECT_NE(c.diags.find("nested too deeply"), std::string::npos);
  std::string dots = "A";
  for (int i = 0; i < 100000; ++i)
    dots += ".T";
  c = compile("kernel k(A: bf16[8, 8]) -> bf16[8, 8] {\n  return " + dots + "\n}\n");
  EXPECT_NE(c.diags.find("nested too deeply"), std::string::npos);
}

TEST(Robustness, ChainsWithinTheLimitWork) {
  std::string chain = "A";
  for (int i = 0; i < 150; ++i)
    chain += " @ A";
  Compiled c = compile("kernel k(A: bf16[8, 8]) -> bf16[8, 8] {\n  return " + chain + "\n}\n");
  EXPECT_TRUE(c.module) << c.diags;
}

TEST(Robustness, ManyStatementsAndParams) {
  std::string src = "kernel k(";
  for (int i = 0; i < 2000; ++i)
    src += "P" + std::to_string(i) + ": bf16[8, 8], ";
  src += ") -> bf16[8, 8] {\n  h0 = P0\n";
  for (int i = 1; i < 5000; ++i)
    src += "  h" + std::to_string(i) + " = h" + std::to_string(i - 1) + " + P" + std::to_string(i % 2000) + "\n";
  src += "  return h4999\n}\n";
  Compiled c = compile(src);
  EXPECT_TRUE(c.module) << c.diags.substr(0, 2000);
}

TEST(Robustness, BinaryFileIsOneError) {
  std::string src = "kernel k";
  src += std::string("\0\x01\x02\xff\xfe", 5);
  for (int i = 0; i < 10000; ++i)
    src += char(i * 37 % 256);
  Compiled c = compile(src);
  EXPECT_FALSE(c.module);
  EXPECT_EQ(c.errors, 1u);
  EXPECT_EQ(c.diags, "tessel: error: t.tsl:1:9: the file is not text (a NUL byte); is it a binary file? "
                     "expected .tsl source\n");
}

TEST(Robustness, InvalidUtf8IsOneError) {
  Compiled c = compile("kernel k(A: bf16[8, 8]) -> bf16[8, 8] {\n  return A \xff\xfe\n}\n");
  EXPECT_EQ(c.errors, 1u);
  EXPECT_NE(c.diags.find("t.tsl:2:12: the file is not text (invalid UTF-8)"), std::string::npos) << c.diags;
}

TEST(Robustness, Utf8InCommentsIsFine) {
  Compiled c = compile("# résumé: ünïcödé → ok\nkernel k(A: bf16[8, 8]) -> bf16[8, 8] {\n  return A  # ✓\n}\n");
  EXPECT_TRUE(c.module) << c.diags;
}

TEST(Robustness, ByteOrderMarkAndCrlf) {
  Compiled c = compile("\xEF\xBB\xBFkernel k(A: bf16[8, 8]) -> bf16[8, 8] {\r\n  return A\r\n}\r\n");
  EXPECT_TRUE(c.module) << c.diags;
}

TEST(Robustness, ErrorLimitStopsGarbage) {
  std::string src;
  for (int i = 0; i < 5000; ++i)
    src += "kernel $ ( ) ] \n";
  Compiled c = compile(src);
  EXPECT_LE(c.errors, frontend::kMaxErrors);
  EXPECT_NE(c.diags.find("too many errors (20), stopping now"), std::string::npos);
}

TEST(Robustness, ManySemaErrorsStopAtTheLimit) {
  std::string src = "kernel k(X: bf16[4, 8]) -> bf16[4, 8] {\n";
  for (int i = 0; i < 100; ++i)
    src += "  h" + std::to_string(i) + " = X @ X\n";
  src += "  return X\n}\n";
  Compiled c = compile(src);
  EXPECT_EQ(c.errors, frontend::kMaxErrors);
  EXPECT_NE(c.diags.find("too many errors (20), stopping now"), std::string::npos);
}

TEST(Robustness, HugeIntegersInShapes) {
  Compiled c = compile("kernel k(A: bf16[99999999999999999999999, 8]) -> bf16[8, 8] {\n  return A\n}\n");
  EXPECT_EQ(c.errors, 1u) << c.diags;
  EXPECT_NE(c.diags.find("is too large"), std::string::npos);
  c = compile("const M = 9223372036854775807\nkernel k(A: bf16[M, 8]) -> bf16[M, 8] {\n  return A\n}\n");
  EXPECT_EQ(c.errors, 1u) << c.diags;
}

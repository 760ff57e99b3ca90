//===- tests/unit/frontend/LexerTest.cpp ---------------------------------===//
#include "frontend/Lexer.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace tessel;
using namespace tessel::frontend;

namespace {

struct Lexed {
  std::vector<Token> toks;
  std::string diags;
  unsigned errors = 0;
};

Lexed lexAll(llvm::StringRef src) {
  static std::vector<std::unique_ptr<llvm::SourceMgr>> keepAlive; // tokens point into the buffer
  keepAlive.push_back(std::make_unique<llvm::SourceMgr>());
  llvm::SourceMgr &sm = *keepAlive.back();
  unsigned id = sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(src, "t.tsl"), llvm::SMLoc());
  Lexed out;
  sm.setDiagHandler(
      [](const llvm::SMDiagnostic &d, void *ctx) {
        llvm::raw_string_ostream os(*static_cast<std::string *>(ctx));
        d.print(nullptr, os, false);
      },
      &out.diags);
  DiagnosticEngine diags(sm);
  Lexer lex(sm.getMemoryBuffer(id)->getBuffer(), diags);
  for (int i = 0; i < 10000; ++i) {
    Token t = lex.next();
    out.toks.push_back(t);
    if (t.is(Tok::Eof))
      break;
  }
  out.errors = diags.errorCount();
  return out;
}

std::vector<Tok> kinds(const Lexed &l) {
  std::vector<Tok> k;
  for (const Token &t : l.toks)
    k.push_back(t.kind);
  return k;
}

} // namespace

TEST(Lexer, PunctuationKeywordsAndComments) {
  Lexed l = lexAll("kernel k(X: bf16[M, 7]) -> f32[1,2] { # a comment ( [ \n h = X @ Y.T * Z + W; return h }");
  EXPECT_EQ(l.errors, 0u) << l.diags;
  std::vector<Tok> expected = {
      Tok::KwKernel, Tok::Ident,  Tok::LParen, Tok::Ident,    Tok::Colon,  Tok::Ident,  Tok::LBracket,
      Tok::Ident,    Tok::Comma,  Tok::Int,    Tok::RBracket, Tok::RParen, Tok::Arrow,  Tok::Ident,
      Tok::LBracket, Tok::Int,    Tok::Comma,  Tok::Int,      Tok::RBracket, Tok::LBrace, Tok::Newline,
      Tok::Ident,    Tok::Assign, Tok::Ident,  Tok::At,       Tok::Ident,  Tok::Dot,    Tok::Ident,
      Tok::Star,     Tok::Ident,  Tok::Plus,   Tok::Ident,    Tok::Semi,   Tok::KwReturn, Tok::Ident,
      Tok::RBrace,   Tok::Eof};
  EXPECT_EQ(kinds(l), expected);
  EXPECT_EQ(l.toks[9].intValue, 7);
  EXPECT_EQ(l.toks[1].text, "k");
}

TEST(Lexer, ConstIsAKeyword) {
  Lexed l = lexAll("const M = 4096");
  ASSERT_EQ(l.toks.size(), 5u);
  EXPECT_EQ(l.toks[0].kind, Tok::KwConst);
  EXPECT_EQ(l.toks[3].intValue, 4096);
}

TEST(Lexer, LargestIntegerFits) {
  Lexed l = lexAll("9223372036854775807");
  EXPECT_EQ(l.errors, 0u);
  EXPECT_EQ(l.toks[0].intValue, INT64_MAX);
}

TEST(Lexer, IntegerOverflowIsOneErrorToken) {
  Lexed l = lexAll("9223372036854775808 99999999999999999999999999");
  EXPECT_EQ(l.errors, 2u);
  EXPECT_EQ(l.toks[0].kind, Tok::Error);
  EXPECT_NE(l.diags.find("t.tsl:1:1: error: integer literal '9223372036854775808' is too large"),
            std::string::npos)
      << l.diags;
}

TEST(Lexer, DigitsFollowedByLetters) {
  Lexed l = lexAll("12ab");
  EXPECT_EQ(l.errors, 1u);
  EXPECT_EQ(l.toks[0].kind, Tok::Error);
  EXPECT_NE(l.diags.find("invalid number '12ab'"), std::string::npos);
}

TEST(Lexer, NumbersWithFractionsAndExponents) {
  Lexed l = lexAll("0.125 1e-6 2.5E+3 7 x.T");
  EXPECT_EQ(l.errors, 0u) << l.diags;
  EXPECT_EQ(kinds(l), (std::vector<Tok>{Tok::Float, Tok::Float, Tok::Float, Tok::Int, Tok::Ident, Tok::Dot,
                                        Tok::Ident, Tok::Eof}));
  EXPECT_DOUBLE_EQ(l.toks[0].number, 0.125);
  EXPECT_DOUBLE_EQ(l.toks[1].number, 1e-6);
  EXPECT_DOUBLE_EQ(l.toks[2].number, 2500.0);
  EXPECT_DOUBLE_EQ(l.toks[3].number, 7.0);
}

TEST(Lexer, OperatorsAndComparisons) {
  Lexed l = lexAll("a - b / c < d <= e > f >= g == h != i -> j = k");
  EXPECT_EQ(l.errors, 0u) << l.diags;
  EXPECT_EQ(kinds(l), (std::vector<Tok>{Tok::Ident, Tok::Minus, Tok::Ident, Tok::Slash, Tok::Ident, Tok::Lt,
                                        Tok::Ident, Tok::Le, Tok::Ident, Tok::Gt, Tok::Ident, Tok::Ge,
                                        Tok::Ident, Tok::EqEq, Tok::Ident, Tok::Ne, Tok::Ident, Tok::Arrow,
                                        Tok::Ident, Tok::Assign, Tok::Ident, Tok::Eof}));
}

TEST(Lexer, RunOfBadCharactersIsOneError) {
  Lexed l = lexAll("X $$$%% Y");
  EXPECT_EQ(l.errors, 1u) << l.diags;
  EXPECT_NE(l.diags.find("t.tsl:1:3: error: unexpected character '$'"), std::string::npos) << l.diags;
  EXPECT_EQ(kinds(l), (std::vector<Tok>{Tok::Ident, Tok::Error, Tok::Ident, Tok::Eof}));
}

TEST(Lexer, NonAsciiCharacterIsShownWhole) {
  Lexed l = lexAll("X \xc3\xa9 Y");
  EXPECT_EQ(l.errors, 1u);
  EXPECT_NE(l.diags.find("unexpected character '\xc3\xa9'"), std::string::npos) << l.diags;
}

TEST(Lexer, ControlCharacterIsShownAsByte) {
  Lexed l = lexAll("X \x01 Y");
  EXPECT_NE(l.diags.find("unexpected character (byte 0x01)"), std::string::npos) << l.diags;
}

TEST(Lexer, LoneBangIsABadCharacter) {
  Lexed l = lexAll("a ! b");
  EXPECT_EQ(l.errors, 1u);
  EXPECT_NE(l.diags.find("unexpected character '!'"), std::string::npos) << l.diags;
}

TEST(Lexer, StopsAtErrorLimit) {
  std::string src;
  for (int i = 0; i < 100; ++i)
    src += "$ x ";
  Lexed l = lexAll(src);
  EXPECT_EQ(l.errors, kMaxErrors);
  EXPECT_TRUE(l.toks.back().is(Tok::Eof));
}

TEST(Lexer, CommentAtEndOfFileWithoutNewline) {
  Lexed l = lexAll("x # trailing");
  EXPECT_EQ(kinds(l), (std::vector<Tok>{Tok::Ident, Tok::Eof}));
}

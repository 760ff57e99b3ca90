//===- frontend/Lexer.cpp - Tokens of the .tsl language ------------------===//
#include "frontend/Lexer.h"

#include "support/Scan.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/ConvertUTF.h"

#include <fmt/format.h>

#include <cmath>

namespace tessel::frontend {

const char *tokName(Tok kind) {
  switch (kind) {
  case Tok::Eof:
    return "end of file";
  case Tok::Error:
    return "invalid token";
  case Tok::Newline:
    return "newline";
  case Tok::Ident:
    return "identifier";
  case Tok::Int:
    return "integer";
  case Tok::Float:
    return "number";
  case Tok::KwConst:
    return "'const'";
  case Tok::KwFn:
    return "'fn'";
  case Tok::KwKernel:
    return "'kernel'";
  case Tok::KwReturn:
    return "'return'";
  case Tok::LParen:
    return "'('";
  case Tok::RParen:
    return "')'";
  case Tok::LBracket:
    return "'['";
  case Tok::RBracket:
    return "']'";
  case Tok::LBrace:
    return "'{'";
  case Tok::RBrace:
    return "'}'";
  case Tok::Comma:
    return "','";
  case Tok::Colon:
    return "':'";
  case Tok::Semi:
    return "';'";
  case Tok::Arrow:
    return "'->'";
  case Tok::Assign:
    return "'='";
  case Tok::At:
    return "'@'";
  case Tok::Star:
    return "'*'";
  case Tok::Plus:
    return "'+'";
  case Tok::Dot:
    return "'.'";
  case Tok::Minus:
    return "'-'";
  case Tok::Slash:
    return "'/'";
  case Tok::Lt:
    return "'<'";
  case Tok::Le:
    return "'<='";
  case Tok::Gt:
    return "'>'";
  case Tok::Ge:
    return "'>='";
  case Tok::EqEq:
    return "'=='";
  case Tok::Ne:
    return "'!='";
  }
  return "token";
}

std::string Token::describe() const {
  switch (kind) {
  case Tok::Eof:
  case Tok::Newline:
  case Tok::Error:
    return tokName(kind);
  default:
    return fmt::format("'{}'", text.str());
  }
}

Token Lexer::make(Tok kind, const char *start) const {
  Token t;
  t.kind = kind;
  t.text = llvm::StringRef(start, cur - start);
  t.loc = llvm::SMLoc::getFromPointer(start);
  return t;
}

Token Lexer::next() {
  while (true) {
    if (diags.errorCount() >= kMaxErrors)
      cur = buf.end();
    if (cur >= buf.end()) {
      Token t;
      t.loc = llvm::SMLoc::getFromPointer(buf.end());
      return t;
    }
    const char *start = cur;
    char c = *cur++;
    if (scan::isBlank(c))
      continue;
    switch (c) {
    case '#':
      cur = scan::skipToEndOfLine(cur, buf.end());
      continue;
    case '\n':
      return make(Tok::Newline, start);
    case '(':
      return make(Tok::LParen, start);
    case ')':
      return make(Tok::RParen, start);
    case '[':
      return make(Tok::LBracket, start);
    case ']':
      return make(Tok::RBracket, start);
    case '{':
      return make(Tok::LBrace, start);
    case '}':
      return make(Tok::RBrace, start);
    case ',':
      return make(Tok::Comma, start);
    case ':':
      return make(Tok::Colon, start);
    case ';':
      return make(Tok::Semi, start);
    case '=':
      return make(followedBy('=') ? Tok::EqEq : Tok::Assign, start);
    case '<':
      return make(followedBy('=') ? Tok::Le : Tok::Lt, start);
    case '>':
      return make(followedBy('=') ? Tok::Ge : Tok::Gt, start);
    case '!':
      if (followedBy('='))
        return make(Tok::Ne, start);
      break;
    case '@':
      return make(Tok::At, start);
    case '*':
      return make(Tok::Star, start);
    case '+':
      return make(Tok::Plus, start);
    case '/':
      return make(Tok::Slash, start);
    case '.':
      return make(Tok::Dot, start);
    case '-':
      return make(followedBy('>') ? Tok::Arrow : Tok::Minus, start);
    default:
      break;
    }
    if (llvm::isDigit(c))
      return lexNumber(start);
    if (scan::isIdentStart(c))
      return lexIdentifier(start);
    skipBadChars(start);
    return make(Tok::Error, start);
  }
}

bool Lexer::followedBy(char c) {
  if (cur < buf.end() && *cur == c) {
    ++cur;
    return true;
  }
  return false;
}

Token Lexer::lexNumber(const char *start) {
  bool isFloat = false;
  cur = scan::scanNumber(start, buf.end(), isFloat);
  if (cur < buf.end() && scan::isIdentChar(*cur)) {
    cur = scan::skipWhile(cur, buf.end(), scan::isIdentChar);
    Token t = make(Tok::Error, start);
    diags.error(t.loc, fmt::format("invalid number '{}': a number is decimal digits, an optional "
                                   "fraction and an optional exponent (1e-6)",
                                   t.text.str()));
    return t;
  }
  Token t = make(isFloat ? Tok::Float : Tok::Int, start);
  if (isFloat) {
    if (t.text.getAsDouble(t.number) || !std::isfinite(t.number)) {
      t.kind = Tok::Error;
      diags.error(t.loc, fmt::format("number '{}' is out of range", t.text.str()));
    }
    return t;
  }
  std::optional<uint64_t> v = scan::parseDecimal(t.text);
  if (!v) {
    t.kind = Tok::Error;
    diags.error(t.loc, fmt::format("integer literal '{}' is too large (the limit is {})", t.text.str(),
                                   INT64_MAX));
    return t;
  }
  t.intValue = int64_t(*v);
  t.number = double(*v);
  return t;
}

Token Lexer::lexIdentifier(const char *start) {
  cur = scan::skipWhile(cur, buf.end(), scan::isIdentChar);
  Token t = make(Tok::Ident, start);
  t.kind = llvm::StringSwitch<Tok>(t.text)
               .Case("const", Tok::KwConst)
               .Case("kernel", Tok::KwKernel)
               .Case("return", Tok::KwReturn)
               .Case("fn", Tok::KwFn)
               .Default(Tok::Ident);
  return t;
}

/// Reports the character at `start` (a whole UTF-8 sequence when it is one)
/// and skips it together with any bad characters right after it; the caller
/// returns the run as one Error token.
void Lexer::skipBadChars(const char *start) {
  auto charLen = [&](const char *p) -> size_t {
    unsigned n = llvm::getNumBytesForUTF8(static_cast<llvm::UTF8>(*p));
    if (n < 1 || n > 4 || size_t(buf.end() - p) < n ||
        !llvm::isLegalUTF8Sequence(reinterpret_cast<const llvm::UTF8 *>(p),
                                   reinterpret_cast<const llvm::UTF8 *>(p + n)))
      return 1;
    return n;
  };
  size_t len = charLen(start);
  llvm::StringRef ch(start, len);
  unsigned char b = static_cast<unsigned char>(*start);
  std::string shown = (b >= 0x20 && b < 0x7f) || len > 1 ? fmt::format("'{}'", ch.str())
                                                         : fmt::format("(byte 0x{:02x})", b);
  diags.error(llvm::SMLoc::getFromPointer(start), fmt::format("unexpected character {}", shown));
  cur = start + len;
  // Skip the rest of a run of bad characters: one error per run.
  while (cur < buf.end()) {
    char c = *cur;
    if (scan::isIdentChar(c) || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '#' ||
        llvm::StringRef("()[]{},:;=@*+.-/<>!").contains(c))
      break;
    cur += charLen(cur);
  }
}

} // namespace tessel::frontend

//===- frontend/Lexer.cpp - Tokens of the .tsl language ------------------===//
#include "frontend/Lexer.h"

#include "support/Scan.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/ConvertUTF.h"

#include <fmt/format.h>

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
  case Tok::KwConst:
    return "'const'";
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
      return make(Tok::Assign, start);
    case '@':
      return make(Tok::At, start);
    case '*':
      return make(Tok::Star, start);
    case '+':
      return make(Tok::Plus, start);
    case '.':
      return make(Tok::Dot, start);
    case '-':
      if (cur < buf.end() && *cur == '>') {
        ++cur;
        return make(Tok::Arrow, start);
      }
      diags.error(llvm::SMLoc::getFromPointer(start),
                  "unexpected '-': there is no subtraction or negative number in the language "
                  "(did you mean '->'?)");
      return make(Tok::Error, start);
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

Token Lexer::lexNumber(const char *start) {
  cur = scan::skipWhile(cur, buf.end(), llvm::isDigit);
  if (cur < buf.end() && scan::isIdentChar(*cur)) {
    cur = scan::skipWhile(cur, buf.end(), scan::isIdentChar);
    Token t = make(Tok::Error, start);
    diags.error(t.loc, fmt::format("invalid integer literal '{}': only decimal digits are allowed",
                                   t.text.str()));
    return t;
  }
  Token t = make(Tok::Int, start);
  std::optional<uint64_t> v = scan::parseDecimal(t.text);
  if (!v) {
    t.kind = Tok::Error;
    diags.error(t.loc, fmt::format("integer literal '{}' is too large (the limit is {})", t.text.str(),
                                   INT64_MAX));
    return t;
  }
  t.intValue = int64_t(*v);
  return t;
}

Token Lexer::lexIdentifier(const char *start) {
  cur = scan::skipWhile(cur, buf.end(), scan::isIdentChar);
  Token t = make(Tok::Ident, start);
  t.kind = llvm::StringSwitch<Tok>(t.text)
               .Case("const", Tok::KwConst)
               .Case("kernel", Tok::KwKernel)
               .Case("return", Tok::KwReturn)
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
        llvm::StringRef("()[]{},:;=@*+.-").contains(c))
      break;
    cur += charLen(cur);
  }
}

} // namespace tessel::frontend

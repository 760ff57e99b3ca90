//===- frontend/Lexer.h - Tokens of the .tsl language ----------*- C++ -*-===//
//
// Splits one SourceMgr buffer into tokens. Newlines are tokens (they separate
// statements); the parser skips them inside brackets. `#` starts a comment
// that runs to the end of the line. A run of bad characters and an integer
// literal that does not fit int64 are reported once and returned as one Error
// token: the parser never reports an Error token a second time.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_FRONTEND_LEXER_H
#define TESSEL_FRONTEND_LEXER_H

#include "ir/Diagnostics.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SMLoc.h"

#include <cstdint>

namespace tessel::frontend {

/// The front end stops after this many errors ("too many errors").
constexpr unsigned kMaxErrors = 20;

enum class Tok {
  Eof,
  Error, // already reported by the lexer
  Newline,
  Ident,
  Int,
  Float, // a number with '.' or an exponent: 0.125, 1e-6
  KwConst,
  KwFn,
  KwKernel,
  KwReturn,
  LParen,
  RParen,
  LBracket,
  RBracket,
  LBrace,
  RBrace,
  Comma,
  Colon,
  Semi,
  Arrow,  // ->
  Assign, // =
  At,     // @
  Star,   // *
  Plus,   // +
  Dot,    // .
  Minus,  // -
  Slash,  // /
  Lt,     // <
  Le,     // <=
  Gt,     // >
  Ge,     // >=
  EqEq,   // ==
  Ne,     // !=
};

/// How a token kind is shown in "expected X" messages: `')'`, `identifier`...
const char *tokName(Tok kind);

struct Token {
  Tok kind = Tok::Eof;
  llvm::StringRef text; // the spelling (empty for Eof)
  llvm::SMLoc loc;
  int64_t intValue = 0; // for Int
  double number = 0;    // for Int and Float

  bool is(Tok k) const { return kind == k; }
  /// `'foo'`, `'('`, `newline`, `end of file`: for "found X" messages.
  std::string describe() const;
};

class Lexer {
public:
  Lexer(llvm::StringRef buffer, DiagnosticEngine &diags) : buf(buffer), cur(buffer.begin()), diags(diags) {}

  /// The next token; Eof forever at the end of the buffer, or once the error
  /// limit is reached.
  Token next();

private:
  Token make(Tok kind, const char *start) const;
  Token lexNumber(const char *start);
  /// Consumes `c` when it is the next character.
  bool followedBy(char c);
  Token lexIdentifier(const char *start);
  void skipBadChars(const char *start);

  llvm::StringRef buf;
  const char *cur;
  DiagnosticEngine &diags;
};

} // namespace tessel::frontend

#endif

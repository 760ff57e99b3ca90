//===- frontend/Parser.cpp - .tsl tokens to an untyped AST ---------------===//
//
// Grammar (docs/language.md has the full EBNF):
//   module  := { const | kernel | sep }
//   const   := 'const' IDENT '=' INT
//   kernel  := 'kernel' IDENT '(' [ param { ',' param } [','] ] ')' '->' type
//              '{' { stmt sep } '}'
//   param   := IDENT ':' type          type := ('bf16'|'f32') '[' dim ',' dim ']'
//   stmt    := IDENT '=' expr | 'return' expr
//   expr    := mul { '+' mul }         mul := matmul { '*' matmul }
//   matmul  := postfix { '@' postfix } postfix := primary { '.' 'T' }
//   primary := IDENT | FN '(' expr ')' | '(' expr ')'
// Newlines separate statements and are ignored inside (), [] and after a
// binary operator.
//
//===----------------------------------------------------------------------===//
#include "frontend/Parser.h"

#include "frontend/Lexer.h"
#include "support/Suggest.h"

#include "llvm/ADT/DenseMap.h"

#include <fmt/format.h>

using namespace tessel::ast;

namespace tessel::frontend {
namespace {

using ExprPtr = std::unique_ptr<Expr>;

/// The functions callable as `fn(e)`: the DSL's activations (Activations.def),
/// then `transpose`, which makes a Transpose node.
const std::vector<std::string> &knownFunctions() {
  static const std::vector<std::string> fns = [] {
    std::vector<std::string> names;
    for (ActFn f : allActFns())
      if (isDslFunction(f))
        names.push_back(actFnName(f).str());
    names.push_back("transpose");
    return names;
  }();
  return fns;
}

class Parser {
public:
  Parser(llvm::StringRef buffer, DiagnosticEngine &diags) : lex(buffer, diags), diags(diags), buffer(buffer) {
    advance();
  }

  std::unique_ptr<Module> parseModule();

private:
  // Tokens.
  void advance() {
    tok = lex.next();
    while (nlSkip > 0 && tok.is(Tok::Newline))
      tok = lex.next();
    if (tok.is(Tok::Eof))
      noteErrorLimit(); // the lexer may have reached the limit
  }
  void skipNewlines() {
    while (tok.is(Tok::Newline))
      advance();
  }
  void skipSeparators() {
    while (tok.is(Tok::Newline) || tok.is(Tok::Semi))
      advance();
  }

  // Diagnostics.
  void error(llvm::SMLoc loc, const std::string &msg);
  /// Once the error limit is reached: says so (once) and turns the rest of the
  /// input into end of file.
  void noteErrorLimit();
  /// Reports "expected WHAT, found TOK" unless TOK is an already-reported Error token.
  void errorExpected(const std::string &what);
  bool expect(Tok kind, const std::string &context);
  /// Consumes the closer of a bracket pair opened at `openLoc` (and leaves its
  /// newline-skipping region), or explains what is missing.
  bool expectCloser(Tok closer, llvm::SMLoc openLoc, const char *what, bool skipsNewlines);

  // Recovery.
  void syncTopLevel();
  void syncStatement();

  // Declarations.
  bool parseConst(Module &m);
  bool parseKernel(Module &m);
  bool parseParam(Kernel &k);
  bool parseType(DType &dtype, DimExpr &rows, DimExpr &cols);
  bool parseDim(DimExpr &dim);
  void parseBody(Kernel &k, llvm::SMLoc braceLoc);
  bool parseStatement(Kernel &k, bool &sawReturn);

  // Expressions.
  ExprPtr parseExpr();
  ExprPtr parseAdd();
  ExprPtr parseMul();
  ExprPtr parseMatMul();
  ExprPtr parsePostfix();
  ExprPtr parsePrimary();
  ExprPtr parseCall(const Token &fnTok);
  ExprPtr makeNode(ExprKind kind, llvm::SMLoc opLoc, ExprPtr lhs, ExprPtr rhs);

  Lexer lex;
  DiagnosticEngine &diags;
  llvm::StringRef buffer;
  Token tok;
  unsigned nlSkip = 0;    // > 0 inside () and []: newlines are not separators
  unsigned recursion = 0; // nesting of parenthesised expressions and calls
  bool limitNoted = false;
  bool reportedEof = false; // an "unterminated X" error was reported at the end of the file
  llvm::DenseMap<const Expr *, unsigned> depthOf;
};

void Parser::error(llvm::SMLoc loc, const std::string &msg) {
  if (diags.errorCount() >= kMaxErrors)
    return;
  diags.error(loc, msg);
  noteErrorLimit();
}

void Parser::noteErrorLimit() {
  if (diags.errorCount() < kMaxErrors || limitNoted)
    return;
  limitNoted = true;
  diags.note(llvm::SMLoc(), fmt::format("too many errors ({}), stopping now", kMaxErrors));
  tok = Token();
  tok.loc = llvm::SMLoc::getFromPointer(buffer.end());
}

void Parser::errorExpected(const std::string &what) {
  if (tok.is(Tok::Error))
    return;
  error(tok.loc, fmt::format("expected {}, found {}", what, tok.describe()));
}

bool Parser::expect(Tok kind, const std::string &context) {
  if (tok.is(kind)) {
    advance();
    return true;
  }
  errorExpected(fmt::format("{} {}", tokName(kind), context));
  return false;
}

bool Parser::expectCloser(Tok closer, llvm::SMLoc openLoc, const char *what, bool skipsNewlines) {
  if (tok.is(closer)) {
    if (skipsNewlines && nlSkip > 0)
      --nlSkip;
    advance();
    return true;
  }
  const char *opener = closer == Tok::RParen ? "'('" : closer == Tok::RBracket ? "'['" : "'{'";
  if (tok.is(Tok::Eof)) {
    if (!reportedEof)
      error(openLoc, fmt::format("unterminated {}: missing {} before the end of the file", what,
                                 tokName(closer)));
    reportedEof = true; // the enclosing constructs are unterminated too: one error is enough
    return false;
  }
  if (tok.is(Tok::Error))
    return false;
  unsigned before = diags.errorCount();
  error(tok.loc, fmt::format("expected {} to close the {}, found {}", tokName(closer), what,
                             tok.describe()));
  if (diags.errorCount() > before && diags.errorCount() < kMaxErrors)
    diags.note(openLoc, fmt::format("the {} opened here", opener));
  return false;
}

void Parser::syncTopLevel() {
  nlSkip = 0;
  recursion = 0;
  if (!tok.is(Tok::Eof))
    advance();
  while (!tok.is(Tok::Eof) && !tok.is(Tok::KwKernel) && !tok.is(Tok::KwConst))
    advance();
}

void Parser::syncStatement() {
  nlSkip = 0;
  recursion = 0;
  while (!tok.is(Tok::Eof) && !tok.is(Tok::Newline) && !tok.is(Tok::Semi) &&
         !tok.is(Tok::RBrace) && !tok.is(Tok::KwKernel) && !tok.is(Tok::KwConst))
    advance();
}

std::unique_ptr<Module> Parser::parseModule() {
  auto m = std::make_unique<Module>();
  while (true) {
    skipSeparators();
    if (tok.is(Tok::Eof))
      break;
    bool ok;
    if (tok.is(Tok::KwConst)) {
      ok = parseConst(*m);
    } else if (tok.is(Tok::KwKernel)) {
      ok = parseKernel(*m);
    } else {
      errorExpected("'kernel' or 'const' at the top level");
      ok = false;
    }
    if (!ok)
      syncTopLevel();
  }
  if (m->kernels.empty() && !diags.hadError())
    error(llvm::SMLoc::getFromPointer(buffer.end()),
          "no kernel in file: expected 'kernel NAME(PARAMS) -> TYPE { ... }'");
  return m;
}

bool Parser::parseConst(Module &m) {
  advance(); // 'const'
  Const c;
  c.loc = tok.loc;
  if (!tok.is(Tok::Ident)) {
    errorExpected("a constant name after 'const'");
    return false;
  }
  c.name = tok.text.str();
  advance();
  if (!expect(Tok::Assign, fmt::format("after 'const {}'", c.name)))
    return false;
  if (!tok.is(Tok::Int)) {
    errorExpected(fmt::format("an integer value for constant '{}'", c.name));
    return false;
  }
  c.value = tok.intValue;
  advance();
  if (!tok.is(Tok::Newline) && !tok.is(Tok::Semi) && !tok.is(Tok::Eof)) {
    errorExpected(fmt::format("a newline after 'const {} = {}'", c.name, c.value));
    return false;
  }
  m.consts.push_back(std::move(c));
  return true;
}

bool Parser::parseKernel(Module &m) {
  advance(); // 'kernel'
  Kernel k;
  k.loc = tok.loc;
  if (!tok.is(Tok::Ident)) {
    errorExpected("a kernel name after 'kernel'");
    return false;
  }
  k.name = tok.text.str();
  advance();
  if (!tok.is(Tok::LParen)) {
    errorExpected(fmt::format("'(' to start the parameters of kernel '{}'", k.name));
    return false;
  }
  llvm::SMLoc parenLoc = tok.loc;
  ++nlSkip;
  advance();
  while (!tok.is(Tok::RParen) && !tok.is(Tok::Eof)) {
    if (!parseParam(k))
      return false;
    if (tok.is(Tok::Comma)) {
      advance();
      continue;
    }
    if (!tok.is(Tok::RParen) && !tok.is(Tok::Eof)) { // at EOF expectCloser explains
      unsigned before = diags.errorCount();
      errorExpected("',' or ')' after a parameter");
      if (diags.errorCount() > before && diags.errorCount() < kMaxErrors)
        diags.note(parenLoc, "the parameter list starts here");
      return false;
    }
  }
  if (!expectCloser(Tok::RParen, parenLoc, "parameter list", true))
    return false;
  skipNewlines();
  if (!expect(Tok::Arrow, fmt::format("and the result type after the parameters of kernel '{}'", k.name)))
    return false;
  skipNewlines();
  if (!parseType(k.resultDType, k.resultRows, k.resultCols))
    return false;
  skipNewlines();
  if (!tok.is(Tok::LBrace)) {
    errorExpected(fmt::format("'{{' to start the body of kernel '{}'", k.name));
    return false;
  }
  llvm::SMLoc braceLoc = tok.loc;
  advance();
  parseBody(k, braceLoc);
  m.kernels.push_back(std::move(k));
  return true;
}

bool Parser::parseParam(Kernel &k) {
  Param p;
  p.loc = tok.loc;
  if (!tok.is(Tok::Ident)) {
    errorExpected("a parameter name");
    return false;
  }
  p.name = tok.text.str();
  advance();
  if (!expect(Tok::Colon, fmt::format("and a type after parameter '{}'", p.name)))
    return false;
  if (!parseType(p.dtype, p.rows, p.cols))
    return false;
  k.params.push_back(std::move(p));
  return true;
}

bool Parser::parseType(DType &dtype, DimExpr &rows, DimExpr &cols) {
  if (!tok.is(Tok::Ident)) {
    errorExpected("a type such as 'bf16[M, 128]'");
    return false;
  }
  std::optional<DType> parsed = parseDType(tok.text);
  if (!parsed) {
    std::vector<std::string> quoted;
    for (DType t : allDTypes())
      quoted.push_back(("'" + dtypeName(t) + "'").str());
    std::vector<llvm::StringRef> refs(quoted.begin(), quoted.end());
    error(tok.loc, fmt::format("unknown element type '{}': expected {}", tok.text.str(), alternatives(refs)));
    return false;
  }
  dtype = *parsed;
  advance();
  if (!tok.is(Tok::LBracket)) {
    errorExpected("'[' and the shape after the element type (every value is 2-D: 'bf16[ROWS, COLS]')");
    return false;
  }
  llvm::SMLoc bracketLoc = tok.loc;
  ++nlSkip;
  advance();
  if (!parseDim(rows))
    return false;
  if (tok.is(Tok::RBracket)) {
    error(tok.loc, "expected ',' and a second dimension: every value is 2-D ('bf16[ROWS, COLS]')");
    return false;
  }
  if (!tok.is(Tok::Comma)) {
    if (tok.is(Tok::Eof))
      return expectCloser(Tok::RBracket, bracketLoc, "shape", true);
    errorExpected("',' between the two dimensions");
    return false;
  }
  advance();
  if (!parseDim(cols))
    return false;
  if (tok.is(Tok::Comma)) {
    error(tok.loc, "too many dimensions: every value is 2-D ('bf16[ROWS, COLS]')");
    return false;
  }
  return expectCloser(Tok::RBracket, bracketLoc, "shape", true);
}

bool Parser::parseDim(DimExpr &dim) {
  dim.loc = tok.loc;
  if (tok.is(Tok::Int)) {
    dim.literal = tok.intValue;
    advance();
    return true;
  }
  if (tok.is(Tok::Ident)) {
    dim.constName = tok.text.str();
    advance();
    return true;
  }
  errorExpected("a dimension (an integer or a constant name)");
  return false;
}

void Parser::parseBody(Kernel &k, llvm::SMLoc braceLoc) {
  unsigned errorsBefore = diags.errorCount();
  bool sawReturn = false, reportedAfterReturn = false;
  llvm::SMLoc closeLoc;
  while (true) {
    skipSeparators();
    if (tok.is(Tok::RBrace)) {
      closeLoc = tok.loc;
      advance();
      break;
    }
    if (tok.is(Tok::Eof)) {
      if (!reportedEof)
        error(braceLoc, fmt::format("unterminated body of kernel '{}': missing '}}' before the end of "
                                    "the file",
                                    k.name));
      reportedEof = true;
      return;
    }
    if (tok.is(Tok::KwKernel) || tok.is(Tok::KwConst)) {
      unsigned before = diags.errorCount();
      error(braceLoc, fmt::format("unterminated body of kernel '{}': missing '}}' before the next "
                                  "declaration",
                                  k.name));
      if (diags.errorCount() > before && diags.errorCount() < kMaxErrors)
        diags.note(tok.loc, "the next declaration starts here");
      return;
    }
    if (sawReturn && !reportedAfterReturn) {
      error(tok.loc, fmt::format("statement after 'return': 'return' must be the last statement of "
                                 "kernel '{}'",
                                 k.name));
      reportedAfterReturn = true;
    }
    if (!parseStatement(k, sawReturn)) {
      syncStatement();
      continue;
    }
    if (!tok.is(Tok::Newline) && !tok.is(Tok::Semi) && !tok.is(Tok::RBrace) && !tok.is(Tok::Eof)) {
      errorExpected("a newline or ';' after the statement");
      syncStatement();
    }
  }
  if (!sawReturn && diags.errorCount() == errorsBefore)
    error(closeLoc, fmt::format("kernel '{}' has no 'return': end its body with 'return EXPR'", k.name));
}

bool Parser::parseStatement(Kernel &k, bool &sawReturn) {
  Stmt s;
  s.loc = tok.loc;
  if (tok.is(Tok::KwReturn)) {
    advance();
    s.value = parseExpr();
    if (!s.value)
      return false;
    if (!sawReturn) // a second return was already reported as a statement after 'return'
      k.body.push_back(std::move(s));
    sawReturn = true;
    return true;
  }
  if (!tok.is(Tok::Ident)) {
    errorExpected("a statement ('NAME = EXPR' or 'return EXPR')");
    return false;
  }
  s.name = tok.text.str();
  advance();
  if (!tok.is(Tok::Assign)) {
    errorExpected(fmt::format("'=' after '{}' (a statement is 'NAME = EXPR' or 'return EXPR')", s.name));
    return false;
  }
  advance();
  s.value = parseExpr();
  if (!s.value)
    return false;
  if (!sawReturn)
    k.body.push_back(std::move(s));
  return true;
}

ExprPtr Parser::makeNode(ExprKind kind, llvm::SMLoc opLoc, ExprPtr lhs, ExprPtr rhs) {
  unsigned depth = 1 + depthOf.lookup(lhs.get());
  if (rhs)
    depth = std::max(depth, 1 + depthOf.lookup(rhs.get()));
  if (depth > kMaxExprDepth) {
    error(opLoc, fmt::format("expression is nested too deeply (more than {} levels): split it into "
                             "several assignments",
                             kMaxExprDepth));
    return nullptr;
  }
  auto e = std::make_unique<Expr>(kind, lhs->loc);
  e->opLoc = opLoc;
  e->lhs = std::move(lhs);
  e->rhs = std::move(rhs);
  depthOf[e.get()] = depth;
  return e;
}

ExprPtr Parser::parseExpr() { return parseAdd(); }

ExprPtr Parser::parseAdd() {
  ExprPtr lhs = parseMul();
  while (lhs && tok.is(Tok::Plus)) {
    llvm::SMLoc opLoc = tok.loc;
    advance();
    skipNewlines();
    ExprPtr rhs = parseMul();
    if (!rhs)
      return nullptr;
    lhs = makeNode(ExprKind::Binary, opLoc, std::move(lhs), std::move(rhs));
    if (lhs)
      lhs->binOp = BinaryOp::Add;
  }
  return lhs;
}

ExprPtr Parser::parseMul() {
  ExprPtr lhs = parseMatMul();
  while (lhs && tok.is(Tok::Star)) {
    llvm::SMLoc opLoc = tok.loc;
    advance();
    skipNewlines();
    ExprPtr rhs = parseMatMul();
    if (!rhs)
      return nullptr;
    lhs = makeNode(ExprKind::Binary, opLoc, std::move(lhs), std::move(rhs));
    if (lhs)
      lhs->binOp = BinaryOp::Mul;
  }
  return lhs;
}

ExprPtr Parser::parseMatMul() {
  ExprPtr lhs = parsePostfix();
  while (lhs && tok.is(Tok::At)) {
    llvm::SMLoc opLoc = tok.loc;
    advance();
    skipNewlines();
    ExprPtr rhs = parsePostfix();
    if (!rhs)
      return nullptr;
    lhs = makeNode(ExprKind::MatMul, opLoc, std::move(lhs), std::move(rhs));
  }
  return lhs;
}

ExprPtr Parser::parsePostfix() {
  ExprPtr e = parsePrimary();
  while (e && tok.is(Tok::Dot)) {
    llvm::SMLoc dotLoc = tok.loc;
    advance();
    if (!tok.is(Tok::Ident) || tok.text != "T") {
      errorExpected("'T' after '.' (the only postfix operator is '.T', the transpose)");
      return nullptr;
    }
    advance();
    e = makeNode(ExprKind::Transpose, dotLoc, std::move(e), nullptr);
  }
  return e;
}

ExprPtr Parser::parsePrimary() {
  if (tok.is(Tok::Ident)) {
    Token name = tok;
    advance();
    if (tok.is(Tok::LParen))
      return parseCall(name);
    auto e = std::make_unique<Expr>(ExprKind::Ref, name.loc);
    e->opLoc = name.loc;
    e->name = name.text.str();
    depthOf[e.get()] = 1;
    return e;
  }
  if (tok.is(Tok::LParen)) {
    llvm::SMLoc openLoc = tok.loc;
    if (recursion >= kMaxExprDepth) {
      error(openLoc, fmt::format("expression is nested too deeply (more than {} levels): split it "
                                 "into several assignments",
                                 kMaxExprDepth));
      return nullptr;
    }
    ++nlSkip;
    advance();
    ++recursion;
    ExprPtr e = parseExpr();
    --recursion;
    if (!e || !expectCloser(Tok::RParen, openLoc, "parenthesised expression", true))
      return nullptr;
    return e;
  }
  if (tok.is(Tok::Int)) {
    error(tok.loc, fmt::format("unexpected integer '{}': values are 2-D tensors and integers may only "
                               "appear as dimensions",
                               tok.text.str()));
    return nullptr;
  }
  errorExpected("an expression");
  return nullptr;
}

ExprPtr Parser::parseCall(const Token &fnTok) {
  llvm::SMLoc openLoc = tok.loc;
  std::string fn = fnTok.text.str();
  const auto &fns = knownFunctions();
  if (std::find(fns.begin(), fns.end(), fn) == fns.end()) {
    std::string guess = closestName(fn, fns);
    error(fnTok.loc, fmt::format("unknown function '{}'; {}the functions are {}", fn,
                                 guess.empty() ? "" : fmt::format("did you mean '{}'? ", guess),
                                 quotedList(fns)));
    return nullptr;
  }
  if (recursion >= kMaxExprDepth) {
    error(openLoc, fmt::format("expression is nested too deeply (more than {} levels): split it into "
                               "several assignments",
                               kMaxExprDepth));
    return nullptr;
  }
  ++nlSkip;
  advance();
  ++recursion;
  ExprPtr arg = parseExpr();
  --recursion;
  if (!arg)
    return nullptr;
  if (tok.is(Tok::Comma)) {
    error(tok.loc, fmt::format("'{}' takes exactly one argument", fn));
    return nullptr;
  }
  if (!expectCloser(Tok::RParen, openLoc, fmt::format("call to '{}'", fn).c_str(), true))
    return nullptr;
  ExprPtr e;
  if (fn == "transpose") {
    e = makeNode(ExprKind::Transpose, fnTok.loc, std::move(arg), nullptr);
  } else {
    e = makeNode(ExprKind::Unary, fnTok.loc, std::move(arg), nullptr);
    if (e)
      e->unaryFn = *parseActFn(fn);
  }
  if (e)
    e->loc = fnTok.loc;
  return e;
}

} // namespace

std::unique_ptr<Module> parseModule(llvm::StringRef buffer, DiagnosticEngine &diags) {
  return Parser(buffer, diags).parseModule();
}

} // namespace tessel::frontend

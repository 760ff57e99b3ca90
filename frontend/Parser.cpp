//===- frontend/Parser.cpp - .tsl tokens to an untyped AST ---------------===//
//
// Grammar (docs/language.md has the full EBNF):
//   module  := { const | kernel | fn | sep }
//   const   := 'const' IDENT '=' INT
//   kernel  := 'kernel' IDENT '(' [ param { ',' param } [','] ] ')' '->' type
//              '{' { stmt sep } '}'
//   fn      := 'fn' IDENT '(' [ fparam { ',' fparam } ] ')' '{' { stmt sep } '}'
//   param   := IDENT ':' type          type := ('bf16'|'f32') '[' dim [ ',' dim ] ']'
//   stmt    := IDENT '=' expr | 'return' expr
//   expr    := add [ cmp add ]         add := mul { ('+'|'-') mul }
//   mul     := unary { ('*'|'/') unary }  unary := '-' unary | matmul
//   matmul  := postfix { '@' postfix } postfix := primary { '.' 'T' }
//   primary := IDENT | NUMBER | IDENT '(' [ arg { ',' arg } ] ')' | '(' expr ')'
// Newlines separate statements and are ignored inside (), [] and after a
// binary operator.
//
//===----------------------------------------------------------------------===//
#include "frontend/Parser.h"

#include "frontend/Lexer.h"
#include "support/Suggest.h"

#include "llvm/ADT/DenseMap.h"

#include <functional>
#include <optional>
#include <utility>

#include <fmt/format.h>

using namespace tessel::ast;

namespace tessel::frontend {
namespace {

using ExprPtr = std::unique_ptr<Expr>;

/// The functions callable as `fn(e)`: the DSL's activations (Activations.def),
/// then `transpose` and `merge_heads`, which make Transpose and MergeHeads nodes.
const std::vector<std::string> &knownFunctions() {
  static const std::vector<std::string> fns = [] {
    std::vector<std::string> names;
    for (ActFn f : allActFns())
      if (isDslFunction(f))
        names.push_back(actFnName(f).str());
    names.push_back("transpose");
    names.push_back("merge_heads");
    return names;
  }();
  return fns;
}

class Parser {
public:
  Parser(llvm::StringRef buffer, DiagnosticEngine &diags, bool requireKernel)
      : lex(buffer, diags), diags(diags), buffer(buffer), requireKernel(requireKernel) {
    advance();
  }

  std::unique_ptr<Module> parseModule();

private:
  // Tokens.
  void advance() {
    tok = pending ? *std::exchange(pending, std::nullopt) : lex.next();
    while (nlSkip > 0 && tok.is(Tok::Newline))
      tok = lex.next();
    if (tok.is(Tok::Eof))
      noteErrorLimit(); // the lexer may have reached the limit
  }
  /// The token after `tok` (one token of lookahead, for `keyword=value`).
  const Token &peek() {
    if (!pending)
      pending = lex.next();
    while (nlSkip > 0 && pending->is(Tok::Newline))
      pending = lex.next();
    return *pending;
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
  bool parseFunction(Module &m);
  bool parseHead(const char *what, const char *keyword, std::string &name, llvm::SMLoc &loc, llvm::SMLoc &parenLoc);
  bool parseParams(llvm::SMLoc parenLoc, const std::function<bool()> &one);
  bool parseBraceBody(std::vector<Stmt> &body, const std::string &owner);
  bool parseFnParam(Function &f);
  bool parseParam(Kernel &k);
  bool parseType(DType &dtype, std::optional<DimExpr> &heads, DimExpr &rows, DimExpr &cols);
  bool parseDim(DimExpr &dim);
  /// A body of statements up to its '}'; `owner` names it in messages
  /// ("kernel 'k'", "function 'f'").
  void parseBody(std::vector<Stmt> &body, const std::string &owner, llvm::SMLoc braceLoc);
  bool parseStatement(std::vector<Stmt> &body, bool &sawReturn);

  // Expressions.
  ExprPtr parseExpr();
  ExprPtr parseAdd();
  ExprPtr parseMul();
  ExprPtr parseUnary();
  ExprPtr parseMatMul();
  ExprPtr parsePostfix();
  ExprPtr parsePrimary();
  ExprPtr parseCall(const Token &fnTok);
  /// The arguments of a call, after its '('; false after an error.
  bool parseArgs(std::vector<Arg> &args, llvm::SMLoc openLoc, const std::string &fn);
  ExprPtr makeNumber(llvm::SMLoc loc, double value);
  ExprPtr makeNode(ExprKind kind, llvm::SMLoc opLoc, ExprPtr lhs, ExprPtr rhs);

  Lexer lex;
  DiagnosticEngine &diags;
  llvm::StringRef buffer;
  bool requireKernel; // false for the prelude, which defines functions only
  Token tok;
  std::optional<Token> pending; // peek()'s token
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
  while (!tok.is(Tok::Eof) && !tok.is(Tok::KwKernel) && !tok.is(Tok::KwConst) && !tok.is(Tok::KwFn))
    advance();
}

void Parser::syncStatement() {
  nlSkip = 0;
  recursion = 0;
  while (!tok.is(Tok::Eof) && !tok.is(Tok::Newline) && !tok.is(Tok::Semi) &&
         !tok.is(Tok::RBrace) && !tok.is(Tok::KwKernel) && !tok.is(Tok::KwConst) &&
         !tok.is(Tok::KwFn))
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
    } else if (tok.is(Tok::KwFn)) {
      ok = parseFunction(*m);
    } else {
      errorExpected("'kernel', 'fn' or 'const' at the top level");
      ok = false;
    }
    if (!ok)
      syncTopLevel();
  }
  if (m->kernels.empty() && requireKernel && !diags.hadError())
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

/// `NAME (` of a kernel or function (`what`) after its `keyword`: sets `name`
/// and `loc`, and leaves the parser inside the parameter list.
bool Parser::parseHead(const char *what, const char *keyword, std::string &name, llvm::SMLoc &loc, llvm::SMLoc &parenLoc) {
  advance(); // 'kernel' or 'fn'
  loc = tok.loc;
  if (!tok.is(Tok::Ident)) {
    errorExpected(fmt::format("a {} name after '{}'", what, keyword));
    return false;
  }
  name = tok.text.str();
  advance();
  if (!tok.is(Tok::LParen)) {
    errorExpected(fmt::format("'(' to start the parameters of {} '{}'", what, name));
    return false;
  }
  parenLoc = tok.loc;
  ++nlSkip;
  advance();
  return true;
}

/// The parameters up to and including ')', each parsed by `one`.
bool Parser::parseParams(llvm::SMLoc parenLoc, const std::function<bool()> &one) {
  while (!tok.is(Tok::RParen) && !tok.is(Tok::Eof)) {
    if (!one())
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
  return expectCloser(Tok::RParen, parenLoc, "parameter list", true);
}

/// `{ BODY }` of `owner` ("kernel 'k'").
bool Parser::parseBraceBody(std::vector<Stmt> &body, const std::string &owner) {
  skipNewlines();
  if (!tok.is(Tok::LBrace)) {
    errorExpected(fmt::format("'{{' to start the body of {}", owner));
    return false;
  }
  llvm::SMLoc braceLoc = tok.loc;
  advance();
  parseBody(body, owner, braceLoc);
  return true;
}

bool Parser::parseKernel(Module &m) {
  Kernel k;
  llvm::SMLoc parenLoc;
  if (!parseHead("kernel", "kernel", k.name, k.loc, parenLoc) || !parseParams(parenLoc, [&] { return parseParam(k); }))
    return false;
  skipNewlines();
  if (!expect(Tok::Arrow, fmt::format("and the result type after the parameters of kernel '{}'", k.name)))
    return false;
  skipNewlines();
  if (!parseType(k.resultDType, k.resultHeads, k.resultRows, k.resultCols) ||
      !parseBraceBody(k.body, fmt::format("kernel '{}'", k.name)))
    return false;
  m.kernels.push_back(std::move(k));
  return true;
}

bool Parser::parseFunction(Module &m) {
  Function f;
  llvm::SMLoc parenLoc;
  if (!parseHead("function", "fn", f.name, f.loc, parenLoc) || !parseParams(parenLoc, [&] { return parseFnParam(f); }) ||
      !parseBraceBody(f.body, fmt::format("function '{}'", f.name)))
    return false;
  m.functions.push_back(std::move(f));
  return true;
}

/// `NAME` or `NAME = NUMBER` (a number parameter with its default).
bool Parser::parseFnParam(Function &f) {
  FnParam p;
  p.loc = tok.loc;
  if (!tok.is(Tok::Ident)) {
    errorExpected("a parameter name");
    return false;
  }
  p.name = tok.text.str();
  advance();
  if (tok.is(Tok::Assign)) {
    advance();
    bool negative = tok.is(Tok::Minus);
    if (negative)
      advance();
    if (!tok.is(Tok::Int) && !tok.is(Tok::Float)) {
      errorExpected(fmt::format("a number as the default of parameter '{}'", p.name));
      return false;
    }
    p.defaultValue = makeNumber(tok.loc, negative ? -tok.number : tok.number);
    advance();
  }
  f.params.push_back(std::move(p));
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
  if (!parseType(p.dtype, p.heads, p.rows, p.cols))
    return false;
  k.params.push_back(std::move(p));
  return true;
}

bool Parser::parseType(DType &dtype, std::optional<DimExpr> &heads, DimExpr &rows, DimExpr &cols) {
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
    errorExpected("'[' and the shape after the element type ('bf16[ROWS, COLS]' or 'bf16[COLS]')");
    return false;
  }
  llvm::SMLoc bracketLoc = tok.loc;
  ++nlSkip;
  advance();
  if (!parseDim(rows))
    return false;
  if (tok.is(Tok::RBracket)) {
    // `bf16[N]`: a row vector, the same as `bf16[1, N]`.
    cols = rows;
    rows = DimExpr{"", 1, cols.loc};
    return expectCloser(Tok::RBracket, bracketLoc, "shape", true);
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
    // `bf16[H, S, D]`: a leading head dimension.
    advance();
    heads = rows;
    rows = cols;
    cols = DimExpr{};
    if (!parseDim(cols))
      return false;
  }
  if (tok.is(Tok::Comma)) {
    error(tok.loc, "too many dimensions: a value is 2-D ('bf16[ROWS, COLS]'), a row vector "
                   "('bf16[COLS]') or has a leading head dimension ('bf16[HEADS, ROWS, COLS]')");
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

void Parser::parseBody(std::vector<Stmt> &body, const std::string &owner, llvm::SMLoc braceLoc) {
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
        error(braceLoc, fmt::format("unterminated body of {}: missing '}}' before the end of "
                                    "the file",
                                    owner));
      reportedEof = true;
      return;
    }
    if (tok.is(Tok::KwKernel) || tok.is(Tok::KwConst) || tok.is(Tok::KwFn)) {
      unsigned before = diags.errorCount();
      error(braceLoc, fmt::format("unterminated body of {}: missing '}}' before the next "
                                  "declaration",
                                  owner));
      if (diags.errorCount() > before && diags.errorCount() < kMaxErrors)
        diags.note(tok.loc, "the next declaration starts here");
      return;
    }
    if (sawReturn && !reportedAfterReturn) {
      error(tok.loc, fmt::format("statement after 'return': 'return' must be the last statement of "
                                 "{}",
                                 owner));
      reportedAfterReturn = true;
    }
    if (!parseStatement(body, sawReturn)) {
      syncStatement();
      continue;
    }
    if (!tok.is(Tok::Newline) && !tok.is(Tok::Semi) && !tok.is(Tok::RBrace) && !tok.is(Tok::Eof)) {
      errorExpected("a newline or ';' after the statement");
      syncStatement();
    }
  }
  if (!sawReturn && diags.errorCount() == errorsBefore)
    error(closeLoc, fmt::format("{} has no 'return': end its body with 'return EXPR'", owner));
}

bool Parser::parseStatement(std::vector<Stmt> &body, bool &sawReturn) {
  Stmt s;
  s.loc = tok.loc;
  if (tok.is(Tok::KwReturn)) {
    advance();
    s.value = parseExpr();
    if (!s.value)
      return false;
    if (!sawReturn) // a second return was already reported as a statement after 'return'
      body.push_back(std::move(s));
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
    body.push_back(std::move(s));
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

ExprPtr Parser::makeNumber(llvm::SMLoc loc, double value) {
  auto e = std::make_unique<Expr>(ExprKind::Number, loc);
  e->opLoc = loc;
  e->number = value;
  depthOf[e.get()] = 1;
  return e;
}

/// The comparison a token spells, if it is one.
static std::optional<BinaryOp> comparisonOf(Tok kind) {
  switch (kind) {
  case Tok::Lt: return BinaryOp::Lt;
  case Tok::Le: return BinaryOp::Le;
  case Tok::Gt: return BinaryOp::Gt;
  case Tok::Ge: return BinaryOp::Ge;
  case Tok::EqEq: return BinaryOp::Eq;
  case Tok::Ne: return BinaryOp::Ne;
  default: return std::nullopt;
  }
}

// Comparisons do not chain: `a < b < c` is an error.
ExprPtr Parser::parseExpr() {
  ExprPtr lhs = parseAdd();
  std::optional<BinaryOp> cmp = comparisonOf(tok.kind);
  if (!lhs || !cmp)
    return lhs;
  llvm::SMLoc opLoc = tok.loc;
  advance();
  skipNewlines();
  ExprPtr rhs = parseAdd();
  if (!rhs)
    return nullptr;
  lhs = makeNode(ExprKind::Binary, opLoc, std::move(lhs), std::move(rhs));
  if (lhs)
    lhs->binOp = *cmp;
  if (lhs && comparisonOf(tok.kind)) {
    error(tok.loc, "comparisons do not chain: parenthesise one of them, or multiply two masks");
    return nullptr;
  }
  return lhs;
}

ExprPtr Parser::parseAdd() {
  ExprPtr lhs = parseMul();
  while (lhs && (tok.is(Tok::Plus) || tok.is(Tok::Minus))) {
    BinaryOp op = tok.is(Tok::Plus) ? BinaryOp::Add : BinaryOp::Sub;
    llvm::SMLoc opLoc = tok.loc;
    advance();
    skipNewlines();
    ExprPtr rhs = parseMul();
    if (!rhs)
      return nullptr;
    lhs = makeNode(ExprKind::Binary, opLoc, std::move(lhs), std::move(rhs));
    if (lhs)
      lhs->binOp = op;
  }
  return lhs;
}

ExprPtr Parser::parseMul() {
  ExprPtr lhs = parseUnary();
  while (lhs && (tok.is(Tok::Star) || tok.is(Tok::Slash))) {
    BinaryOp op = tok.is(Tok::Star) ? BinaryOp::Mul : BinaryOp::Div;
    llvm::SMLoc opLoc = tok.loc;
    advance();
    skipNewlines();
    ExprPtr rhs = parseUnary();
    if (!rhs)
      return nullptr;
    lhs = makeNode(ExprKind::Binary, opLoc, std::move(lhs), std::move(rhs));
    if (lhs)
      lhs->binOp = op;
  }
  return lhs;
}

// `-2.5` is a number; `-e` is `e * -1`.
ExprPtr Parser::parseUnary() {
  if (!tok.is(Tok::Minus))
    return parseMatMul();
  llvm::SMLoc minusLoc = tok.loc;
  if (recursion >= kMaxExprDepth) {
    error(minusLoc, fmt::format("expression is nested too deeply (more than {} levels): split it into "
                                "several assignments",
                                kMaxExprDepth));
    return nullptr;
  }
  advance();
  ++recursion;
  ExprPtr operand = parseUnary();
  --recursion;
  if (!operand)
    return nullptr;
  if (operand->kind == ExprKind::Number) {
    operand->number = -operand->number;
    operand->loc = operand->opLoc = minusLoc;
    return operand;
  }
  ExprPtr e = makeNode(ExprKind::Binary, minusLoc, std::move(operand), makeNumber(minusLoc, -1.0));
  if (e) {
    e->binOp = BinaryOp::Mul;
    e->loc = minusLoc;
  }
  return e;
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
  if (tok.is(Tok::Int) || tok.is(Tok::Float)) {
    ExprPtr e = makeNumber(tok.loc, tok.number);
    advance();
    return e;
  }
  errorExpected("an expression");
  return nullptr;
}

bool Parser::parseArgs(std::vector<Arg> &args, llvm::SMLoc openLoc, const std::string &fn) {
  while (!tok.is(Tok::RParen) && !tok.is(Tok::Eof)) {
    Arg a;
    if (tok.is(Tok::Ident) && peek().is(Tok::Assign)) {
      a.keyword = tok.text.str();
      a.keywordLoc = tok.loc;
      advance();
      advance();
    }
    if (a.keyword.empty() && !args.empty() && !args.back().keyword.empty()) {
      error(tok.loc, fmt::format("positional argument after a keyword argument in the call to '{}'", fn));
      return false;
    }
    a.value = parseExpr();
    if (!a.value)
      return false;
    args.push_back(std::move(a));
    if (tok.is(Tok::Comma)) {
      advance();
      continue;
    }
    break;
  }
  return expectCloser(Tok::RParen, openLoc, fmt::format("call to '{}'", fn).c_str(), true);
}

// `transpose(e)` and the activations take one argument and make their own
// nodes; any other name is a Call, resolved after parsing (frontend/Inline.cpp:
// the reductions, the prelude's and the file's functions).
ExprPtr Parser::parseCall(const Token &fnTok) {
  llvm::SMLoc openLoc = tok.loc;
  std::string fn = fnTok.text.str();
  if (recursion >= kMaxExprDepth) {
    error(openLoc, fmt::format("expression is nested too deeply (more than {} levels): split it into "
                               "several assignments",
                               kMaxExprDepth));
    return nullptr;
  }
  const auto &fns = knownFunctions();
  bool builtin = std::find(fns.begin(), fns.end(), fn) != fns.end();
  ++nlSkip;
  advance();
  ++recursion;
  std::vector<Arg> args;
  bool ok = parseArgs(args, openLoc, fn);
  --recursion;
  if (!ok)
    return nullptr;
  if (!builtin) {
    auto e = std::make_unique<Expr>(ExprKind::Call, fnTok.loc);
    e->opLoc = fnTok.loc;
    e->name = fn;
    unsigned depth = 1;
    for (const Arg &a : args)
      depth = std::max(depth, 1 + depthOf.lookup(a.value.get()));
    e->args = std::move(args);
    depthOf[e.get()] = depth;
    return e;
  }
  if (args.size() != 1 || !args[0].keyword.empty()) {
    error(args.size() > 1 ? args[1].value->loc : args.empty() ? openLoc : args[0].keywordLoc,
          fmt::format("'{}' takes exactly one argument", fn));
    return nullptr;
  }
  ExprPtr arg = std::move(args[0].value);
  ExprPtr e;
  if (fn == "transpose") {
    e = makeNode(ExprKind::Transpose, fnTok.loc, std::move(arg), nullptr);
  } else if (fn == "merge_heads") {
    e = makeNode(ExprKind::MergeHeads, fnTok.loc, std::move(arg), nullptr);
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

std::unique_ptr<Module> parseModule(llvm::StringRef buffer, DiagnosticEngine &diags, bool requireKernel) {
  return Parser(buffer, diags, requireKernel).parseModule();
}

} // namespace tessel::frontend

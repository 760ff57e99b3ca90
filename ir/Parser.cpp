//===- ir/Parser.cpp - Reads the text form of the tile IR -----------------===//
//
// 1. The Lexer turns the buffer into tokens, skipping whitespace and `//`
//    comments; a byte it does not know becomes an Error token (reported once).
// 2. The Parser is recursive descent over the grammar in docs/tile-ir.md.
//    Syntax errors stop the parse (one located error, MLIR style). Name errors
//    (undefined, out of scope, redefined) are reported and parsing goes on, so
//    one run shows all of them; the module is discarded at the end.
// 3. Scoping: `defined` maps every name of the current kernel to its Value
//    (names are unique per kernel); `visible` is the set of values whose
//    definition encloses the current point, maintained as a stack of blocks.
// 4. Robustness: integer literals and constant folding are overflow-checked,
//    and nesting (blocks, parentheses) and expression size are capped so no
//    input can exhaust the stack.
//
//===----------------------------------------------------------------------===//
#include "ir/Parser.h"

#include "support/Registry.h"
#include "support/Scan.h"
#include "support/Suggest.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"

#include <limits>
#include <map>
#include <set>

namespace tessel::ir {
namespace {

constexpr unsigned kMaxNesting = 100;     // blocks and parentheses
constexpr unsigned kMaxExprNodes = 256;   // operators in one index expression

//===----------------------------------------------------------------------===//
// Lexer
//===----------------------------------------------------------------------===//

enum class Tok {
  Eof,
  Error,
  Ident,    // kernel, alloc, bf16, M, ...
  ValueRef, // %name (text excludes the '%')
  Symbol,   // @name (text excludes the '@')
  Int,
  Float,
  LParen,
  RParen,
  LBracket,
  RBracket,
  LBrace,
  RBrace,
  Less,
  Greater,
  Comma,
  Colon,
  Equal,
  Plus,
  Minus,
  Star,
  PlusColon, // +:
  LArrow,    // <-
  RArrow,    // ->
};

struct Token {
  Tok kind = Tok::Eof;
  llvm::StringRef text; // spelling (without sigil for ValueRef/Symbol)
  llvm::SMLoc loc;
  /// Pass notes (`// [pass] text` comment lines) just before this token.
  std::vector<std::string> notes;
  bool is(Tok k) const { return kind == k; }
  bool isKeyword(llvm::StringRef kw) const { return kind == Tok::Ident && text == kw; }
};

class Lexer {
public:
  Lexer(const llvm::MemoryBuffer *buf)
      : cur(buf->getBufferStart()), end(buf->getBufferEnd()) {}

  Token next() {
    notes.clear();
    skipTrivia();
    Token t;
    t.notes = std::move(notes);
    t.loc = llvm::SMLoc::getFromPointer(cur);
    if (cur >= end) {
      t.kind = Tok::Eof;
      return t;
    }
    const char *start = cur;
    char c = *cur++;
    auto make = [&](Tok k) {
      t.kind = k;
      t.text = llvm::StringRef(start, cur - start);
      return t;
    };
    switch (c) {
    case '(': return make(Tok::LParen);
    case ')': return make(Tok::RParen);
    case '[': return make(Tok::LBracket);
    case ']': return make(Tok::RBracket);
    case '{': return make(Tok::LBrace);
    case '}': return make(Tok::RBrace);
    case '>': return make(Tok::Greater);
    case ',': return make(Tok::Comma);
    case ':': return make(Tok::Colon);
    case '=': return make(Tok::Equal);
    case '*': return make(Tok::Star);
    case '<':
      if (cur < end && *cur == '-') {
        ++cur;
        return make(Tok::LArrow);
      }
      return make(Tok::Less);
    case '-':
      if (cur < end && *cur == '>') {
        ++cur;
        return make(Tok::RArrow);
      }
      return make(Tok::Minus);
    case '+':
      if (cur < end && *cur == ':') {
        ++cur;
        return make(Tok::PlusColon);
      }
      return make(Tok::Plus);
    case '%':
    case '@': {
      const char *nameStart = cur;
      cur = scan::skipWhile(cur, end, scan::isNameChar);
      t.kind = c == '%' ? Tok::ValueRef : Tok::Symbol;
      t.text = llvm::StringRef(nameStart, cur - nameStart);
      if (t.text.empty()) {
        t.kind = Tok::Error;
        t.text = llvm::StringRef(start, 1);
      }
      return t;
    }
    default: break;
    }
    if (llvm::isDigit(c)) {
      bool isFloat;
      cur = scan::scanNumber(start, end, isFloat);
      return make(isFloat ? Tok::Float : Tok::Int);
    }
    if (scan::isIdentStart(c)) {
      cur = scan::skipWhile(cur, end, scan::isNameChar);
      return make(Tok::Ident);
    }
    return make(Tok::Error);
  }

private:
  void skipTrivia() {
    while (cur < end) {
      char c = *cur;
      if (scan::isBlank(c) || c == '\n') {
        ++cur;
      } else if (c == '/' && cur + 1 < end && cur[1] == '/') {
        const char *start = cur;
        cur = scan::skipToEndOfLine(cur, end);
        llvm::StringRef text = llvm::StringRef(start, cur - start).drop_front(2).trim();
        if (text.startswith("["))
          notes.push_back(text.str());
      } else {
        break;
      }
    }
  }

  const char *cur;
  const char *end;
  std::vector<std::string> notes;
};

std::string describe(const Token &t) {
  switch (t.kind) {
  case Tok::Eof: return "end of file";
  case Tok::ValueRef: return "'%" + t.text.str() + "'";
  case Tok::Symbol: return "'@" + t.text.str() + "'";
  case Tok::Error: {
    unsigned char c = t.text.empty() ? 0 : t.text[0];
    if (llvm::isPrint(c))
      return std::string("'") + char(c) + "'";
    return "byte 0x" + llvm::utohexstr(c / 16) + llvm::utohexstr(c % 16);
  }
  default: return "'" + t.text.str() + "'";
  }
}

/// Every op's mnemonic: the structural ops, then the instructions of Ops.def.
std::vector<llvm::StringRef> opNames() {
  std::vector<llvm::StringRef> names = {"alloc", "view", "for"};
  for (Opcode op : allOpcodes())
    names.push_back(opcodeName(op));
  return names;
}

std::string didYouMean(llvm::StringRef name, llvm::ArrayRef<llvm::StringRef> candidates) {
  std::string s = closestName(name, candidates);
  return s.empty() ? "" : "; did you mean '" + s + "'?";
}

//===----------------------------------------------------------------------===//
// Parser
//===----------------------------------------------------------------------===//

class Parser {
public:
  Parser(DiagnosticEngine &diags, const llvm::MemoryBuffer *buf) : diags(diags), lex(buf) {
    consume();
  }

  std::unique_ptr<Module> parseModule() {
    unsigned errorsBefore = diags.errorCount();
    auto module = std::make_unique<Module>();
    std::map<std::string, llvm::SMLoc> kernelNames;
    while (!tok.is(Tok::Eof)) {
      if (!tok.isKeyword("kernel")) {
        error(tok.loc, "expected 'kernel' at top level, found " + describe(tok));
        return nullptr;
      }
      auto kernel = parseKernelDef();
      if (!kernel)
        return nullptr;
      auto [it, inserted] = kernelNames.emplace(kernel->name, kernel->loc);
      if (!inserted) {
        diags.error(kernel->loc, "redefinition of kernel @" + kernel->name);
        diags.note(it->second, "previous definition of @" + kernel->name + " is here");
      }
      module->kernels.push_back(std::move(kernel));
    }
    if (diags.errorCount() != errorsBefore)
      return nullptr;
    return module;
  }

private:
  // --- token helpers ---------------------------------------------------------
  void consume() {
    tok = lex.next();
    if (tok.is(Tok::Error) && !lexErrorReported) {
      lexErrorReported = true;
      diags.error(tok.loc, "unexpected " + describe(tok) + " in input");
    }
  }

  bool error(llvm::SMLoc loc, const llvm::Twine &msg) {
    // One syntax error per parse: later ones are noise from the first. A lexer
    // error has already been reported at the offending byte.
    if (!syntaxErrorReported && !(tok.is(Tok::Error) && lexErrorReported))
      diags.error(loc, msg);
    syntaxErrorReported = true;
    return false;
  }

  bool expect(Tok kind, llvm::StringRef spelling, llvm::StringRef context) {
    if (tok.is(kind)) {
      consume();
      return true;
    }
    return error(tok.loc, "expected '" + spelling + "' " + context + ", found " + describe(tok));
  }

  bool expectKeyword(llvm::StringRef kw, llvm::StringRef context) {
    if (tok.isKeyword(kw)) {
      consume();
      return true;
    }
    return error(tok.loc, "expected '" + kw + "' " + context + ", found " + describe(tok));
  }

  bool parseIdent(std::string &out, llvm::StringRef what) {
    if (!tok.is(Tok::Ident))
      return error(tok.loc, "expected " + what + ", found " + describe(tok));
    out = tok.text.str();
    consume();
    return true;
  }

  /// A possibly negative integer literal.
  bool parseInt(int64_t &out, llvm::StringRef what) {
    bool negative = false;
    llvm::SMLoc loc = tok.loc;
    if (tok.is(Tok::Minus)) {
      negative = true;
      consume();
    }
    if (!tok.is(Tok::Int))
      return error(tok.loc, "expected " + what + ", found " + describe(tok));
    uint64_t magnitude;
    if (tok.text.getAsInteger(10, magnitude) ||
        magnitude > uint64_t(INT64_MAX) + (negative ? 1 : 0))
      return error(loc, "integer literal " + llvm::Twine(negative ? "-" : "") + tok.text +
                            " does not fit in 64 bits");
    out = negative ? int64_t(0 - magnitude) : int64_t(magnitude);
    consume();
    return true;
  }

  bool parseFloat(double &out, llvm::StringRef what) {
    bool negative = false;
    if (tok.is(Tok::Minus)) {
      negative = true;
      consume();
    }
    if (tok.is(Tok::Ident)) {
      // inf and nan (also as the printer spells them today: INF.0, nan).
      llvm::StringRef word = tok.text;
      word.consume_back(".0");
      if (word.equals_insensitive("inf") || word.equals_insensitive("nan")) {
        out = word.equals_insensitive("inf") ? std::numeric_limits<double>::infinity()
                                             : std::numeric_limits<double>::quiet_NaN();
        if (negative)
          out = -out;
        consume();
        return true;
      }
    }
    if (!tok.is(Tok::Int) && !tok.is(Tok::Float))
      return error(tok.loc, "expected " + what + ", found " + describe(tok));
    if (tok.text.getAsDouble(out, /*AllowInexact=*/true))
      return error(tok.loc, "malformed number " + describe(tok));
    if (negative)
      out = -out;
    consume();
    return true;
  }

  // --- kernels ----------------------------------------------------------------
  std::unique_ptr<Kernel> parseKernelDef() {
    auto kernel = std::make_unique<Kernel>();
    k = kernel.get();
    defined.clear();
    visible.clear();
    scopes.clear();
    scopes.emplace_back();
    k->loc = tok.loc;
    k->notes = tok.notes;
    consume(); // 'kernel'
    if (!tok.is(Tok::Symbol)) {
      error(tok.loc, "expected kernel name '@name' after 'kernel', found " + describe(tok));
      return nullptr;
    }
    k->name = tok.text.str();
    consume();
    if (!expect(Tok::LParen, "(", "before the kernel's input arguments") ||
        !parseArgs(TensorRole::Input) ||
        !expect(Tok::RArrow, "->", "between the kernel's inputs and outputs") ||
        !expect(Tok::LParen, "(", "before the kernel's output arguments") ||
        !parseArgs(TensorRole::Output))
      return nullptr;
    if (tok.isKeyword("attributes") && !parseAttributes(k->blockParams, "kernel"))
      return nullptr;
    if (!tok.is(Tok::LBrace)) {
      error(tok.loc, "expected '{' to begin the kernel body, found " + describe(tok));
      return nullptr;
    }
    if (!parseBlock(k->body, 0))
      return nullptr;
    return kernel;
  }

  /// `%a: type, %b: type)` — the closing paren included.
  bool parseArgs(TensorRole role) {
    if (tok.is(Tok::RParen)) {
      consume();
      return true;
    }
    while (true) {
      if (!tok.is(Tok::ValueRef))
        return error(tok.loc, "expected argument name '%name', found " + describe(tok));
      Token nameTok = tok;
      consume();
      if (!expect(Tok::Colon, ":", "after argument name"))
        return false;
      TensorType type;
      if (!parseType(type))
        return false;
      Value *v = define(ValueKind::Argument, nameTok);
      v->type = type;
      v->role = role;
      k->args.push_back(v);
      if (tok.is(Tok::Comma)) {
        consume();
        continue;
      }
      return expect(Tok::RParen, ")", "after the argument list");
    }
  }

  /// `attributes {block = {m = 512, ...}}` of a kernel or a loop (`what`).
  bool parseAttributes(BlockConfig &block, llvm::StringRef what) {
    consume(); // 'attributes'
    if (!expect(Tok::LBrace, "{", "after 'attributes'"))
      return false;
    if (tok.is(Tok::RBrace)) {
      consume();
      return true;
    }
    bool sawBlock = false;
    while (true) {
      std::string name;
      llvm::SMLoc loc = tok.loc;
      if (!parseIdent(name, "attribute name"))
        return false;
      if (name != "block")
        return error(loc, "unknown " + what + " attribute '" + name + "'; expected 'block'");
      if (sawBlock)
        return error(loc, "duplicate " + what + " attribute 'block'");
      sawBlock = true;
      if (!expect(Tok::Equal, "=", "after attribute name") ||
          !expect(Tok::LBrace, "{", "to begin the block parameters"))
        return false;
      if (!tok.is(Tok::RBrace)) {
        while (true) {
          std::string param;
          llvm::SMLoc ploc = tok.loc;
          int64_t value;
          if (!parseIdent(param, "block parameter name") ||
              !expect(Tok::Equal, "=", "after block parameter name") ||
              !parseInt(value, "integer block parameter value"))
            return false;
          if (!block.insert(param, value))
            return error(ploc, "duplicate block parameter '" + param + "'");
          if (!tok.is(Tok::Comma))
            break;
          consume();
        }
      }
      if (!expect(Tok::RBrace, "}", "after the block parameters"))
        return false;
      if (!tok.is(Tok::Comma))
        break;
      consume();
    }
    return expect(Tok::RBrace, "}", "after the attributes");
  }

  // --- types ------------------------------------------------------------------
  bool parseType(TensorType &type) {
    if (!tok.is(Tok::Ident))
      return error(tok.loc, "expected a type such as 'sbuf<bf16, [K:128, N:512]>', found " +
                                describe(tok));
    auto space = parseMemSpace(tok.text);
    if (!space) {
      std::string hint = didYouMean(tok.text, {"hbm", "sbuf", "psum"});
      return error(tok.loc, "unknown memory space '" + tok.text + "'" +
                                (hint.empty() ? "; expected hbm, sbuf or psum" : hint));
    }
    type.space = *space;
    consume();
    if (!expect(Tok::Less, "<", "after the memory space"))
      return false;
    std::string dtypes = alternatives(namesOf(allDTypes(), dtypeName));
    if (!tok.is(Tok::Ident))
      return error(tok.loc, "expected a dtype (" + dtypes + "), found " + describe(tok));
    auto dtype = parseDType(tok.text);
    if (!dtype)
      return error(tok.loc, "unknown dtype '" + tok.text + "'; expected " + dtypes);
    type.dtype = *dtype;
    consume();
    if (!expect(Tok::Comma, ",", "after the dtype") ||
        !expect(Tok::LBracket, "[", "to begin the dimension list"))
      return false;
    if (!tok.is(Tok::RBracket)) {
      while (true) {
        Dim dim;
        if (!parseIdent(dim.label, "dimension label such as 'K'") ||
            !expect(Tok::Colon, ":", "after the dimension label") ||
            !parseInt(dim.size, "dimension size"))
          return false;
        type.dims.push_back(dim);
        if (type.dims.size() > 16)
          return error(tok.loc, "too many dimensions (at most 16)");
        if (!tok.is(Tok::Comma))
          break;
        consume();
      }
    }
    return expect(Tok::RBracket, "]", "after the dimension list") &&
           expect(Tok::Greater, ">", "to close the type");
  }

  // --- blocks and ops ---------------------------------------------------------
  /// `{ op* }` with the current token at '{'.
  bool parseBlock(Block &block, unsigned depth) {
    if (depth >= kMaxNesting)
      return error(tok.loc, "loops nested too deeply (more than " + llvm::Twine(kMaxNesting) +
                                " levels)");
    consume(); // '{'
    while (!tok.is(Tok::RBrace)) {
      if (tok.is(Tok::Eof))
        return error(tok.loc, "expected '}' to close the block, found end of file");
      std::unique_ptr<Op> op;
      if (!parseOp(op, depth))
        return false;
      block.ops.push_back(std::move(op));
    }
    consume(); // '}'
    return true;
  }

  bool parseOp(std::unique_ptr<Op> &out, unsigned depth) {
    if (tok.is(Tok::ValueRef))
      return parseAlloc(out);
    if (!tok.is(Tok::Ident))
      return error(tok.loc, "expected an op, found " + describe(tok));
    llvm::StringRef name = tok.text;
    llvm::SMLoc loc = tok.loc;
    if (name == "for")
      return parseFor(out, depth);
    if (name == "alloc")
      return error(loc, "alloc needs a result: '%name = alloc <type>'");
    std::optional<Opcode> opcode = parseOpcode(name);
    if (!opcode) {
      std::vector<llvm::StringRef> names = opNames();
      std::string hint = didYouMean(name, names);
      return error(loc, "unknown op '" + name + "'" +
                            (hint.empty() ? "; expected one of " + llvm::join(names, ", ") : hint));
    }
    consume();
    switch (*opcode) {
    case Opcode::Dma: return parseDma(out, loc);
    case Opcode::Matmul: return parseMatmul(out, loc);
    case Opcode::Transpose: return parseUnary<TransposeOp>(out, loc);
    case Opcode::Activation: return parseActivation(out, loc);
    case Opcode::TensorTensor: return parseTensorTensor(out, loc);
    case Opcode::TensorScalar: return parseTensorScalar(out, loc);
    case Opcode::Copy: return parseUnary<CopyOp>(out, loc);
    case Opcode::Memset: return parseMemset(out, loc);
    case Opcode::TensorReduce: return parseTensorReduce(out, loc);
    case Opcode::Iota: return parseIota(out, loc);
    case Opcode::AffineSelect: return parseAffineSelect(out, loc);
    case Opcode::TensorTensorScan: return parseTensorScan(out, loc);
    case Opcode::BnStats: return parseUnary<BnStatsOp>(out, loc);
    case Opcode::BnAggr: return parseUnary<BnAggrOp>(out, loc);
    case Opcode::TensorPartitionReduce: return parseUnary<TensorPartitionReduceOp, true>(out, loc);
    }
    return false;
  }

  bool parseAlloc(std::unique_ptr<Op> &out) {
    Token nameTok = tok;
    consume();
    if (!expect(Tok::Equal, "=", "after the result name"))
      return false;
    if (tok.isKeyword("view"))
      return parseView(out, nameTok);
    if (!tok.isKeyword("alloc")) {
      if (tok.is(Tok::Ident)) {
        std::string hint = closestName(tok.text, {llvm::StringRef("alloc"), llvm::StringRef("view")});
        if (!hint.empty())
          return error(tok.loc, "unknown op '" + tok.text + "'; did you mean '" + hint + "'?");
      }
      return error(tok.loc, "expected 'alloc' or 'view' after '%" + nameTok.text +
                                " =' (only they define a tensor), found " + describe(tok));
    }
    consume();
    auto op = std::make_unique<AllocOp>();
    op->loc = nameTok.loc;
    TensorType type;
    if (!parseType(type))
      return false;
    if (tok.isKeyword("bufs")) {
      consume();
      if (!parseInt(op->bufs, "buffer count after 'bufs'"))
        return false;
    }
    if (tok.isKeyword("addr")) {
      consume();
      int64_t addr;
      if (!parseInt(addr, "byte offset after 'addr'"))
        return false;
      op->address = addr;
    }
    bool spill = false;
    if (tok.isKeyword("spill")) {
      consume();
      spill = true;
    }
    Value *v = define(ValueKind::Buffer, nameTok);
    v->type = type;
    v->role = spill ? TensorRole::Spill : TensorRole::Scratch;
    v->def = op.get();
    op->result = v;
    out = std::move(op);
    return true;
  }

  /// `%name = view %source as [L0, L1, ...]`: the source's type relabelled.
  bool parseView(std::unique_ptr<Op> &out, const Token &nameTok) {
    consume(); // 'view'
    auto op = std::make_unique<ViewOp>();
    op->loc = nameTok.loc;
    if (!tok.is(Tok::ValueRef))
      return error(tok.loc, "expected the viewed tensor '%name' after 'view', found " + describe(tok));
    Token sourceTok = tok;
    op->source = lookup(sourceTok, ValueKind::Buffer);
    consume();
    std::vector<std::string> labels;
    if (!expectKeyword("as", "after the viewed tensor") ||
        !expect(Tok::LBracket, "[", "to begin the view's dimension labels"))
      return false;
    while (true) {
      std::string label;
      if (!parseIdent(label, "dimension label"))
        return false;
      labels.push_back(label);
      if (!tok.is(Tok::Comma))
        break;
      consume();
    }
    if (!expect(Tok::RBracket, "]", "to close the view's dimension labels"))
      return false;
    Value *v = define(ValueKind::Buffer, nameTok);
    v->role = TensorRole::Input;
    v->def = op.get();
    op->result = v;
    if (op->source) {
      v->type = op->source->type;
      if (labels.size() != v->type.dims.size())
        return error(sourceTok.loc, "view of %" + sourceTok.text + " names " +
                                        llvm::Twine(labels.size()) + " dimension labels but the "
                                        "tensor has rank " + llvm::Twine(v->type.dims.size()));
      for (size_t i = 0; i < labels.size(); ++i)
        v->type.dims[i].label = labels[i];
    }
    out = std::move(op);
    return true;
  }

  bool parseFor(std::unique_ptr<Op> &out, unsigned depth) {
    auto op = std::make_unique<ForOp>();
    op->loc = tok.loc;
    consume(); // 'for'
    if (!tok.is(Tok::ValueRef))
      return error(tok.loc, "expected loop variable '%name' after 'for', found " + describe(tok));
    Token ivTok = tok;
    consume();
    if (!expect(Tok::Equal, "=", "after the loop variable") || !parseExpr(op->lo) ||
        !expectKeyword("to", "after the loop's lower bound") || !parseExpr(op->hi) ||
        !expectKeyword("step", "after the loop's upper bound") ||
        !parseInt(op->step, "integer step"))
      return false;
    if (tok.isKeyword("parallel")) {
      consume();
      op->parallel = true;
    }
    if (tok.isKeyword("attributes") && !parseAttributes(op->block, "loop"))
      return false;
    if (!tok.is(Tok::LBrace))
      return error(tok.loc, "expected '{' to begin the loop body, found " + describe(tok));
    // The loop variable is visible in the body only (not in its own bounds).
    Value *iv = define(ValueKind::LoopVar, ivTok, /*makeVisible=*/false);
    iv->def = op.get();
    op->iv = iv;
    scopes.emplace_back();
    makeVisible(iv);
    bool ok = parseBlock(op->body, depth + 1);
    for (Value *v : scopes.back())
      visible.erase(v);
    scopes.pop_back();
    out = std::move(op);
    return ok;
  }

  bool parseDma(std::unique_ptr<Op> &out, llvm::SMLoc loc) {
    auto op = std::make_unique<DmaOp>();
    op->loc = loc;
    if (tok.isKeyword("transpose")) {
      consume();
      op->transpose = true;
    }
    if (tok.isKeyword("spill_save")) {
      consume();
      op->tag = DmaTag::SpillSave;
    } else if (tok.isKeyword("spill_reload")) {
      consume();
      op->tag = DmaTag::SpillReload;
    }
    if (!parseAccess(op->dst, "destination") || !parseArrow() || !parseAccess(op->src, "source"))
      return false;
    out = std::move(op);
    return true;
  }

  bool parseArrow() {
    return expect(Tok::LArrow, "<-", "after destination access");
  }

  bool parseComma(llvm::StringRef context) { return expect(Tok::Comma, ",", context); }

  bool parseMatmul(std::unique_ptr<Op> &out, llvm::SMLoc loc) {
    auto op = std::make_unique<MatmulOp>();
    op->loc = loc;
    if (!parseAccess(op->dst, "destination") || !parseArrow() ||
        !parseAccess(op->stationary, "stationary operand") ||
        !parseComma("between matmul's stationary and moving operands") ||
        !parseAccess(op->moving, "moving operand"))
      return false;
    if (tok.isKeyword("accumulate")) {
      consume();
      op->accumulate = true;
    } else if (tok.isKeyword("reset")) {
      consume();
      if (!expect(Tok::LParen, "(", "after 'reset'"))
        return false;
      while (true) {
        if (!tok.is(Tok::ValueRef))
          return error(tok.loc, "expected a loop variable in reset(...), found " + describe(tok));
        Value *v = lookup(tok, ValueKind::LoopVar);
        if (v)
          op->resetOn.push_back(v);
        consume();
        if (!tok.is(Tok::Comma))
          break;
        consume();
      }
      if (!expect(Tok::RParen, ")", "to close reset(...)"))
        return false;
    }
    out = std::move(op);
    return true;
  }

  /// `[ALU] D <- S` into a new OpT held by `out` (with `Alu`, its `alu` first); null on an error.
  template <typename OpT, bool Alu = false> OpT *parseUnaryInto(std::unique_ptr<Op> &out, llvm::SMLoc loc) {
    auto op = std::make_unique<OpT>();
    op->loc = loc;
    if constexpr (Alu) {
      if (!parseAlu(op->alu))
        return nullptr;
    }
    if (!parseAccess(op->dst, "destination") || !parseArrow() || !parseAccess(op->src, "source"))
      return nullptr;
    OpT *raw = op.get();
    out = std::move(op);
    return raw;
  }

  template <typename OpT, bool Alu = false> bool parseUnary(std::unique_ptr<Op> &out, llvm::SMLoc loc) {
    return parseUnaryInto<OpT, Alu>(out, loc) != nullptr;
  }

  bool parseActivation(std::unique_ptr<Op> &out, llvm::SMLoc loc) {
    auto op = std::make_unique<ActivationOp>();
    op->loc = loc;
    std::vector<llvm::StringRef> fns = namesOf(allActFns(), actFnName);
    if (!tok.is(Tok::Ident))
      return error(tok.loc, "expected an activation function (" + llvm::join(fns, ", ") +
                                "), found " + describe(tok));
    auto fn = parseActFn(tok.text);
    if (!fn) {
      std::string hint = didYouMean(tok.text, fns);
      return error(tok.loc, "unknown activation function '" + tok.text + "'" +
                                (hint.empty() ? "; expected " + alternatives(fns) : hint));
    }
    op->fn = *fn;
    consume();
    if (!parseAccess(op->dst, "destination") || !parseArrow() || !parseAccess(op->src, "source"))
      return false;
    // `scale` and `bias` (a number or a [P, 1] tile) and `accumulate`, each
    // at most once, in any order.
    bool sawScale = false, sawBias = false, sawAccumulate = false;
    while (tok.isKeyword("scale") || tok.isKeyword("bias") || tok.isKeyword("accumulate")) {
      llvm::StringRef key = tok.text;
      llvm::SMLoc keyLoc = tok.loc;
      consume();
      bool &seen = key == "scale" ? sawScale : key == "bias" ? sawBias : sawAccumulate;
      if (seen)
        return error(keyLoc, "duplicate '" + key + "' on activation");
      seen = true;
      if (key == "accumulate") {
        op->accumulator.emplace();
        if (!parseAccess(*op->accumulator, "accumulator"))
          return false;
        continue;
      }
      std::optional<Access> &tile = key == "scale" ? op->scaleTile : op->biasTile;
      if (tok.is(Tok::ValueRef)) {
        tile.emplace();
        if (!parseAccess(*tile, key.str() + " tile"))
          return false;
      } else if (!parseFloat(key == "scale" ? op->scale : op->bias,
                             "a number or a [P, 1] tile after '" + key.str() + "'")) {
        return false;
      }
    }
    out = std::move(op);
    return true;
  }

  bool parseAlu(AluOp &alu) {
    std::vector<llvm::StringRef> ops = namesOf(allAluOps(), aluOpName);
    if (!tok.is(Tok::Ident))
      return error(tok.loc, "expected an ALU operation (" + llvm::join(ops, ", ") + "), found " +
                                describe(tok));
    auto parsed = parseAluOp(tok.text);
    if (!parsed) {
      std::string hint = didYouMean(tok.text, ops);
      return error(tok.loc, "unknown ALU operation '" + tok.text + "'" +
                                (hint.empty() ? "; expected " + alternatives(ops) : hint));
    }
    alu = *parsed;
    consume();
    return true;
  }

  bool parseTensorTensor(std::unique_ptr<Op> &out, llvm::SMLoc loc) {
    auto op = std::make_unique<TensorTensorOp>();
    op->loc = loc;
    if (!parseAlu(op->alu) || !parseAccess(op->dst, "destination") || !parseArrow() ||
        !parseAccess(op->lhs, "first operand") ||
        !parseComma("between tensor_tensor's operands") ||
        !parseAccess(op->rhs, "second operand"))
      return false;
    out = std::move(op);
    return true;
  }

  bool parseTensorScalar(std::unique_ptr<Op> &out, llvm::SMLoc loc) {
    auto op = std::make_unique<TensorScalarOp>();
    op->loc = loc;
    if (!parseAlu(op->alu) || !parseAccess(op->dst, "destination") || !parseArrow() ||
        !parseAccess(op->src, "source") || !parseComma("before tensor_scalar's scalar"))
      return false;
    if (tok.is(Tok::ValueRef)) {
      op->scalarTile.emplace();
      if (!parseAccess(*op->scalarTile, "scalar tile"))
        return false;
    } else if (!parseFloat(op->scalar, "a scalar operand (a number or a [P, 1] tile)")) {
      return false;
    }
    if (tok.isKeyword("reverse")) {
      consume();
      op->reverse = true;
    }
    out = std::move(op);
    return true;
  }

  /// `tensor_tensor_scan OP0 OP1 D <- A, B initial (NUMBER | TILE)`.
  bool parseTensorScan(std::unique_ptr<Op> &out, llvm::SMLoc loc) {
    auto op = std::make_unique<TensorTensorScanOp>();
    op->loc = loc;
    if (!parseAlu(op->op0) || !parseAlu(op->op1) || !parseAccess(op->dst, "destination") || !parseArrow() ||
        !parseAccess(op->first, "first operand") || !parseComma("between tensor_tensor_scan's operands") ||
        !parseAccess(op->second, "second operand") ||
        !expectKeyword("initial", "after the operands (the value before the first element)"))
      return false;
    if (tok.is(Tok::ValueRef)) {
      op->initialTile.emplace();
      if (!parseAccess(*op->initialTile, "initial tile"))
        return false;
    } else if (!parseFloat(op->initial, "an initial value (a number or a [P, 1] tile)")) {
      return false;
    }
    out = std::move(op);
    return true;
  }

  bool parseTensorReduce(std::unique_ptr<Op> &out, llvm::SMLoc loc) {
    if (!parseUnaryInto<TensorReduceOp, true>(out, loc))
      return false;
    if (tok.isKeyword("axis")) {
      consume();
      llvm::SMLoc axisLoc = tok.loc;
      int64_t axis;
      if (!parseInt(axis, "the reduced axis"))
        return false;
      if (axis != 1)
        return error(axisLoc, "tensor_reduce reduces along the free axis (axis 1) only, not axis " +
                                  llvm::Twine(axis) + "; a sum over partitions is a matmul against "
                                  "ones (or a transpose, then a reduce)");
    }
    return true;
  }

  /// `offset EXPR partition INT free INT`.
  bool parseAffineIndex(AffineIndex &index) {
    return expectKeyword("offset", "before the affine index's offset") &&
           parseExpr(index.offset) &&
           expectKeyword("partition", "after the offset (the step per partition)") &&
           parseInt(index.partition, "the integer step per partition") &&
           expectKeyword("free", "after the partition step (the step per free element)") &&
           parseInt(index.free, "the integer step per free element");
  }

  bool parseIota(std::unique_ptr<Op> &out, llvm::SMLoc loc) {
    auto op = std::make_unique<IotaOp>();
    op->loc = loc;
    if (!parseAccess(op->dst, "destination") || !parseAffineIndex(op->index))
      return false;
    out = std::move(op);
    return true;
  }

  bool parseAffineSelect(std::unique_ptr<Op> &out, llvm::SMLoc loc) {
    auto op = std::make_unique<AffineSelectOp>();
    op->loc = loc;
    if (!parseAlu(op->cmp) || !parseAccess(op->dst, "destination") || !parseArrow() ||
        !parseAccess(op->src, "source") || !parseAffineIndex(op->index) ||
        !expectKeyword("fill", "after the affine index (the value where the comparison fails)") ||
        !parseFloat(op->fill, "the fill value"))
      return false;
    out = std::move(op);
    return true;
  }

  bool parseMemset(std::unique_ptr<Op> &out, llvm::SMLoc loc) {
    auto op = std::make_unique<MemsetOp>();
    op->loc = loc;
    if (!parseAccess(op->dst, "destination") || !parseComma("before memset's value") ||
        !parseFloat(op->value, "a value to fill with"))
      return false;
    out = std::move(op);
    return true;
  }

  // --- accesses and index expressions -----------------------------------------
  bool parseAccess(Access &access, llvm::StringRef role) {
    if (!tok.is(Tok::ValueRef))
      return error(tok.loc, "expected " + role + " access '%name[...]', found " + describe(tok));
    access.loc = tok.loc;
    access.base = lookup(tok, ValueKind::Buffer);
    consume();
    if (!expect(Tok::LBracket, "[", "after the accessed tensor's name"))
      return false;
    if (!tok.is(Tok::RBracket)) {
      while (true) {
        Index index;
        if (!parseExpr(index.start))
          return false;
        if (tok.is(Tok::PlusColon)) {
          consume();
          IndexExpr extent;
          if (!parseExpr(extent) || !parseStep(index.step))
            return false;
          index.extent = extent;
          while (tok.is(Tok::PlusColon)) {
            consume();
            SubRange r;
            if (!parseInt(r.extent, "the extent of a further range (an integer)") || !parseStep(r.step))
              return false;
            index.more.push_back(r);
            if (index.more.size() > 8)
              return error(tok.loc, "too many ranges on one dimension (at most 9)");
          }
        }
        access.indices.push_back(index);
        if (access.indices.size() > 16)
          return error(tok.loc, "too many indices (at most 16)");
        if (!tok.is(Tok::Comma))
          break;
        consume();
      }
    }
    if (!expect(Tok::RBracket, "]", "to close the access"))
      return false;
    return parseOrder(access);
  }

  /// `step N` after a range (1 without it).
  bool parseStep(int64_t &step) {
    if (!tok.isKeyword("step"))
      return true;
    consume();
    return parseInt(step, "the range's step (an integer)");
  }

  /// `order (i, j, ...)` after an access: the tile's dimensions as ranges in
  /// written order (the verifier checks it is a permutation).
  bool parseOrder(Access &access) {
    if (!tok.isKeyword("order"))
      return true;
    consume();
    if (!expect(Tok::LParen, "(", "after 'order'"))
      return false;
    while (true) {
      int64_t i;
      llvm::SMLoc loc = tok.loc;
      if (!parseInt(i, "a range number"))
        return false;
      if (i < 0 || i > 64)
        return error(loc, "range number " + llvm::Twine(i) + " out of range");
      access.order.push_back(unsigned(i));
      if (!tok.is(Tok::Comma))
        break;
      consume();
    }
    return expect(Tok::RParen, ")", "to close the order");
  }

  bool parseExpr(IndexExpr &out) {
    exprNodes = 0;
    return parseSum(out, 0);
  }

  bool countNode(llvm::SMLoc loc) {
    if (++exprNodes > kMaxExprNodes)
      return error(loc, "index expression too large (more than " + llvm::Twine(kMaxExprNodes) +
                            " operators)");
    return true;
  }

  bool overflow(llvm::SMLoc loc) {
    return error(loc, "integer overflow in constant index expression");
  }

  bool parseSum(IndexExpr &out, unsigned depth) {
    if (!parseProduct(out, depth))
      return false;
    while (tok.is(Tok::Plus) || tok.is(Tok::Minus)) {
      bool isAdd = tok.is(Tok::Plus);
      llvm::SMLoc loc = tok.loc;
      consume();
      IndexExpr rhs;
      if (!countNode(loc) || !parseProduct(rhs, depth))
        return false;
      if (out.isConst() && rhs.isConst()) {
        int64_t r;
        if (isAdd ? __builtin_add_overflow(out.constValue(), rhs.constValue(), &r)
                  : __builtin_sub_overflow(out.constValue(), rhs.constValue(), &r))
          return overflow(loc);
        out = r;
      } else {
        out = isAdd ? out + rhs : out - rhs;
      }
    }
    return true;
  }

  bool parseProduct(IndexExpr &out, unsigned depth) {
    if (!parseAtom(out, depth))
      return false;
    while (tok.is(Tok::Star)) {
      llvm::SMLoc loc = tok.loc;
      consume();
      IndexExpr rhs;
      if (!countNode(loc) || !parseAtom(rhs, depth))
        return false;
      if (!rhs.isConst() && !out.isConst())
        return error(loc, "index expressions may only be multiplied by a constant");
      IndexExpr var = rhs.isConst() ? out : rhs;
      int64_t c = rhs.isConst() ? rhs.constValue() : out.constValue();
      if (var.isConst()) {
        int64_t r;
        if (__builtin_mul_overflow(var.constValue(), c, &r))
          return overflow(loc);
        out = r;
      } else {
        out = var * c;
      }
    }
    return true;
  }

  bool parseAtom(IndexExpr &out, unsigned depth) {
    if (depth >= kMaxNesting)
      return error(tok.loc, "index expression nested too deeply");
    switch (tok.kind) {
    case Tok::Int: {
      int64_t v;
      if (!parseInt(v, "integer"))
        return false;
      out = v;
      return true;
    }
    case Tok::Minus: {
      llvm::SMLoc loc = tok.loc;
      consume();
      IndexExpr operand;
      if (!countNode(loc) || !parseAtom(operand, depth + 1))
        return false;
      if (operand.isConst()) {
        if (operand.constValue() == INT64_MIN)
          return overflow(loc);
        out = -operand.constValue();
      } else {
        out = IndexExpr(0) - operand;
      }
      return true;
    }
    case Tok::ValueRef: {
      Value *v = lookup(tok, ValueKind::LoopVar);
      out = v ? IndexExpr::var(v) : IndexExpr(0);
      consume();
      return true;
    }
    case Tok::LParen: {
      consume();
      if (!parseSum(out, depth + 1))
        return false;
      return expect(Tok::RParen, ")", "to close the parenthesised expression");
    }
    case Tok::Ident:
      if (tok.text == "min") {
        llvm::SMLoc loc = tok.loc;
        consume();
        IndexExpr a, b;
        if (!countNode(loc) || !expect(Tok::LParen, "(", "after 'min'") ||
            !parseSum(a, depth + 1) || !parseComma("between min's operands") ||
            !parseSum(b, depth + 1) || !expect(Tok::RParen, ")", "to close min(...)"))
          return false;
        out = min(a, b);
        return true;
      }
      [[fallthrough]];
    default:
      return error(tok.loc, "expected an index expression (integer, %loopvar, min(...) or "
                            "'('), found " + describe(tok));
    }
  }

  // --- names --------------------------------------------------------------------
  Value *define(ValueKind kind, const Token &nameTok, bool visibleNow = true) {
    Value *v = k->newValue(kind, nameTok.text.str());
    v->loc = nameTok.loc;
    auto [it, inserted] = defined.emplace(v->name, v);
    if (!inserted) {
      diags.error(nameTok.loc, "redefinition of %" + v->name);
      diags.note(it->second->loc, "previous definition of %" + v->name + " is here");
    }
    if (visibleNow)
      makeVisible(v);
    return v;
  }

  void makeVisible(Value *v) {
    visible.insert(v);
    scopes.back().push_back(v);
  }

  /// Resolves a use of `%name`; `want` is Buffer for accesses (arguments
  /// qualify) and LoopVar in expressions. Reports and returns null on error.
  Value *lookup(const Token &use, ValueKind want) {
    std::string name = use.text.str();
    auto it = defined.find(name);
    if (it == defined.end()) {
      std::vector<std::string> candidates;
      for (Value *v : visible)
        if ((v->kind == ValueKind::LoopVar) == (want == ValueKind::LoopVar))
          candidates.push_back(v->name);
      std::sort(candidates.begin(), candidates.end());
      std::string hint = closestName(name, candidates);
      diags.error(use.loc, "use of undefined value %" + name +
                               (hint.empty() ? "" : "; did you mean %" + hint + "?"));
      return nullptr;
    }
    Value *v = it->second;
    if (!visible.count(v)) {
      diags.error(use.loc, "use of %" + name + " outside the block that defines it");
      diags.note(v->loc, "%" + name + " is defined here");
      return nullptr;
    }
    bool isLoopVar = v->kind == ValueKind::LoopVar;
    if (want == ValueKind::LoopVar && !isLoopVar) {
      diags.error(use.loc, "%" + name + " is a tensor; index expressions may only use loop "
                                        "variables");
      return nullptr;
    }
    if (want != ValueKind::LoopVar && isLoopVar) {
      diags.error(use.loc, "%" + name + " is a loop variable, not a tensor or buffer");
      return nullptr;
    }
    return v;
  }

  DiagnosticEngine &diags;
  Lexer lex;
  Token tok;
  bool lexErrorReported = false;
  bool syntaxErrorReported = false;
  unsigned exprNodes = 0;

  Kernel *k = nullptr;
  std::map<std::string, Value *> defined;
  std::set<Value *> visible;
  std::vector<std::vector<Value *>> scopes;
};

} // namespace

std::unique_ptr<Module> parseBuffer(unsigned bufferId, DiagnosticEngine &diags,
                                    const TileGeometry &geometry) {
  const llvm::MemoryBuffer *buf = diags.sourceMgr().getMemoryBuffer(bufferId);
  auto module = Parser(diags, buf).parseModule();
  if (module)
    for (auto &kernel : module->kernels)
      kernel->geometry = geometry;
  return module;
}

std::unique_ptr<Module> parseModule(DiagnosticEngine &diags, const TileGeometry &geometry) {
  llvm::SourceMgr &sm = diags.sourceMgr();
  if (sm.getNumBuffers() == 0) {
    diags.error(llvm::SMLoc(), "no input to parse");
    return nullptr;
  }
  return parseBuffer(sm.getMainFileID(), diags, geometry);
}

std::unique_ptr<Module> parseModuleString(llvm::StringRef text, llvm::StringRef bufferName,
                                          DiagnosticEngine &diags,
                                          const TileGeometry &geometry) {
  unsigned id = diags.sourceMgr().AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, bufferName), llvm::SMLoc());
  return parseBuffer(id, diags, geometry);
}

std::unique_ptr<Kernel> parseKernel(DiagnosticEngine &diags, const TileGeometry &geometry) {
  auto module = parseModule(diags, geometry);
  if (!module)
    return nullptr;
  if (module->kernels.size() != 1) {
    llvm::SMLoc loc = module->kernels.size() > 1 ? module->kernels[1]->loc : llvm::SMLoc();
    diags.error(loc, "expected exactly one kernel, found " +
                         llvm::Twine(module->kernels.size()));
    return nullptr;
  }
  return std::move(module->kernels.front());
}

} // namespace tessel::ir

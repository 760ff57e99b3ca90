//===- runtime/ProgramParser.cpp - .tasm text -> Program ------------------===//
//
// A hand-written lexer and recursive-descent parser for the grammar in
// docs/tasm.md. Statements are line-oriented (an instruction ends at the end
// of its line). Errors are located with llvm::SourceMgr (file:line:col, the
// line and a caret); the parser stops at the first syntax error, then the
// structural verifier (Program.cpp) reports all of its findings.
//
//===----------------------------------------------------------------------===//
#include "runtime/Program.h"
#include "runtime/Target.h"
#include "support/Registry.h"
#include "support/Scan.h"
#include "support/Suggest.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <cmath>
#include <limits>

using namespace llvm;

namespace tessel::runtime {
namespace {

enum class Tok {
  Eof, Newline, Ident, Var, Int, Float,
  LBracket, RBracket, LParen, RParen, LBrace, RBrace,
  Comma, Colon, Equal, Star, Plus, Minus, Arrow, String, Error
};

struct Token {
  Tok kind = Tok::Eof;
  StringRef text;
  SMLoc loc() const { return SMLoc::getFromPointer(text.data()); }
};

/// Integers in programs are bounded so that no arithmetic on them can overflow.
constexpr int64_t kMaxInt = int64_t(1) << 40;
constexpr unsigned kMaxDepth = 200;

bool fitsLimit(__int128 v) { return v <= kMaxInt && v >= -kMaxInt; }

class Parser {
public:
  Parser(StringRef text, StringRef fileName) {
    bufId = sm.AddNewSourceBuffer(MemoryBuffer::getMemBufferCopy(text, fileName), SMLoc());
    StringRef b = sm.getMemoryBuffer(bufId)->getBuffer();
    cur = b.begin();
    end = b.end();
    prog.fileName = fileName.str();
    next();
  }

  Expected<Program> parse() {
    parseFile();
    if (!failed) {
      unsigned n = verifyProgram(prog, [&](SrcLoc loc, const Twine &msg) { errorAt(loc, msg); });
      (void)n;
    }
    if (!errText.empty()) {
      if (errText.back() == '\n')
        errText.pop_back();
      return createStringError(inconvertibleErrorCode(), errText);
    }
    return std::move(prog);
  }

private:
  SourceMgr sm;
  unsigned bufId = 0;
  const char *cur = nullptr, *end = nullptr;
  Token tok;
  bool failed = false;
  std::string errText;
  Program prog;
  std::vector<std::pair<std::string, uint32_t>> scope; // loop variables in scope

  // ---- diagnostics ----
  void report(SMLoc loc, const Twine &msg) {
    raw_string_ostream os(errText);
    sm.PrintMessage(os, loc, SourceMgr::DK_Error, msg);
  }
  bool error(SMLoc loc, const Twine &msg) {
    if (!failed)
      report(loc, msg);
    failed = true;
    tok.kind = Tok::Eof; // stop parsing
    return false;
  }
  bool error(const Twine &msg) { return error(tok.loc(), msg); }
  void errorAt(SrcLoc loc, const Twine &msg) {
    SMLoc l = loc.line ? sm.FindLocForLineAndColumn(bufId, loc.line, loc.col) : SMLoc();
    if (l.isValid())
      report(l, msg);
    else
      errText += (prog.fileName + ": error: " + msg + "\n").str();
  }
  SrcLoc srcLoc(SMLoc l) {
    auto lc = sm.getLineAndColumn(l, bufId);
    return {lc.first, lc.second};
  }

  // ---- lexer ----
  void next() {
    if (failed) {
      tok.kind = Tok::Eof;
      return;
    }
    for (;;) {
      cur = scan::skipWhile(cur, end, scan::isBlank);
      if (cur < end && *cur == '#') {
        cur = scan::skipToEndOfLine(cur, end);
        continue;
      }
      break;
    }
    const char *start = cur;
    auto make = [&](Tok k, const char *e) {
      tok.kind = k;
      tok.text = StringRef(start, e - start);
      cur = e;
    };
    if (cur >= end)
      return make(Tok::Eof, cur);
    char c = *cur;
    if (c == '\n')
      return make(Tok::Newline, cur + 1);
    if (scan::isIdentStart(c))
      return make(Tok::Ident, scan::skipWhile(cur, end, scan::isNameChar));
    if (c == '%') {
      const char *e = scan::skipWhile(cur + 1, end, scan::isNameChar);
      if (e == cur + 1)
        return make(Tok::Error, cur + 1);
      return make(Tok::Var, e);
    }
    if (llvm::isDigit(c)) {
      bool isFloat;
      const char *e = scan::scanNumber(cur, end, isFloat);
      return make(isFloat ? Tok::Float : Tok::Int, e);
    }
    if (c == '"') {
      // A string ends at the next unescaped '"' of its line (escapes are
      // decoded by parseString).
      const char *e = cur + 1;
      while (e < end && *e != '"' && *e != '\n')
        e += *e == '\\' && e + 1 < end && e[1] != '\n' ? 2 : 1;
      if (e >= end || *e != '"')
        return make(Tok::Error, cur + 1);
      return make(Tok::String, e + 1);
    }
    switch (c) {
    case '[': return make(Tok::LBracket, cur + 1);
    case ']': return make(Tok::RBracket, cur + 1);
    case '(': return make(Tok::LParen, cur + 1);
    case ')': return make(Tok::RParen, cur + 1);
    case '{': return make(Tok::LBrace, cur + 1);
    case '}': return make(Tok::RBrace, cur + 1);
    case ',': return make(Tok::Comma, cur + 1);
    case ':': return make(Tok::Colon, cur + 1);
    case '=': return make(Tok::Equal, cur + 1);
    case '*': return make(Tok::Star, cur + 1);
    case '+': return make(Tok::Plus, cur + 1);
    case '-': return make(Tok::Minus, cur + 1);
    case '<':
      if (cur + 1 < end && cur[1] == '-')
        return make(Tok::Arrow, cur + 2);
      break;
    }
    make(Tok::Error, cur + 1);
  }

  /// After `target`: a target name, which may hold '-', '.' and '+' besides
  /// the characters of an identifier (isTargetName; "trn1-small-sbuf").
  bool lexTargetName() {
    const char *start = scan::skipWhile(cur, end, scan::isBlank);
    const char *e = scan::skipWhile(start, end, isTargetNameChar);
    cur = start;
    tok.kind = Tok::Ident;
    tok.text = StringRef(start, e - start);
    if (!isTargetName(tok.text))
      return error("expected the target name (letters, digits, '_', '.', '-' or '+')");
    prog.target = tok.text.str();
    cur = e;
    return true;
  }

  bool expect(Tok k, StringRef what) {
    if (tok.kind != k)
      return error(formatv("expected {0}", what));
    next();
    return true;
  }
  bool isIdent(StringRef s) const { return tok.kind == Tok::Ident && tok.text == s; }
  void skipNewlines() {
    while (tok.kind == Tok::Newline)
      next();
  }
  bool expectEndOfLine() {
    if (tok.kind == Tok::Newline) {
      next();
      return true;
    }
    if (tok.kind == Tok::Eof || tok.kind == Tok::RBrace)
      return true;
    return error("expected end of line");
  }

  bool parseInt(int64_t &v, StringRef what) {
    bool neg = false;
    if (tok.kind == Tok::Minus) {
      neg = true;
      next();
    }
    if (tok.kind != Tok::Int)
      return error(formatv("expected {0}", what));
    if (tok.text.getAsInteger(10, v) || v > kMaxInt)
      return error("integer out of range (the limit is 2^40)");
    if (neg)
      v = -v;
    next();
    return true;
  }

  bool parseNumber(double &v, StringRef what) {
    bool neg = false;
    if (tok.kind == Tok::Minus) {
      neg = true;
      next();
    }
    if (tok.kind == Tok::Int || tok.kind == Tok::Float) {
      std::string s = tok.text.str();
      char *e = nullptr;
      v = std::strtod(s.c_str(), &e);
    } else if (tok.kind == Tok::Ident && tok.text == "inf") {
      v = std::numeric_limits<double>::infinity();
    } else if (tok.kind == Tok::Ident && tok.text == "nan") {
      v = std::numeric_limits<double>::quiet_NaN();
    } else {
      return error(formatv("expected {0}", what));
    }
    if (neg)
      v = -v;
    next();
    return true;
  }

  /// A string token's value: `\\` is a backslash, `\XX` (two hex digits)
  /// the byte XX -- what llvm::printEscapedString writes.
  bool parseString(std::string &out, StringRef what) {
    if (tok.kind == Tok::Error && tok.text == "\"")
      return error("unterminated string (missing '\"' before the end of the line)");
    if (tok.kind != Tok::String)
      return error(formatv("expected {0} (a string in double quotes)", what));
    StringRef body = tok.text.drop_front().drop_back();
    out.clear();
    for (size_t i = 0; i < body.size(); ++i) {
      if (body[i] != '\\') {
        out += body[i];
        continue;
      }
      SMLoc l = SMLoc::getFromPointer(body.data() + i);
      if (i + 1 < body.size() && body[i + 1] == '\\') {
        out += '\\';
        ++i;
        continue;
      }
      unsigned hi, lo;
      if (i + 2 >= body.size() || (hi = llvm::hexDigitValue(body[i + 1])) == ~0U ||
          (lo = llvm::hexDigitValue(body[i + 2])) == ~0U)
        return error(l, "bad escape in a string (expected \\\\ or \\ and two hex digits)");
      out += char(hi * 16 + lo);
      i += 2;
    }
    next();
    return true;
  }

  /// `loc("FILE":LINE[:COL])` after the `loc` keyword: where the instruction
  /// came from in the kernel's source.
  bool parseSourceLoc(SourceLoc &loc) {
    if (!expect(Tok::LParen, "'(' after loc"))
      return false;
    std::string file;
    SMLoc fileLoc = tok.loc();
    if (!parseString(file, "the source file name"))
      return false;
    if (file.empty())
      return error(fileLoc, "empty source file name in loc(...)");
    constexpr int64_t kMaxLine = int64_t(1) << 31;
    int64_t line = 0, col = 0;
    SMLoc lineLoc;
    if (!expect(Tok::Colon, "':' after the source file name"))
      return false;
    lineLoc = tok.loc();
    if (!parseInt(line, "the source line number"))
      return false;
    if (line < 1 || line > kMaxLine)
      return error(lineLoc, "source line number out of range (1 to 2^31)");
    if (tok.kind == Tok::Colon) {
      next();
      SMLoc colLoc = tok.loc();
      if (!parseInt(col, "the source column number"))
        return false;
      if (col < 1 || col > kMaxLine)
        return error(colLoc, "source column number out of range (1 to 2^31)");
    }
    if (!expect(Tok::RParen, "')' to close loc(...)"))
      return false;
    loc.file = prog.sourceFileId(file);
    loc.line = uint32_t(line);
    loc.col = uint32_t(col);
    return true;
  }

  // ---- declarations ----
  bool parseDType(DType &t) {
    // `fp32` is accepted for f32, as NKI spells it.
    std::optional<DType> d = isIdent("fp32") ? DType::F32 : tessel::parseDType(tok.text);
    if (tok.kind != Tok::Ident || !d)
      return error(formatv("expected a dtype ({0})", alternatives(namesOf(allDTypes(), dtypeName))));
    t = *d;
    next();
    return true;
  }

  bool parseShape(std::vector<int64_t> &shape) {
    if (!expect(Tok::LBracket, "'[' to start a shape"))
      return false;
    for (;;) {
      int64_t v;
      SMLoc l = tok.loc();
      if (!parseInt(v, "a dimension size"))
        return false;
      if (v <= 0)
        return error(l, "dimension sizes must be positive");
      shape.push_back(v);
      __int128 total = 1;
      for (int64_t d : shape)
        total *= d;
      if (!fitsLimit(total))
        return error(l, "shape too large (more than 2^40 elements)");
      if (tok.kind == Tok::Comma) {
        next();
        continue;
      }
      return expect(Tok::RBracket, "',' or ']' in a shape");
    }
  }

  bool parseNewName(std::string &name) {
    if (tok.kind != Tok::Var)
      return error("expected a name like %X");
    name = tok.text.drop_front().str();
    if (prog.findTensor(name) >= 0 || prog.findBuffer(name) >= 0)
      return error(formatv("redefinition of %{0}", name));
    next();
    return true;
  }

  bool parseTensorDecl() {
    TensorDecl t;
    t.loc = srcLoc(tok.loc());
    next(); // 'tensor'
    if (!parseNewName(t.name) || !expect(Tok::Colon, "':' after the tensor name") || !parseDType(t.dtype) ||
        !parseShape(t.shape))
      return false;
    if (tok.kind != Tok::Ident)
      return error("expected the tensor's role: input, output, scratch or spill");
    auto role = StringSwitch<Optional<TensorRole>>(tok.text)
                    .Case("input", TensorRole::Input)
                    .Case("output", TensorRole::Output)
                    .Case("scratch", TensorRole::Scratch)
                    .Case("spill", TensorRole::Spill)
                    .Default(None);
    if (!role)
      return error(formatv("unknown tensor role '{0}' (expected input, output, scratch or spill)", tok.text));
    t.role = *role;
    next();
    prog.tensors.push_back(std::move(t));
    return expectEndOfLine();
  }

  bool parseBufferDecl() {
    BufferDecl b;
    b.loc = srcLoc(tok.loc());
    next(); // 'buffer'
    if (!parseNewName(b.name) || !expect(Tok::Colon, "':' after the buffer name"))
      return false;
    if (isIdent("sbuf"))
      b.space = MemSpace::SBUF;
    else if (isIdent("psum"))
      b.space = MemSpace::PSUM;
    else
      return error("expected a memory space (sbuf or psum)");
    next();
    if (!parseDType(b.dtype) || !parseShape(b.shape))
      return false;
    bool haveBufs = false, haveAddr = false;
    while (tok.kind == Tok::Ident) {
      StringRef key = tok.text;
      SMLoc l = tok.loc();
      if (key != "bufs" && key != "addr")
        return error(formatv("unknown buffer attribute '{0}' (expected bufs=N or addr=BYTES)", key));
      next();
      int64_t v;
      if (!expect(Tok::Equal, "'='") || !parseInt(v, "an integer"))
        return false;
      if (key == "bufs") {
        if (haveBufs)
          return error(l, "duplicate 'bufs'");
        if (v < 1)
          return error(l, "bufs must be at least 1");
        haveBufs = true;
        b.bufs = v;
      } else {
        if (haveAddr)
          return error(l, "duplicate 'addr'");
        if (v < 0)
          return error(l, "addr must be non-negative");
        haveAddr = true;
        b.address = v;
      }
    }
    prog.buffers.push_back(std::move(b));
    return expectEndOfLine();
  }

  // ---- expressions ----
  bool lookupVar(StringRef name, SMLoc l, uint32_t &id) {
    for (auto it = scope.rbegin(); it != scope.rend(); ++it)
      if (it->first == name) {
        id = it->second;
        return true;
      }
    if (prog.findTensor(name) >= 0 || prog.findBuffer(name) >= 0)
      return error(l, formatv("%{0} is a tensor or buffer, not a loop variable", name));
    return error(l, formatv("unknown loop variable %{0} (not defined by an enclosing `for`)", name));
  }

  // e *= s, or an error if a coefficient would leave the integer limit.
  bool scaleChecked(AffineExpr &e, int64_t s, SMLoc l) {
    if (!fitsLimit(__int128(e.constant) * s))
      return error(l, "expression value out of range (the limit is 2^40)");
    for (const auto &t : e.terms)
      if (!fitsLimit(__int128(t.second) * s))
        return error(l, "expression coefficient out of range (the limit is 2^40)");
    e.scale(s);
    return true;
  }
  bool addChecked(AffineExpr &e, const AffineExpr &rhs, int64_t s, SMLoc l) {
    if (!fitsLimit(__int128(e.constant) + __int128(rhs.constant) * s))
      return error(l, "expression value out of range (the limit is 2^40)");
    for (const auto &t : rhs.terms) {
      __int128 c = __int128(t.second) * s;
      for (const auto &u : e.terms)
        if (u.first == t.first)
          c += u.second;
      if (!fitsLimit(c))
        return error(l, "expression coefficient out of range (the limit is 2^40)");
    }
    e.add(rhs, s);
    return true;
  }

  struct DepthGuard {
    unsigned &d;
    explicit DepthGuard(unsigned &d) : d(d) { ++d; }
    ~DepthGuard() { --d; }
  };
  unsigned depth = 0;

  bool parseFactor(AffineExpr &e) {
    DepthGuard g(depth);
    if (depth > kMaxDepth)
      return error("expression nested too deeply");
    if (tok.kind == Tok::Int) {
      int64_t v;
      if (tok.text.getAsInteger(10, v) || v > kMaxInt)
        return error("integer out of range (the limit is 2^40)");
      e = AffineExpr::constantExpr(v);
      next();
      return true;
    }
    if (tok.kind == Tok::Var) {
      uint32_t id;
      if (!lookupVar(tok.text.drop_front(), tok.loc(), id))
        return false;
      e = AffineExpr::varExpr(id);
      next();
      return true;
    }
    if (tok.kind == Tok::LParen) {
      next();
      if (!parseAffine(e))
        return false;
      return expect(Tok::RParen, "')'");
    }
    if (tok.kind == Tok::Minus) {
      next();
      if (!parseFactor(e))
        return false;
      e.scale(-1); // |values| <= 2^40 stay in range
      return true;
    }
    return error("expected an integer, a loop variable or '('");
  }

  bool parseTerm(AffineExpr &e) {
    if (!parseFactor(e))
      return false;
    while (tok.kind == Tok::Star) {
      SMLoc l = tok.loc();
      next();
      AffineExpr rhs;
      if (!parseFactor(rhs))
        return false;
      if (rhs.isConstant()) {
        if (!scaleChecked(e, rhs.constant, l))
          return false;
      } else if (e.isConstant()) {
        if (!scaleChecked(rhs, e.constant, l))
          return false;
        e = rhs;
      } else
        return error(l, "product of two loop variables is not affine");
    }
    return true;
  }

  bool parseAffine(AffineExpr &e) {
    if (!parseTerm(e))
      return false;
    while (tok.kind == Tok::Plus || tok.kind == Tok::Minus) {
      int64_t s = tok.kind == Tok::Plus ? 1 : -1;
      SMLoc l = tok.loc();
      next();
      AffineExpr rhs;
      if (!parseTerm(rhs) || !addChecked(e, rhs, s, l))
        return false;
    }
    return true;
  }

  bool parseExtent(Extent &x) {
    if (isIdent("min")) {
      next();
      x.hasMin = true;
      return expect(Tok::LParen, "'(' after min") && parseAffine(x.size) &&
             expect(Tok::Comma, "',' between the arguments of min") && parseAffine(x.bound) &&
             expect(Tok::RParen, "')'");
    }
    return parseAffine(x.size);
  }

  bool parseAccess(Access &a) {
    if (tok.kind != Tok::Var)
      return error("expected a tensor or buffer access like %X[0:128, 0:512]");
    StringRef name = tok.text.drop_front();
    a.loc = srcLoc(tok.loc());
    if (int t = prog.findTensor(name); t >= 0) {
      a.kind = Access::Kind::Tensor;
      a.id = uint32_t(t);
    } else if (int b = prog.findBuffer(name); b >= 0) {
      a.kind = Access::Kind::Buffer;
      a.id = uint32_t(b);
    } else {
      for (auto &s : scope)
        if (s.first == name)
          return error(formatv("%{0} is a loop variable, not a tensor or buffer", name));
      return error(formatv("unknown tensor or buffer %{0}", name));
    }
    next();
    const std::vector<int64_t> &shape =
        a.isTensor() ? prog.tensors[a.id].shape : prog.buffers[a.id].shape;
    if (tok.kind != Tok::LBracket) {
      // A bare name accesses the whole tensor/buffer.
      for (int64_t d : shape) {
        DimAccess da;
        da.extent.size = AffineExpr::constantExpr(d);
        a.dims.push_back(da);
      }
      return true;
    }
    next();
    for (;;) {
      DimAccess d;
      if (!parseAffine(d.start))
        return false;
      if (tok.kind == Tok::Colon) {
        next();
        if (!parseExtent(d.extent))
          return false;
      } else {
        d.isIndex = true;
        d.extent.size = AffineExpr::constantExpr(1);
      }
      a.dims.push_back(std::move(d));
      if (tok.kind == Tok::Comma) {
        next();
        continue;
      }
      return expect(Tok::RBracket, "',' or ']' in an access") && parsePattern(a);
    }
  }

  /// ` pattern(DIM:EXTENT:STEP, ...)` after an access: its tile's dimensions.
  bool parsePattern(Access &a) {
    if (!isIdent("pattern"))
      return true;
    next();
    if (!expect(Tok::LParen, "'(' after pattern"))
      return false;
    for (;;) {
      int64_t dim, extent, step;
      if (!parseInt(dim, "a dimension") || !expect(Tok::Colon, "':' after the dimension") ||
          !parseInt(extent, "an extent") || !expect(Tok::Colon, "':' after the extent") ||
          !parseInt(step, "a step"))
        return false;
      a.pattern.push_back(PatternDim{uint32_t(std::clamp<int64_t>(dim, 0, UINT32_MAX)), extent, step});
      if (tok.kind != Tok::Comma)
        break;
      next();
    }
    return expect(Tok::RParen, "')' to close the pattern");
  }

  // ---- statements ----
  bool unknownStatement(StringRef name, StringRef base) {
    std::vector<std::string> forms = {"for", "alloc"};
    for (Opcode op : allOpcodes()) {
      static const char *const suffixes[] = {"", ".F", ".OP", ".OP0.OP1"}; // by FuncKind
      forms.push_back((opcodeName(op) + suffixes[unsigned(opInfo(op).func)]).str());
    }
    std::string hint = closestName(base, forms);
    if (!hint.empty())
      return error(formatv("unknown statement '{0}' (did you mean '{1}'?)", name, hint));
    std::vector<StringRef> refs(forms.begin(), forms.end());
    return error(formatv("unknown statement '{0}' (expected {1})", name, alternatives(refs)));
  }

  /// What an instruction's text has said so far: its optional [P, 1] tiles
  /// (appended to the sources in Instr::tiles order) and the attributes
  /// seen, each allowed once.
  struct InstrParts {
    std::optional<Access> scalarTile, biasTile, scaleTile, accTile;
    bool sawAcc = false, sawQueue = false, sawEngine = false, sawScale = false, sawBias = false,
         sawLoc = false, sawOffset = false, sawPartition = false, sawFree = false, sawFill = false,
         sawReverse = false;
  };

  bool parseInstr() {
    Instr in;
    InstrParts parts;
    SMLoc opLoc = tok.loc();
    in.loc = srcLoc(opLoc);
    if (!parseMnemonic(in))
      return false;
    next();
    if (!parseAccess(in.dst) || !expect(Tok::Arrow, "'<-' between the destination and the sources"))
      return false;
    if (!parseSources(in, parts))
      return false;
    while (tok.kind == Tok::Ident)
      if (!parseAttribute(in, parts))
        return false;
    return finishInstr(in, parts, opLoc);
  }

  /// `name` or `name.F` / `name.OP`: the opcode, its default engine and its
  /// function.
  bool parseMnemonic(Instr &in) {
    StringRef name = tok.text;
    auto [base, suffix] = name.split('.');
    std::optional<Opcode> op = parseOpcode(base);
    if (!op)
      return unknownStatement(name, base);
    in.op = *op;
    in.engine = defaultEngine(in.op);
    FuncKind func = opInfo(in.op).func;
    if (func == FuncKind::Activation) {
      // `identity` is NKI's name for copy.
      std::optional<ActFn> f = suffix == "identity" ? ActFn::Copy : parseActFn(suffix);
      if (!f) {
        std::vector<StringRef> names = namesOf(allActFns(), actFnName);
        std::string hint = closestName(suffix, names);
        names.insert(names.begin() + 1, "identity");
        return error(formatv("unknown activation function '{0}' ({1})", suffix,
                             hint.empty() ? "expected activation.F with F one of " + join(names, ", ")
                                          : "did you mean '" + hint + "'?"));
      }
      in.func = uint8_t(*f);
    } else if (func == FuncKind::Alu) {
      return parseAluSuffix(suffix, base, "OP", in.func);
    } else if (func == FuncKind::AluPair) {
      auto [op0, op1] = suffix.split('.');
      return parseAluSuffix(op0, base, "OP0.OP1", in.func) && parseAluSuffix(op1, base, "OP0.OP1", in.func1);
    } else if (!suffix.empty() || name.endswith(".")) {
      return error(formatv("`{0}` takes no '.' suffix", base));
    }
    return true;
  }

  /// One ALU operation of a mnemonic's suffix (`form` names the suffix in messages).
  bool parseAluSuffix(StringRef suffix, StringRef base, StringRef form, uint8_t &out) {
    std::optional<AluOp> o = parseAluOp(suffix);
    if (!o) {
      std::vector<StringRef> names = namesOf(allAluOps(), aluOpName);
      std::string hint = closestName(suffix, names);
      return error(formatv("unknown operation '{0}' for {1} ({2})", suffix, base,
                           hint.empty() ? formatv("expected {0}.{1} with OP one of {2}", base, form, join(names, ", ")).str()
                                        : "did you mean '" + hint + "'?"));
    }
    out = uint8_t(*o);
    return true;
  }

  /// After `<-`: memset's value, iota's nothing, else the source accesses
  /// (tensor_scalar's and tensor_tensor_scan's last a number or a [P, 1] tile).
  bool parseSources(Instr &in, InstrParts &parts) {
    const bool scalarLast = in.op == Opcode::TensorScalar || in.op == Opcode::TensorTensorScan;
    const size_t full = opInfo(in.op).srcRoles.size();
    if (in.op == Opcode::Memset)
      return parseNumber(in.imm, "the memset value (a number)");
    if (in.op == Opcode::Iota)
      return true;
    for (;;) {
      if (scalarLast && in.srcs.size() == full) {
        if (tok.kind == Tok::Var) {
          parts.scalarTile.emplace();
          return parseAccess(*parts.scalarTile);
        }
        return parseNumber(in.imm, in.op == Opcode::TensorScalar ? "the scalar operand (a number or a [P, 1] tile)"
                                                                 : "the initial value (a number or a [P, 1] tile)");
      }
      Access a;
      if (!parseAccess(a))
        return false;
      in.srcs.push_back(std::move(a));
      if (tok.kind != Tok::Comma)
        break;
      next();
    }
    if (in.op == Opcode::TensorScalar)
      return error("expected ', NUMBER' or ', %TILE[...]': tensor_scalar takes a tile and a scalar operand");
    if (in.op == Opcode::TensorTensorScan)
      return error("expected ', NUMBER' or ', %TILE[...]': tensor_tensor_scan takes two tiles and an initial value");
    return true;
  }

  /// One `key` or `key=value` attribute.
  bool parseAttribute(Instr &in, InstrParts &parts) {
    StringRef key = tok.text;
    SMLoc l = tok.loc();
    next();
    auto once = [&](bool &seen) {
      if (seen)
        return error(l, formatv("duplicate attribute '{0}'", key));
      seen = true;
      return true;
    };
    if (key == "loc")
      return once(parts.sawLoc) && parseSourceLoc(in.source);
    if (key == "queue" || key == "queues" || key == "transpose" || key == "spill_save" ||
        key == "spill_reload")
      return (key != "queue" || once(parts.sawQueue)) && parseDmaAttribute(in, key, l);
    if (key == "accumulate" && in.op == Opcode::Activation) {
      if (!once(parts.sawAcc) || !expect(Tok::Equal, "'='"))
        return false;
      parts.accTile.emplace();
      return parseAccess(*parts.accTile);
    }
    if (key == "reverse") {
      if (in.op != Opcode::TensorScalar)
        return error(l, "`reverse` applies to `tensor_scalar` only");
      in.reverse = true;
      return once(parts.sawReverse);
    }
    if (key == "offset" || key == "partition" || key == "free" || key == "fill") {
      bool isIndexed = in.op == Opcode::Iota || in.op == Opcode::AffineSelect;
      if (!isIndexed || (key == "fill" && in.op != Opcode::AffineSelect))
        return error(l, formatv("`{0}` applies to {1} only", key,
                                key == "fill" ? "`affine_select`" : "`iota` and `affine_select`"));
      bool &seen = key == "offset" ? parts.sawOffset : key == "partition" ? parts.sawPartition
                   : key == "free" ? parts.sawFree : parts.sawFill;
      if (!once(seen) || !expect(Tok::Equal, "'='"))
        return false;
      return key == "offset"      ? parseAffine(in.offset)
             : key == "partition" ? parseInt(in.partitionStep, "the integer step per partition")
             : key == "free"      ? parseInt(in.freeStep, "the integer step per free element")
                                  : parseNumber(in.imm, "the fill value (a number)");
    }
    if (key == "reset" || key == "accumulate" || key == "reset_if_first") {
      if (in.op != Opcode::Matmul)
        return error(l, formatv("`{0}` applies to `matmul` only", key));
      return once(parts.sawAcc) && parseAccumulation(in, key);
    }
    if (key == "engine")
      return once(parts.sawEngine) && expect(Tok::Equal, "'='") && parseEngineName(in);
    if (key == "scale" || key == "bias") {
      if (in.op != Opcode::Activation)
        return error(l, formatv("`{0}` applies to `activation` only", key));
      if (!once(key == "scale" ? parts.sawScale : parts.sawBias) || !expect(Tok::Equal, "'='"))
        return false;
      if (tok.kind == Tok::Var) {
        std::optional<Access> &t = key == "scale" ? parts.scaleTile : parts.biasTile;
        t.emplace();
        return parseAccess(*t);
      }
      return parseNumber(key == "scale" ? in.scale : in.bias, "a number or a [P, 1] tile");
    }
    return error(l, formatv("unknown attribute '{0}' for `{1}`", key, opcodeName(in.op)));
  }

  /// A dma's `queue=Q`, `queues=N`, `transpose`, `spill_save` or
  /// `spill_reload`.
  bool parseDmaAttribute(Instr &in, StringRef key, SMLoc l) {
    if (key == "queue" || key == "queues") {
      bool one = key == "queue";
      int64_t n;
      if (!expect(Tok::Equal, "'='") || !parseInt(n, one ? "a queue number" : "a queue count"))
        return false;
      if (one ? (n < 0 || n > 4096) : (n < 1 || n > 4096))
        return error(l, one ? "queue number out of range" : "queue count out of range (1 to 4096)");
      (one ? in.queue : in.queueSpan) = uint32_t(n);
      if (in.op != Opcode::Dma)
        return error(l, formatv("`{0}` applies to `dma` only", key));
      return true;
    }
    if (key == "transpose") {
      if (in.op != Opcode::Dma)
        return error(l, "`transpose` attribute applies to `dma` only");
      in.transpose = true;
      return true;
    }
    if (in.op != Opcode::Dma)
      return error(l, formatv("`{0}` applies to `dma` only", key));
    if (in.tag != DmaTag::None)
      return error(l, "a dma has at most one spill tag");
    in.tag = key == "spill_save" ? DmaTag::SpillSave : DmaTag::SpillReload;
    return true;
  }

  /// A matmul's `reset`, `accumulate` or `reset_if_first(%i, ...)`.
  bool parseAccumulation(Instr &in, StringRef key) {
    if (key == "reset") {
      in.acc = AccMode::Reset;
      return true;
    }
    if (key == "accumulate") {
      in.acc = AccMode::Accumulate;
      return true;
    }
    in.acc = AccMode::ResetIfFirst;
    if (!expect(Tok::LParen, "'(' after reset_if_first"))
      return false;
    for (;;) {
      if (tok.kind != Tok::Var)
        return error("expected a loop variable");
      uint32_t id;
      if (!lookupVar(tok.text.drop_front(), tok.loc(), id))
        return false;
      in.accVars.push_back(id);
      next();
      if (tok.kind == Tok::Comma) {
        next();
        continue;
      }
      return expect(Tok::RParen, "',' or ')'");
    }
  }

  /// `engine=NAME`'s name, allowed for the instruction.
  bool parseEngineName(Instr &in) {
    if (tok.kind != Tok::Ident)
      return error("expected an engine name (vector, scalar, gpsimd)");
    std::optional<Engine> e = parseEngine(tok.text);
    if (!e)
      return error(formatv("unknown engine '{0}' (expected tensor, vector, scalar, gpsimd)", tok.text));
    if (!engineAllowed(in.op, *e))
      return error(formatv("`{0}` cannot run on the {1} engine", opcodeName(in.op), tok.text));
    in.engine = *e;
    next();
    return true;
  }

  /// The defaults and required attributes, then the tiles into the sources.
  bool finishInstr(Instr &in, InstrParts &parts, SMLoc opLoc) {
    if (in.op == Opcode::Matmul && !parts.sawAcc)
      in.acc = AccMode::Reset;
    if ((in.op == Opcode::Iota || in.op == Opcode::AffineSelect) &&
        !(parts.sawOffset && parts.sawPartition && parts.sawFree))
      return error(opLoc, formatv("`{0}` needs offset=, partition= and free= (its affine index)", opcodeName(in.op)));
    if (in.op == Opcode::AffineSelect && !parts.sawFill)
      return error(opLoc, "`affine_select` needs fill= (the value where the comparison fails)");
    const std::pair<std::optional<Access> *, uint8_t> tiles[] = {{&parts.scalarTile, ScalarTile},
                                                                 {&parts.biasTile, BiasTile},
                                                                 {&parts.scaleTile, ScaleTile},
                                                                 {&parts.accTile, Accumulator}};
    for (auto [tile, bit] : tiles)
      if (*tile) {
        in.tiles |= bit;
        in.srcs.push_back(std::move(**tile));
      }
    prog.instrs.push_back(std::move(in));
    return expectEndOfLine();
  }

  bool parseFor(std::vector<Stmt> &body) {
    DepthGuard g(depth);
    if (depth > kMaxDepth)
      return error("loops nested too deeply");
    Loop l;
    l.loc = srcLoc(tok.loc());
    next(); // 'for'
    if (tok.kind != Tok::Var)
      return error("expected a loop variable like %i");
    std::string name = tok.text.drop_front().str();
    SMLoc varLoc = tok.loc();
    for (auto &s : scope)
      if (s.first == name)
        return error(formatv("loop variable %{0} shadows an enclosing loop's variable", name));
    if (prog.findTensor(name) >= 0 || prog.findBuffer(name) >= 0)
      return error(formatv("loop variable %{0} has the name of a tensor or buffer", name));
    next();
    if (!expect(Tok::Equal, "'=' after the loop variable") || !parseInt(l.lo, "the loop's lower bound"))
      return false;
    if (!isIdent("to"))
      return error("expected 'to'");
    next();
    if (!parseInt(l.hi, "the loop's upper bound"))
      return false;
    if (isIdent("step")) {
      next();
      SMLoc sl = tok.loc();
      if (!parseInt(l.step, "the loop step"))
        return false;
      if (l.step <= 0)
        return error(sl, "loop step must be positive");
    }
    if (!expect(Tok::LBrace, "'{' to open the loop body"))
      return false;
    l.var = uint32_t(prog.vars.size());
    prog.vars.push_back(name);
    uint32_t loopId = uint32_t(prog.loops.size());
    prog.varLoop.push_back(loopId);
    prog.loops.push_back(std::move(l));
    scope.push_back({name, prog.loops[loopId].var});
    std::vector<Stmt> inner;
    while (true) {
      skipNewlines();
      if (tok.kind == Tok::RBrace)
        break;
      if (tok.kind == Tok::Eof)
        return error(failed ? tok.loc() : varLoc, "unterminated loop body: missing '}'");
      if (!parseStmt(inner))
        return false;
    }
    next(); // '}'
    scope.pop_back();
    prog.loops[loopId].body = std::move(inner);
    body.push_back({Stmt::Kind::For, loopId});
    return expectEndOfLine();
  }

  bool parseStmt(std::vector<Stmt> &body) {
    if (tok.kind != Tok::Ident)
      return error("expected a statement");
    if (tok.text == "for")
      return parseFor(body);
    if (tok.text == "alloc") {
      next();
      if (tok.kind != Tok::Var)
        return error("expected a buffer name after alloc");
      int b = prog.findBuffer(tok.text.drop_front());
      if (b < 0)
        return error(formatv("unknown buffer {0}", tok.text));
      next();
      body.push_back({Stmt::Kind::Alloc, uint32_t(b)});
      return expectEndOfLine();
    }
    if (tok.text == "tensor" || tok.text == "buffer" || tok.text == "kernel" || tok.text == "target" ||
        tok.text == "reuse") {
      if (!scope.empty())
        return error(formatv("'{0}' declarations are only allowed at the top level", tok.text));
    }
    uint32_t id = uint32_t(prog.instrs.size());
    if (!parseInstr())
      return false;
    body.push_back({Stmt::Kind::Instr, id});
    return true;
  }

  /// `reuse region|whole`: when a buffer slot's new occupant may be used.
  bool parseReuse() {
    next();
    if (isIdent("region"))
      prog.slotReuse = SlotReuse::Region;
    else if (isIdent("whole"))
      prog.slotReuse = SlotReuse::Whole;
    else
      return error("expected 'region' or 'whole' after 'reuse'");
    next();
    return expectEndOfLine();
  }

  void parseFile() {
    bool sawKernel = false, sawTarget = false, sawReuse = false;
    while (true) {
      skipNewlines();
      if (tok.kind == Tok::Eof)
        return;
      if (tok.kind == Tok::Error) {
        error("unexpected character");
        return;
      }
      if (tok.kind == Tok::RBrace) {
        error("'}' without a matching loop");
        return;
      }
      bool ok;
      if (isIdent("kernel") || isIdent("target")) {
        bool isKernel = tok.text == "kernel";
        bool &seen = isKernel ? sawKernel : sawTarget;
        if (seen) {
          error(formatv("duplicate '{0}' line", tok.text));
          return;
        }
        seen = true;
        if (isKernel) {
          next();
          if (tok.kind != Tok::Ident) {
            error("expected the kernel name");
            return;
          }
          prog.kernel = tok.text.str();
        } else if (!lexTargetName()) {
          return;
        }
        next();
        ok = expectEndOfLine();
      } else if (isIdent("reuse")) {
        if (sawReuse) {
          error("duplicate 'reuse' line");
          return;
        }
        sawReuse = true;
        ok = parseReuse();
      } else if (isIdent("tensor")) {
        ok = parseTensorDecl();
      } else if (isIdent("buffer")) {
        ok = parseBufferDecl();
      } else {
        ok = parseStmt(prog.body);
      }
      if (!ok)
        return;
    }
  }
};

} // namespace

Expected<Program> parseProgram(StringRef text, StringRef fileName) {
  Parser p(text, fileName);
  return p.parse();
}

Expected<Program> parseProgramFile(StringRef path) {
  auto buf = MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/true);
  if (!buf)
    return createStringError(buf.getError(), "cannot open '%s': %s", path.str().c_str(),
                             buf.getError().message().c_str());
  return parseProgram((*buf)->getBuffer(), path == "-" ? StringRef("<stdin>") : path);
}

} // namespace tessel::runtime

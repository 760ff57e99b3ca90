//===- frontend/Sema.cpp - Constants, names and shapes of a .tsl module --===//
#include "frontend/Sema.h"

#include "frontend/Lexer.h"
#include "support/Suggest.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

#include <fmt/format.h>

using namespace tessel::ast;

namespace tessel::frontend {

//===----------------------------------------------------------------------===//
// Rendering expressions for messages
//===----------------------------------------------------------------------===//

static int precedence(const Expr &e) {
  switch (e.kind) {
  case ExprKind::Binary:
    if (isComparison(e.binOp))
      return 0;
    return e.binOp == BinaryOp::Add || e.binOp == BinaryOp::Sub ? 1 : 2;
  case ExprKind::MatMul:
    return 3;
  case ExprKind::Number:
    return e.number < 0 ? 2 : 4;
  default:
    return 4;
  }
}

static void render(const Expr &e, std::string &out, int minPrec) {
  bool parens = precedence(e) < minPrec;
  if (parens)
    out += "(";
  switch (e.kind) {
  case ExprKind::Ref:
    out += e.name;
    break;
  case ExprKind::MatMul:
  case ExprKind::Binary: {
    int p = precedence(e);
    render(*e.lhs, out, p);
    out += e.kind == ExprKind::MatMul ? " @ " : fmt::format(" {} ", binaryOpName(e.binOp));
    render(*e.rhs, out, p + 1);
    break;
  }
  case ExprKind::Unary:
    out += actFnName(e.unaryFn).str();
    out += "(";
    render(*e.lhs, out, 0);
    out += ")";
    break;
  case ExprKind::Transpose:
    render(*e.lhs, out, 4);
    out += ".T";
    break;
  case ExprKind::Number:
    out += fmt::format("{}", e.number);
    break;
  case ExprKind::Reduce:
    out += fmt::format("{}(", reduceOpName(e.reduceOp));
    render(*e.lhs, out, 0);
    out += e.type.heads > 0 ? ", axis=2)" : ", axis=1)";
    break;
  case ExprKind::Call:
    out += e.name + "(...)";
    break;
  case ExprKind::Causal:
    out += "causal(";
    render(*e.lhs, out, 0);
    out += ")";
    break;
  case ExprKind::MergeHeads:
    out += "merge_heads(";
    render(*e.lhs, out, 0);
    out += ")";
    break;
  }
  if (parens)
    out += ")";
}

std::string exprText(const Expr &e) {
  std::string out;
  render(e, out, 0);
  constexpr size_t kMaxLen = 60;
  if (out.size() > kMaxLen)
    out = out.substr(0, kMaxLen - 3) + "...";
  return out;
}

//===----------------------------------------------------------------------===//
// The checker
//===----------------------------------------------------------------------===//

namespace {

/// A name in a kernel's scope: a parameter or an assignment.
struct Binding {
  llvm::SMLoc loc;
  TensorType type;
  bool ok = true; // false: its definition had an error (uses are silently poisoned)
};

class Sema {
public:
  Sema(Module &m, DiagnosticEngine &diags) : module(m), diags(diags) {}

  bool run(const std::vector<Define> &defines);

private:
  bool stopped() const { return diags.errorCount() >= kMaxErrors; }
  void error(llvm::SMLoc loc, const std::string &msg);
  void note(llvm::SMLoc loc, const std::string &msg);

  void bindConsts();
  void applyDefines(const std::vector<Define> &defines);
  bool resolveDim(const DimExpr &dim, int64_t &out);
  bool resolveType(DType dtype, const std::optional<DimExpr> &heads, const DimExpr &rows,
                   const DimExpr &cols, TensorType &out);
  void checkKernel(Kernel &k);
  bool checkExpr(Expr &e);
  bool checkNode(Expr &e);
  /// Checks both operands of a binary node and that their element types agree.
  bool checkOperands(Expr &e, llvm::StringRef op);
  bool checkMatMul(Expr &e);
  bool checkBinary(Expr &e);
  bool checkReduce(Expr &e);
  bool checkMergeHeads(Expr &e);
  /// The heads of `e`'s result from its operands' (0 = none); false after
  /// reporting operands whose head counts do not divide.
  bool combineHeads(Expr &e, llvm::StringRef op);
  /// Every value of a kernel has heads dividing the kernel's heads (its
  /// result's, or the most of any value when the result has none).
  void checkHeadsDivideResult(const Kernel &k);
  /// No merge_heads inside a value with heads (each head would merge them all).
  void checkMergeHeadsPlacement(const Expr &e, const Expr *withHeads);
  /// After an error in an expression an inlined function made: a note at
  /// the call (once per statement).
  void noteCall(llvm::SMLoc callLoc, const std::string &callee);

  Module &module;
  DiagnosticEngine &diags;
  llvm::StringMap<Const *> consts;
  llvm::StringMap<bool> constOk;
  std::vector<std::string> constNames; // in source order, for messages

  // Per kernel.
  llvm::StringMap<Binding> scope;
  std::vector<std::string> scopeNames;         // in definition order, for suggestions
  llvm::StringMap<llvm::SMLoc> laterAssigns;   // assignments not reached yet
  bool notedCall = false;                      // per statement: noteCall said it
};

void Sema::noteCall(llvm::SMLoc callLoc, const std::string &callee) {
  if (notedCall || !callLoc.isValid())
    return;
  notedCall = true;
  note(callLoc, fmt::format("in the call to '{}' here", callee));
}

void Sema::error(llvm::SMLoc loc, const std::string &msg) {
  if (stopped())
    return;
  diags.error(loc, msg);
  if (stopped())
    diags.note(llvm::SMLoc(), fmt::format("too many errors ({}), stopping now", kMaxErrors));
}

void Sema::note(llvm::SMLoc loc, const std::string &msg) {
  if (!stopped())
    diags.note(loc, msg);
}

bool Sema::run(const std::vector<Define> &defines) {
  unsigned before = diags.errorCount();
  bindConsts();
  applyDefines(defines);
  llvm::StringMap<llvm::SMLoc> kernels;
  for (Kernel &k : module.kernels) {
    if (stopped())
      break;
    auto [it, inserted] = kernels.try_emplace(k.name, k.loc);
    if (!inserted) {
      error(k.loc, fmt::format("redefinition of kernel '{}'", k.name));
      note(it->second, fmt::format("the previous definition of '{}' is here", k.name));
      continue;
    }
    checkKernel(k);
  }
  return diags.errorCount() == before;
}

void Sema::bindConsts() {
  for (Const &c : module.consts) {
    auto [it, inserted] = consts.try_emplace(c.name, &c);
    if (!inserted) {
      error(c.loc, fmt::format("redefinition of constant '{}'", c.name));
      note(it->second->loc, fmt::format("the previous definition of '{}' is here", c.name));
      continue;
    }
    constNames.push_back(c.name);
    bool ok = true;
    if (c.value <= 0) {
      error(c.loc, fmt::format("constant '{}' is {}: constants are dimensions and must be positive",
                               c.name, c.value));
      ok = false;
    } else if (c.value > kMaxDim) {
      error(c.loc, fmt::format("constant '{}' is {}: dimensions may be at most {}", c.name, c.value,
                               kMaxDim));
      ok = false;
    }
    constOk[c.name] = ok;
  }
}

void Sema::applyDefines(const std::vector<Define> &defines) {
  for (const Define &d : defines) {
    std::string flag = fmt::format("-D {}={}", d.name, d.value);
    auto it = consts.find(d.name);
    if (it == consts.end()) {
      std::string guess = closestName(d.name, constNames);
      std::string known = constNames.empty() ? "the file defines no constants"
                                             : "known constants: " + quotedList(constNames);
      error(llvm::SMLoc(), fmt::format("{}: no constant named '{}' in the file{}; {}", flag, d.name,
                                       guess.empty() ? "" : fmt::format(" (did you mean '{}'?)", guess),
                                       known));
      continue;
    }
    llvm::StringRef text = llvm::StringRef(d.value).trim();
    llvm::StringRef digits = text;
    bool negative = digits.consume_front("-");
    digits.consume_front("+");
    if (digits.empty() || digits.find_first_not_of("0123456789") != llvm::StringRef::npos) {
      error(llvm::SMLoc(), fmt::format("{}: '{}' is not an integer; expected -D {}=N with N a positive "
                                       "integer",
                                       flag, d.value, d.name));
      continue;
    }
    int64_t value = 0;
    if (digits.getAsInteger(10, value) || value > kMaxDim) {
      error(llvm::SMLoc(), fmt::format("{}: the value is too large; dimensions may be at most {}", flag,
                                       kMaxDim));
      continue;
    }
    if (negative || value == 0) {
      error(llvm::SMLoc(), fmt::format("{}: the value must be positive (constants are dimensions)", flag));
      continue;
    }
    Const &c = *it->second;
    c.value = value;
    c.overridden = true;
    constOk[d.name] = true;
  }
}

bool Sema::resolveDim(const DimExpr &dim, int64_t &out) {
  if (dim.constName.empty()) {
    if (dim.literal <= 0) {
      error(dim.loc, fmt::format("dimension {} must be positive", dim.literal));
      return false;
    }
    if (dim.literal > kMaxDim) {
      error(dim.loc, fmt::format("dimension {} is too large: dimensions may be at most {}", dim.literal,
                                 kMaxDim));
      return false;
    }
    out = dim.literal;
    return true;
  }
  auto it = consts.find(dim.constName);
  if (it == consts.end()) {
    std::string guess = closestName(dim.constName, constNames);
    std::string hint = !guess.empty() ? fmt::format("; did you mean '{}'?", guess)
                       : constNames.empty()
                           ? fmt::format("; define it at the top level: 'const {} = <positive integer>'",
                                         dim.constName)
                           : fmt::format("; known constants: {}", quotedList(constNames));
    error(dim.loc, fmt::format("unknown constant '{}' in a shape{}", dim.constName, hint));
    return false;
  }
  if (!constOk.lookup(dim.constName))
    return false; // its definition was reported
  out = it->second->value;
  return true;
}

bool Sema::resolveType(DType dtype, const std::optional<DimExpr> &heads, const DimExpr &rows,
                       const DimExpr &cols, TensorType &out) {
  out.dtype = dtype;
  bool okHeads = !heads || resolveDim(*heads, out.heads);
  bool okRows = resolveDim(rows, out.rows);
  bool okCols = resolveDim(cols, out.cols);
  return okHeads && okRows && okCols;
}

void Sema::checkKernel(Kernel &k) {
  scope.clear();
  scopeNames.clear();
  laterAssigns.clear();
  unsigned kernelErrors = diags.errorCount();
  for (Param &p : k.params) {
    Binding b;
    b.loc = p.loc;
    b.ok = resolveType(p.dtype, p.heads, p.rows, p.cols, p.type);
    b.type = p.type;
    auto [it, inserted] = scope.try_emplace(p.name, b);
    if (!inserted) {
      error(p.loc, fmt::format("redefinition of parameter '{}' of kernel '{}'", p.name, k.name));
      note(it->second.loc, fmt::format("the previous definition of '{}' is here", p.name));
      continue;
    }
    scopeNames.push_back(p.name);
  }
  bool resultOk = resolveType(k.resultDType, k.resultHeads, k.resultRows, k.resultCols, k.resultType);

  for (const Stmt &s : k.body)
    if (!s.isReturn())
      laterAssigns.try_emplace(s.name, s.loc);

  for (Stmt &s : k.body) {
    if (stopped())
      return;
    if (!s.isReturn())
      laterAssigns.erase(s.name);
    notedCall = false;
    unsigned errorsBefore = diags.errorCount();
    bool ok = checkExpr(*s.value);
    if (diags.errorCount() > errorsBefore)
      noteCall(s.callLoc, s.callee);
    if (ok && s.value->kind == ExprKind::Number) {
      error(s.value->loc, fmt::format("a number is not a value of the kernel: numbers are operands of "
                                      "'+', '-', '*', '/' and comparisons ('X * {}')",
                                      s.value->number));
      continue;
    }
    if (s.isReturn()) {
      if (ok && resultOk && s.value->type != k.resultType)
        error(s.value->loc,
              fmt::format("kernel '{}' returns {} but its declared result type is {}{}", k.name,
                          formatType(s.value->type), formatType(k.resultType),
                          s.value->type.dtype == k.resultType.dtype &&
                                  s.value->type.heads == k.resultType.heads &&
                                  s.value->type.rows == k.resultType.cols &&
                                  s.value->type.cols == k.resultType.rows
                              ? fmt::format("; did you mean 'return {}.T'?",
                                            precedence(*s.value) < 4 ? "(" + exprText(*s.value) + ")"
                                                                     : exprText(*s.value))
                              : ""));
      continue;
    }
    auto it = scope.find(s.name);
    if (it != scope.end()) {
      error(s.loc, fmt::format("redefinition of '{}': values are immutable, give the new value "
                               "another name",
                               s.name));
      note(it->second.loc, fmt::format("the previous definition of '{}' is here", s.name));
      continue;
    }
    Binding b;
    b.loc = s.loc;
    b.ok = ok;
    b.type = s.value->type;
    scope.try_emplace(s.name, b);
    scopeNames.push_back(s.name);
  }
  // After other errors the head counts may be off already: no cascade.
  if (resultOk && diags.errorCount() == kernelErrors) {
    for (const Stmt &s : k.body)
      checkMergeHeadsPlacement(*s.value, nullptr);
    if (diags.errorCount() == kernelErrors)
      checkHeadsDivideResult(k);
  }
}

void Sema::checkMergeHeadsPlacement(const Expr &e, const Expr *withHeads) {
  if (e.kind == ExprKind::MergeHeads && withHeads) {
    error(e.opLoc, fmt::format("'merge_heads' inside a value with heads ('{}' is {}): each head would "
                               "merge all of them; assign the merged value to a name first",
                               exprText(*withHeads), formatType(withHeads->type)));
    return;
  }
  if (!withHeads && e.kind != ExprKind::Number && e.type.heads > 0)
    withHeads = &e;
  for (const Expr *o : {e.lhs.get(), e.rhs.get()})
    if (o)
      checkMergeHeadsPlacement(*o, withHeads);
}

// merge_heads(x), x: [H, S, D]: [S, H * D], head h in columns h * D ..
// h * D + D - 1 (the heads side by side, as an output projection reads them).
bool Sema::checkMergeHeads(Expr &e) {
  if (!checkExpr(*e.lhs))
    return false;
  if (e.lhs->kind == ExprKind::Number) {
    error(e.lhs->loc, "'merge_heads' merges the heads of a tensor, not a number");
    return false;
  }
  const TensorType &x = e.lhs->type;
  if (x.heads == 0) {
    error(e.opLoc, fmt::format("'merge_heads' of {}, a value without heads: it lays the heads of "
                               "[H x S x D] side by side as [S x H*D]",
                               formatType(x)));
    return false;
  }
  if (x.heads * x.cols > kMaxDim) {
    error(e.opLoc, fmt::format("'merge_heads' of {} is {} columns wide, more than the limit of {}",
                               formatType(x), x.heads * x.cols, kMaxDim));
    return false;
  }
  e.type = TensorType{x.dtype, x.rows, x.heads * x.cols, 0};
  return true;
}

// Per head h of the kernel (H heads: its result's, or the most of any of its
// values when the result has none), a value of G heads is its head
// h / (H / G): the lowering and the reference evaluate the statements with
// heads head by head, so every value's head count divides H.
void Sema::checkHeadsDivideResult(const Kernel &k) {
  int64_t result = k.resultType.heads, most = result;
  std::string mostName;
  for (const std::string &name : scopeNames) {
    const Binding &b = scope.find(name)->second;
    if (result == 0 && b.ok && b.type.heads > most) {
      most = b.type.heads;
      mostName = name;
    }
  }
  for (const std::string &name : scopeNames) {
    const Binding &b = scope.find(name)->second;
    int64_t heads = b.type.heads;
    if (!b.ok || heads == 0 || most % heads == 0)
      continue;
    error(b.loc, result > 0 ? fmt::format("'{}' has {} heads, which do not divide the {} heads kernel '{}' "
                                          "returns",
                                          name, heads, result, k.name)
                            : fmt::format("'{}' has {} heads, which do not divide the {} heads of '{}' (the "
                                          "most of any value of kernel '{}', which is computed head by head)",
                                          name, heads, most, mostName, k.name));
    return;
  }
}

bool Sema::checkExpr(Expr &e) {
  unsigned before = diags.errorCount();
  bool ok = checkNode(e);
  if (diags.errorCount() > before)
    noteCall(e.callLoc, e.callee);
  return ok;
}

bool Sema::checkNode(Expr &e) {
  switch (e.kind) {
  case ExprKind::Ref: {
    auto it = scope.find(e.name);
    if (it != scope.end()) {
      e.type = it->second.type;
      return it->second.ok;
    }
    auto later = laterAssigns.find(e.name);
    if (later != laterAssigns.end()) {
      error(e.loc, fmt::format("'{}' is used before it is assigned", e.name));
      note(later->second, fmt::format("'{}' is assigned here", e.name));
      return false;
    }
    if (consts.count(e.name)) {
      error(e.loc, fmt::format("'{}' is a constant: constants may only be used as dimensions, not as "
                               "values",
                               e.name));
      return false;
    }
    std::string guess = closestName(e.name, scopeNames);
    error(e.loc, fmt::format("use of undeclared name '{}'{}", e.name,
                             guess.empty() ? "" : fmt::format("; did you mean '{}'?", guess)));
    return false;
  }
  case ExprKind::MatMul:
    return checkMatMul(e);
  case ExprKind::Binary:
    return checkBinary(e);
  case ExprKind::Unary:
    if (!checkExpr(*e.lhs))
      return false;
    if (e.lhs->kind == ExprKind::Number) {
      error(e.lhs->loc, fmt::format("'{}' of a number: functions apply to tensors (write the value "
                                    "itself)",
                                    actFnName(e.unaryFn).str()));
      return false;
    }
    e.type = e.lhs->type;
    return true;
  case ExprKind::Transpose:
    if (!checkExpr(*e.lhs))
      return false;
    e.type = e.lhs->type;
    std::swap(e.type.rows, e.type.cols);
    return true;
  case ExprKind::Number:
    return true; // typed by the operator it is an operand of
  case ExprKind::Reduce:
    return checkReduce(e);
  case ExprKind::Call:
    error(e.loc, fmt::format("call to '{}' was not resolved", e.name));
    return false;
  case ExprKind::Causal:
    if (!checkExpr(*e.lhs))
      return false;
    if (e.lhs->kind == ExprKind::Number) {
      error(e.lhs->loc, "'causal' masks a tensor, not a number");
      return false;
    }
    e.type = e.lhs->type;
    return true;
  case ExprKind::MergeHeads:
    return checkMergeHeads(e);
  }
  return false;
}

bool Sema::checkOperands(Expr &e, llvm::StringRef op) {
  bool okL = checkExpr(*e.lhs);
  bool okR = checkExpr(*e.rhs);
  if (!okL || !okR)
    return false;
  // A number takes the element type of the tensor it meets.
  if (e.lhs->kind == ExprKind::Number)
    e.lhs->type = TensorType{e.rhs->type.dtype, 1, 1};
  if (e.rhs->kind == ExprKind::Number)
    e.rhs->type = TensorType{e.lhs->type.dtype, 1, 1};
  const TensorType &l = e.lhs->type, &r = e.rhs->type;
  if (l.dtype == r.dtype)
    return true;
  error(e.opLoc, fmt::format("operands of '{}' have different element types: {} is {}, {} is {}; "
                             "declare both as bf16 or both as f32",
                             op.str(), exprText(*e.lhs), formatType(l), exprText(*e.rhs), formatType(r)));
  return false;
}

bool Sema::checkMatMul(Expr &e) {
  if (!checkOperands(e, "@"))
    return false;
  for (const Expr *o : {e.lhs.get(), e.rhs.get()})
    if (o->kind == ExprKind::Number) {
      error(o->loc, "an operand of '@' is a number: '@' multiplies matrices; use '*' to scale");
      return false;
    }
  const TensorType &l = e.lhs->type, &r = e.rhs->type;
  std::string ln = exprText(*e.lhs), rn = exprText(*e.rhs);
  if (l.cols != r.rows) {
    std::string hint;
    if (l.cols == r.cols)
      hint = fmt::format("; did you mean '{} @ {}.T'?", ln, precedence(*e.rhs) < 4 ? "(" + rn + ")" : rn);
    else if (l.rows == r.rows)
      hint = fmt::format("; did you mean '{}.T @ {}'?", precedence(*e.lhs) < 4 ? "(" + ln + ")" : ln, rn);
    error(e.opLoc, fmt::format("inner dimensions differ: {} is {}, {} is {}{}", ln, formatShape(l), rn,
                               formatShape(r), hint));
    return false;
  }
  e.type = TensorType{l.dtype, l.rows, r.cols};
  return combineHeads(e, "@");
}

// Operands with H and G heads (G dividing H) give H heads, head h using the
// other operand's head h / (H / G): grouped-query attention's K and V of Hkv
// heads serve groups of H / Hkv query heads; a value without heads (or with
// one) serves every head.
bool Sema::combineHeads(Expr &e, llvm::StringRef op) {
  int64_t l = e.lhs->kind == ExprKind::Number ? 0 : e.lhs->type.heads;
  int64_t r = e.rhs->kind == ExprKind::Number ? 0 : e.rhs->type.heads;
  int64_t hi = std::max(l, r), lo = std::min(l, r);
  if (lo > 0 && hi % lo != 0) {
    error(e.opLoc, fmt::format("operands of '{}' have {} and {} heads, and {} does not divide {}: {} is "
                               "{}, {} is {} (grouped heads: each head of the operand with fewer "
                               "serves an equal group of the other's)",
                               op.str(), l, r, lo, hi, exprText(*e.lhs), formatShape(e.lhs->type),
                               exprText(*e.rhs), formatShape(e.rhs->type)));
    return false;
  }
  e.type.heads = hi;
  return true;
}

// The axis of a reduction, by the operand's rank: the last (columns), or the
// one before it (rows: the columns of the transpose, transposed back).
bool Sema::checkReduce(Expr &e) {
  if (!checkExpr(*e.lhs))
    return false;
  if (e.lhs->kind == ExprKind::Number) {
    error(e.lhs->loc, fmt::format("'{}' reduces a tensor, not a number", reduceOpName(e.reduceOp)));
    return false;
  }
  int64_t rank = e.lhs->type.heads > 0 ? 3 : 2;
  int64_t axis = e.axis < 0 ? e.axis + rank : e.axis;
  if (axis < 0 || axis >= rank) {
    error(e.axisLoc, fmt::format("axis {} is out of range: a value has two axes, 0 (rows) and 1 (columns), "
                                 "or -2 and -1 counting from the last",
                                 e.axis));
    return false;
  }
  if (axis == 0 && rank == 3) {
    error(e.axisLoc, fmt::format("'{}' over the heads (axis {}) is not supported: reductions run along "
                                 "the rows (axis=1) or the columns (axis=2) of each head",
                                 reduceOpName(e.reduceOp), e.axis));
    return false;
  }
  if (axis == rank - 2) {
    auto reduce = wrapExpr(ExprKind::Reduce, e, wrapExpr(ExprKind::Transpose, e, std::move(e.lhs)));
    reduce->reduceOp = e.reduceOp;
    e.kind = ExprKind::Transpose;
    e.lhs = std::move(reduce);
    return checkNode(e);
  }
  e.axis = -1;
  e.type = TensorType{e.lhs->type.dtype, e.lhs->type.rows, 1, e.lhs->type.heads};
  return true;
}

// Broadcasting: each dimension of the two operands is equal, or 1 in one of
// them (a column [M, 1] against [M, N], a row vector [1, N] against
// [M, N]); a number applies to every element.
bool Sema::checkBinary(Expr &e) {
  const char *op = binaryOpName(e.binOp);
  if (!checkOperands(e, op))
    return false;
  bool numL = e.lhs->kind == ExprKind::Number, numR = e.rhs->kind == ExprKind::Number;
  if (numL && numR) {
    error(e.opLoc, fmt::format("both operands of '{}' are numbers: write the result ({} {} {})", op,
                               e.lhs->number, op, e.rhs->number));
    return false;
  }
  if (numL || numR) {
    e.type = numL ? e.rhs->type : e.lhs->type;
    return true;
  }
  const TensorType &l = e.lhs->type, &r = e.rhs->type;
  auto broadcast = [](int64_t a, int64_t b) -> std::optional<int64_t> {
    if (a == b || b == 1)
      return a;
    if (a == 1)
      return b;
    return std::nullopt;
  };
  std::optional<int64_t> rows = broadcast(l.rows, r.rows), cols = broadcast(l.cols, r.cols);
  if (!rows || !cols) {
    std::string ln = exprText(*e.lhs), rn = exprText(*e.rhs);
    std::string hint;
    if (l.rows == r.cols && l.cols == r.rows)
      hint = fmt::format("; did you mean '{}.T'?", precedence(*e.rhs) < 4 ? "(" + rn + ")" : rn);
    else if (r.rows == 1 && r.cols == l.rows)
      hint = fmt::format("; a row vector broadcasts over rows: did you mean '{}.T' (a column)?",
                         precedence(*e.rhs) < 4 ? "(" + rn + ")" : rn);
    error(e.opLoc, fmt::format("operands of elementwise '{}' have shapes that do not broadcast: {} is {}, "
                               "{} is {} (each dimension must be equal, or 1 in one operand){}",
                               op, ln, formatShape(l), rn, formatShape(r), hint));
    return false;
  }
  e.type = TensorType{l.dtype, *rows, *cols};
  return combineHeads(e, op);
}

} // namespace

bool checkModule(Module &module, const std::vector<Define> &defines, DiagnosticEngine &diags) {
  return Sema(module, diags).run(defines);
}

} // namespace tessel::frontend

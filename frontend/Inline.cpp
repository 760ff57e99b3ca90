//===- frontend/Inline.cpp - Calls to reductions and functions, resolved --===//
#include "frontend/Inline.h"

#include "frontend/Lexer.h"
#include "support/Suggest.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <fmt/format.h>

#include <cmath>
#include <functional>

using namespace tessel::ast;

namespace tessel::frontend {

const std::vector<std::string> &reductionNames() {
  static const std::vector<std::string> names = {"sum", "max", "min", "mean"};
  return names;
}

/// The default fill of `causal`: exp of it (after any shift) is 0.
constexpr double kCausalFill = -1e9;

namespace {

using ExprPtr = std::unique_ptr<Expr>;

std::optional<ReduceOp> reductionOf(llvm::StringRef name) {
  if (name == "sum")
    return ReduceOp::Sum;
  if (name == "max")
    return ReduceOp::Max;
  if (name == "min")
    return ReduceOp::Min;
  if (name == "mean")
    return ReduceOp::Mean;
  return std::nullopt;
}

/// Calls every expression of `e` (pre-order, arguments included) with `f`.
void forEachExpr(const Expr &e, const std::function<void(const Expr &)> &f) {
  f(e);
  for (const Expr *o : {e.lhs.get(), e.rhs.get()})
    if (o)
      forEachExpr(*o, f);
  for (const Arg &a : e.args)
    forEachExpr(*a.value, f);
}

class Inliner {
public:
  Inliner(Module &m, DiagnosticEngine &diags) : module(m), diags(diags) {}

  bool run();

private:
  bool stopped() const { return diags.errorCount() >= kMaxErrors; }
  void error(llvm::SMLoc loc, const std::string &msg) {
    if (!stopped())
      diags.error(loc, msg);
  }
  void note(llvm::SMLoc loc, const std::string &msg) {
    if (!stopped())
      diags.note(loc, msg);
  }

  bool collectFunctions();
  bool checkRecursion();
  void expandKernel(Kernel &k);
  /// Replaces every Call under `e`; statements the expansion needs first go
  /// to `out`. False after an error.
  bool expand(ExprPtr &e, std::vector<Stmt> &out);
  bool expandReduction(ExprPtr &e, ReduceOp op);
  bool expandCausal(ExprPtr &e);
  bool expandFunction(ExprPtr &e, const Function &fn, std::vector<Stmt> &out);
  /// Binds each parameter of `fn` to an argument of `call` (or its default).
  bool bindArguments(Expr &call, const Function &fn, std::vector<Expr *> &bound);
  std::string freshName(const std::string &hint);
  void unknownFunction(const Expr &call);

  Module &module;
  DiagnosticEngine &diags;
  llvm::StringMap<const Function *> functions;
  // Per kernel.
  llvm::StringSet<> taken;
  llvm::StringMap<unsigned> calls; // per function, the calls inlined so far
};

bool Inliner::run() {
  unsigned before = diags.errorCount();
  if (!collectFunctions() || !checkRecursion())
    return false;
  for (Kernel &k : module.kernels) {
    if (stopped())
      break;
    expandKernel(k);
  }
  return diags.errorCount() == before;
}

bool Inliner::collectFunctions() {
  bool ok = true;
  for (const Function &f : module.functions) {
    bool builtin = reductionOf(f.name) || f.name == "transpose" || f.name == "merge_heads" ||
                   f.name == "causal" ||
                   (parseActFn(f.name) && isDslFunction(*parseActFn(f.name)));
    if (builtin) {
      error(f.loc, fmt::format("function '{}' has the name of a built-in function", f.name));
      ok = false;
      continue;
    }
    auto [it, inserted] = functions.try_emplace(f.name, &f);
    if (!inserted) {
      error(f.loc, fmt::format("redefinition of function '{}'", f.name));
      note(it->second->loc, fmt::format("the previous definition of '{}' is here{}", f.name,
                                        it->second->fromPrelude ? " (in the prelude)" : ""));
      ok = false;
      continue;
    }
    llvm::StringSet<> params;
    for (const FnParam &p : f.params)
      if (!params.insert(p.name).second) {
        error(p.loc, fmt::format("redefinition of parameter '{}' of function '{}'", p.name, f.name));
        ok = false;
      }
  }
  return ok;
}

/// A function that calls itself, directly or through others, would inline
/// forever: reported at the call that closes the cycle.
bool Inliner::checkRecursion() {
  enum class Mark { None, Active, Done };
  llvm::StringMap<Mark> marks;
  std::function<bool(const Function &)> visit = [&](const Function &f) {
    marks[f.name] = Mark::Active;
    bool ok = true;
    for (const Stmt &s : f.body)
      forEachExpr(*s.value, [&](const Expr &e) {
        if (!ok || e.kind != ExprKind::Call)
          return;
        auto it = functions.find(e.name);
        if (it == functions.end())
          return;
        Mark m = marks.lookup(e.name);
        if (m == Mark::Active) {
          error(e.loc, fmt::format("function '{}' calls '{}', which is being defined: functions may "
                                   "not be recursive",
                                   f.name, e.name));
          ok = false;
        } else if (m == Mark::None) {
          ok = visit(*it->second);
        }
      });
    marks[f.name] = Mark::Done;
    return ok;
  };
  for (const Function &f : module.functions)
    if (marks.lookup(f.name) == Mark::None && !visit(f))
      return false;
  return true;
}

void Inliner::expandKernel(Kernel &k) {
  taken.clear();
  calls.clear();
  for (const Param &p : k.params)
    taken.insert(p.name);
  for (const Stmt &s : k.body)
    if (!s.isReturn())
      taken.insert(s.name);
  std::vector<Stmt> body;
  for (Stmt &s : k.body) {
    if (stopped())
      return;
    expand(s.value, body);
    body.push_back(std::move(s));
  }
  k.body = std::move(body);
}

std::string Inliner::freshName(const std::string &hint) {
  unsigned &n = calls[hint];
  std::string name;
  do
    name = fmt::format("{}{}", hint, ++n);
  while (taken.count(name));
  taken.insert(name);
  return name;
}

void Inliner::unknownFunction(const Expr &call) {
  std::vector<std::string> names;
  for (ActFn f : allActFns())
    if (isDslFunction(f))
      names.push_back(actFnName(f).str());
  names.push_back("transpose");
  names.push_back("merge_heads");
  for (const std::string &r : reductionNames())
    names.push_back(r);
  names.push_back("causal");
  for (const Function &f : module.functions)
    names.push_back(f.name);
  std::string guess = closestName(call.name, names);
  error(call.loc, fmt::format("unknown function '{}'; {}the functions are {}", call.name,
                              guess.empty() ? "" : fmt::format("did you mean '{}'? ", guess),
                              quotedList(names)));
}

bool Inliner::expand(ExprPtr &e, std::vector<Stmt> &out) {
  bool ok = true;
  for (ExprPtr *o : {&e->lhs, &e->rhs})
    if (*o)
      ok &= expand(*o, out);
  for (Arg &a : e->args)
    ok &= expand(a.value, out);
  if (!ok || e->kind != ExprKind::Call)
    return ok;
  if (std::optional<ReduceOp> r = reductionOf(e->name))
    return expandReduction(e, *r);
  if (e->name == "causal")
    return expandCausal(e);
  auto it = functions.find(e->name);
  if (it == functions.end()) {
    unknownFunction(*e);
    return false;
  }
  return expandFunction(e, *it->second, out);
}

bool Inliner::expandReduction(ExprPtr &e, ReduceOp op) {
  Expr &call = *e;
  const char *fn = reduceOpName(op);
  ExprPtr operand;
  const Arg *axis = nullptr;
  for (Arg &a : call.args) {
    if (a.keyword.empty() && !operand) {
      operand = std::move(a.value);
    } else if (a.keyword == "axis" && !axis) {
      axis = &a;
    } else {
      error(a.keyword.empty() ? a.value->loc : a.keywordLoc,
            a.keyword.empty() || a.keyword == "axis"
                ? fmt::format("'{}' takes one value and 'axis=': '{}(x, axis=1)'", fn, fn)
                : fmt::format("'{}' has no argument '{}'; it takes one value and 'axis=': '{}(x, axis=1)'",
                              fn, a.keyword, fn));
      return false;
    }
  }
  if (!operand || !axis) {
    error(call.loc, fmt::format("'{}' needs {}: '{}(x, axis=1)' reduces each row over its columns, "
                                "'axis=0' each column over its rows",
                                fn, operand ? "an axis" : "a value to reduce", fn));
    return false;
  }
  const Expr &a = *axis->value;
  if (a.kind != ExprKind::Number || a.number != std::floor(a.number)) {
    error(a.loc, fmt::format("the axis of '{}' must be an integer (0 or 1, or -2 or -1)", fn));
    return false;
  }
  if (a.number < -3 || a.number > 2) {
    error(a.loc, fmt::format("axis {} is out of range: a value has at most three axes, 0 (heads), 1 "
                             "(rows) and 2 (columns), or -3, -2 and -1 counting from the last",
                             a.number));
    return false;
  }
  // -1 and -2 are the columns and the rows of any value; what 0, 1, 2 and -3
  // are depends on the operand's rank (Sema::resolveAxis).
  bool rows = a.number == -2;
  // Over the rows: the columns of the transpose, transposed back.
  if (rows)
    operand = wrapExpr(ExprKind::Transpose, call, std::move(operand));
  ExprPtr reduce = wrapExpr(ExprKind::Reduce, call, std::move(operand));
  reduce->reduceOp = op;
  reduce->axis = rows ? -1 : int64_t(a.number);
  reduce->axisLoc = a.loc;
  e = rows ? wrapExpr(ExprKind::Transpose, call, std::move(reduce)) : std::move(reduce);
  return true;
}

// causal(x, offset=0, fill=-1e9): one value, then integer `offset` and
// number `fill` (keywords or positions 2 and 3).
bool Inliner::expandCausal(ExprPtr &e) {
  Expr &call = *e;
  const char *params[] = {"x", "offset", "fill"};
  Expr *bound[3] = {nullptr, nullptr, nullptr};
  size_t positional = 0;
  for (Arg &a : call.args) {
    size_t i = positional++;
    if (!a.keyword.empty()) {
      auto it = std::find(std::begin(params) + 1, std::end(params), a.keyword);
      if (it == std::end(params)) {
        error(a.keywordLoc, fmt::format("'causal' has no argument '{}'; it takes a value, 'offset=' and "
                                        "'fill=': 'causal(x, offset=0, fill=-1e9)'",
                                        a.keyword));
        return false;
      }
      i = size_t(it - std::begin(params));
    }
    if (i >= 3 || bound[i]) {
      error(a.keyword.empty() ? a.value->loc : a.keywordLoc,
            "'causal' takes a value, 'offset=' and 'fill=': 'causal(x, offset=0, fill=-1e9)'");
      return false;
    }
    bound[i] = a.value.get();
  }
  if (!bound[0]) {
    error(call.loc, "'causal' needs a value: 'causal(x)' keeps x[i, j] where j <= i");
    return false;
  }
  for (size_t i = 1; i < 3; ++i)
    if (bound[i] && (bound[i]->kind != ExprKind::Number ||
                     (i == 1 && bound[i]->number != std::floor(bound[i]->number)))) {
      error(bound[i]->loc, fmt::format("the {} of 'causal' must be {}", params[i],
                                       i == 1 ? "an integer" : "a number"));
      return false;
    }
  if (bound[1] && std::fabs(bound[1]->number) > double(kMaxDim)) {
    error(bound[1]->loc, fmt::format("the offset of 'causal' is out of range (at most {} either way)", kMaxDim));
    return false;
  }
  auto n = std::make_unique<Expr>(ExprKind::Causal, call.loc);
  n->opLoc = call.opLoc;
  n->callLoc = call.callLoc;
  n->callee = call.callee;
  n->offset = bound[1] ? int64_t(bound[1]->number) : 0;
  n->number = bound[2] ? bound[2]->number : kCausalFill;
  for (Arg &a : call.args)
    if (a.value.get() == bound[0])
      n->lhs = std::move(a.value);
  e = std::move(n);
  return true;
}

bool Inliner::bindArguments(Expr &call, const Function &fn, std::vector<Expr *> &bound) {
  bound.assign(fn.params.size(), nullptr);
  size_t positional = 0;
  for (Arg &a : call.args) {
    size_t i = positional;
    if (!a.keyword.empty()) {
      auto it = std::find_if(fn.params.begin(), fn.params.end(),
                             [&](const FnParam &p) { return p.name == a.keyword; });
      if (it == fn.params.end()) {
        error(a.keywordLoc, fmt::format("function '{}' has no parameter '{}'", fn.name, a.keyword));
        note(fn.loc, fmt::format("'{}' is defined here", fn.name));
        return false;
      }
      i = size_t(it - fn.params.begin());
    } else if (positional++ >= fn.params.size()) {
      error(a.value->loc, fmt::format("too many arguments: function '{}' takes {}", fn.name,
                                      fn.params.size()));
      note(fn.loc, fmt::format("'{}' is defined here", fn.name));
      return false;
    }
    if (bound[i]) {
      error(a.keyword.empty() ? a.value->loc : a.keywordLoc,
            fmt::format("parameter '{}' of function '{}' is given twice", fn.params[i].name, fn.name));
      return false;
    }
    bound[i] = a.value.get();
  }
  for (size_t i = 0; i < fn.params.size(); ++i) {
    if (bound[i])
      continue;
    if (!fn.params[i].defaultValue) {
      error(call.loc, fmt::format("missing argument '{}' in the call to function '{}'",
                                  fn.params[i].name, fn.name));
      note(fn.loc, fmt::format("'{}' is defined here", fn.name));
      return false;
    }
    bound[i] = fn.params[i].defaultValue.get();
  }
  return true;
}

bool Inliner::expandFunction(ExprPtr &e, const Function &fn, std::vector<Stmt> &out) {
  Expr &call = *e;
  std::vector<Expr *> bound;
  if (!bindArguments(call, fn, bound))
    return false;
  llvm::SMLoc callLoc = call.callLoc.isValid() ? call.callLoc : call.loc;
  std::string callee = call.callLoc.isValid() ? call.callee : fn.name;
  // What each name of the body stands for: an argument (a name or a number,
  // copied at each use) or a fresh local.
  std::map<std::string, const Expr *> subst;
  std::map<std::string, std::unique_ptr<Expr>> owned;
  for (size_t i = 0; i < fn.params.size(); ++i) {
    Expr *arg = bound[i];
    if (arg->kind != ExprKind::Ref && arg->kind != ExprKind::Number) {
      Stmt s;
      s.name = freshName(fn.name + "_" + fn.params[i].name + "_");
      s.loc = arg->loc;
      s.value = arg->clone();
      auto ref = std::make_unique<Expr>(ExprKind::Ref, arg->loc);
      ref->opLoc = arg->loc;
      ref->name = s.name;
      out.push_back(std::move(s));
      arg = ref.get();
      owned[fn.params[i].name] = std::move(ref);
    }
    subst[fn.params[i].name] = arg;
  }
  std::function<ExprPtr(const Expr &)> copy = [&](const Expr &b) -> ExprPtr {
    if (b.kind == ExprKind::Ref) {
      auto it = subst.find(b.name);
      if (it == subst.end()) {
        error(b.loc, fmt::format("use of undeclared name '{}' in function '{}' (a function sees its "
                                 "parameters and its own assignments)",
                                 b.name, fn.name));
        return nullptr;
      }
      ExprPtr r = it->second->clone();
      if (r->kind == ExprKind::Number) {
        r->loc = b.loc; // a number is shown where the body uses it
        r->callLoc = callLoc;
        r->callee = callee;
      }
      return r;
    }
    auto n = std::make_unique<Expr>(b.kind, b.loc);
    n->opLoc = b.opLoc;
    n->name = b.name;
    n->binOp = b.binOp;
    n->unaryFn = b.unaryFn;
    n->reduceOp = b.reduceOp;
    n->number = b.number;
    n->callLoc = callLoc;
    n->callee = callee;
    for (auto [from, to] : {std::pair{&b.lhs, &n->lhs}, std::pair{&b.rhs, &n->rhs}})
      if (*from && !(*to = copy(**from)))
        return nullptr;
    for (const Arg &a : b.args) {
      ExprPtr v = copy(*a.value);
      if (!v)
        return nullptr;
      n->args.push_back(Arg{a.keyword, a.keywordLoc, std::move(v)});
    }
    return n;
  };
  for (const Stmt &s : fn.body) {
    ExprPtr value = copy(*s.value);
    if (!value || !expand(value, out))
      return false;
    if (s.isReturn()) {
      e = std::move(value);
      return true;
    }
    Stmt local;
    local.name = freshName(fn.name + "_" + s.name + "_");
    local.loc = s.loc;
    local.callLoc = callLoc;
    local.callee = callee;
    local.value = std::move(value);
    auto ref = std::make_unique<Expr>(ExprKind::Ref, s.loc);
    ref->opLoc = s.loc;
    ref->name = local.name;
    subst[s.name] = ref.get();
    owned[s.name] = std::move(ref);
    out.push_back(std::move(local));
  }
  error(fn.loc, fmt::format("function '{}' has no 'return'", fn.name));
  return false;
}

} // namespace

bool expandCalls(Module &module, DiagnosticEngine &diags) { return Inliner(module, diags).run(); }

} // namespace tessel::frontend

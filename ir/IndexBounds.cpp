#include "ir/IndexBounds.h"

#include <algorithm>
#include <vector>

namespace tessel::ir {
namespace {

using Arms = llvm::SmallVector<IndexExpr, 2>;
using Terms = llvm::SmallVector<std::pair<const Value *, int64_t>, 4>;

/// Beyond this many arms (nested mins multiply) the analysis gives up.
constexpr size_t kMaxArms = 8;
/// Recursive steps one min() or max() query may take before it gives up
/// (each eliminates a loop variable or splits a min into its arms).
constexpr unsigned kCallsPerQuery = 256;

/// `e` as min(arms), each arm affine and simplified; nullopt when a min is
/// subtracted or scaled by a negative constant (that would be a max), or the
/// arithmetic overflows.
std::optional<Arms> minArms(const IndexExpr &e) {
  auto affine = [](std::optional<Arms> arms) -> std::optional<Arms> {
    if (arms && !llvm::all_of(*arms, [](const IndexExpr &arm) { return arm.isAffine(); }))
      return std::nullopt;
    return arms;
  };
  switch (e.kind()) {
  case IndexExpr::Kind::Const:
  case IndexExpr::Kind::Var: return Arms{e};
  case IndexExpr::Kind::Min: {
    auto a = minArms(e.lhs()), b = minArms(e.rhs());
    if (!a || !b || a->size() + b->size() > kMaxArms)
      return std::nullopt;
    a->append(b->begin(), b->end());
    return a;
  }
  case IndexExpr::Kind::Mul: {
    auto a = minArms(e.lhs());
    int64_t c = e.rhs().constValue();
    if (!a || (a->size() > 1 && c < 0))
      return std::nullopt;
    for (IndexExpr &arm : *a)
      arm = (arm * c).simplified();
    return affine(std::move(a));
  }
  case IndexExpr::Kind::Add:
  case IndexExpr::Kind::Sub: {
    bool add = e.kind() == IndexExpr::Kind::Add;
    auto a = minArms(e.lhs()), b = minArms(e.rhs());
    if (!a || !b || (!add && b->size() > 1) || a->size() * b->size() > kMaxArms)
      return std::nullopt;
    Arms out;
    for (const IndexExpr &x : *a)
      for (const IndexExpr &y : *b)
        out.push_back((add ? x + y : x - y).simplified());
    return affine(std::move(out));
  }
  }
  return std::nullopt;
}

IndexExpr rebuild(llvm::ArrayRef<IndexExpr> arms) {
  IndexExpr e = arms.front();
  for (const IndexExpr &arm : arms.drop_front())
    e = min(e, arm);
  return e;
}

int64_t coefficientOf(const IndexExpr &arm, const Value *v) {
  int64_t constant = 0;
  Terms terms;
  arm.linearForm(constant, terms);
  int64_t c = 0;
  for (const auto &[var, coeff] : terms)
    if (var == v)
      c += coeff;
  return c;
}

/// A canonical form of min(arms): each arm as [constant, id, coeff, ...] with
/// terms sorted by variable id, the arms sorted.
std::vector<std::vector<int64_t>> canonical(const Arms &arms) {
  std::vector<std::vector<int64_t>> out;
  for (const IndexExpr &arm : arms) {
    int64_t constant = 0;
    Terms terms;
    arm.linearForm(constant, terms);
    llvm::sort(terms, [](const auto &a, const auto &b) { return a.first->id < b.first->id; });
    std::vector<int64_t> key{constant};
    for (const auto &[var, coeff] : terms)
      if (coeff != 0)
        key.insert(key.end(), {int64_t(var->id), coeff});
    out.push_back(std::move(key));
  }
  llvm::sort(out);
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

int64_t positiveMod(int64_t a, int64_t m) { return ((a % m) + m) % m; }

} // namespace

LoopNestBounds::LoopNestBounds(llvm::ArrayRef<ForOp *> nest) : loops(nest.begin(), nest.end()) {
  for (unsigned i = 0; i < loops.size(); ++i) {
    loopIndex[loops[i]->iv] = i;
    envSize = std::max<size_t>(envSize, loops[i]->iv->id + 1);
  }
}

int LoopNestBounds::loopOf(const Value *v) const {
  auto it = loopIndex.find(v);
  return it == loopIndex.end() ? -1 : int(it->second);
}

std::optional<IndexExpr> LoopNestBounds::lastIteration(unsigned i) {
  const ForOp *l = loops[i];
  int64_t step = std::max<int64_t>(l->step, 1);
  IndexExpr span = (l->hi - l->lo).simplified();
  if (span.isConst()) {
    if (span.constValue() <= 0)
      return std::nullopt;
    return l->lo + (span.constValue() - 1) / step * step;
  }
  if (step == 1)
    return l->hi - 1;
  // A span that is always a multiple of the step ends exactly one step short of hi.
  if (auto arms = minArms(span)) {
    bool multiple = llvm::all_of(*arms, [&](const IndexExpr &arm) {
      auto r = residue(arm, step);
      return r && *r == 0;
    });
    if (multiple)
      return l->hi - step;
  }
  return l->hi - 1; // a bound: the last iteration is at most hi - 1
}

std::optional<Extreme> LoopNestBounds::extreme(const IndexExpr &e, bool wantMax,
                                               unsigned &budget) {
  if (budget == 0)
    return std::nullopt;
  --budget;
  auto constant = [&](const IndexExpr &c) -> std::optional<Extreme> {
    if (auto v = c.evalChecked({}))
      return Extreme{*v, llvm::SmallVector<std::optional<IndexExpr>, 8>(loops.size())};
    return std::nullopt;
  };
  llvm::SmallVector<const Value *, 4> mentioned;
  e.collectVars(mentioned);
  if (mentioned.empty())
    return constant(e);
  auto arms = minArms(e);
  if (!arms)
    return std::nullopt;
  int inner = -1;
  for (const IndexExpr &arm : *arms) {
    llvm::SmallVector<const Value *, 4> vars;
    arm.collectVars(vars);
    for (const Value *v : vars) {
      int i = loopOf(v);
      if (i < 0)
        return std::nullopt;
      inner = std::max(inner, i);
    }
  }
  auto minOverArms = [&](bool armMax) -> std::optional<Extreme> {
    std::optional<Extreme> best;
    for (const IndexExpr &arm : *arms) {
      auto r = extreme(arm, armMax, budget);
      if (!r)
        return std::nullopt;
      if (!best || r->value < best->value)
        best = std::move(r);
    }
    return best;
  };
  if (inner < 0) // the variables cancelled out
    return constant(rebuild(*arms));
  // The min of a min is the least of the arms' minima, exactly.
  if (!wantMax && arms->size() > 1)
    return minOverArms(false);
  const Value *x = loops[inner]->iv;
  int sign = 0;
  bool mixed = false;
  for (const IndexExpr &arm : *arms) {
    int64_t c = coefficientOf(arm, x);
    if (c == 0)
      continue;
    int s = c > 0 ? 1 : -1;
    mixed |= sign != 0 && s != sign;
    sign = s;
  }
  // Arms moving opposite ways: max(min(arms)) <= min over arms of max(arm).
  if (mixed)
    return minOverArms(true);
  IndexExpr e2 = rebuild(*arms);
  bool toLast = (sign > 0) == wantMax;
  IndexExpr bound = loops[inner]->lo;
  if (toLast) {
    auto last = lastIteration(inner);
    if (!last)
      return std::nullopt;
    bound = *last;
  }
  auto r = extreme(e2.substitute(x, bound), wantMax, budget);
  // A last iteration `min(arms)` that cannot be substituted whole (it would
  // be subtracted): each arm is beyond it, so each gives a bound, and the
  // tightest of those is kept.
  auto boundArms = r || !toLast ? std::nullopt : minArms(bound);
  if (boundArms && boundArms->size() > 1) {
    for (const IndexExpr &arm : *boundArms) {
      auto a = extreme(e2.substitute(x, arm), wantMax, budget);
      if (!a)
        return std::nullopt;
      if (!r || (wantMax ? a->value < r->value : a->value > r->value))
        r = std::move(a);
    }
  }
  if (r)
    r->at[inner] = bound;
  return r;
}

std::optional<Extreme> LoopNestBounds::min(const IndexExpr &e) {
  unsigned budget = kCallsPerQuery;
  return extreme(e, false, budget);
}

std::optional<Extreme> LoopNestBounds::max(const IndexExpr &e) {
  unsigned budget = kCallsPerQuery;
  return extreme(e, true, budget);
}

std::optional<int64_t> LoopNestBounds::residue(const IndexExpr &e, int64_t modulus) {
  if (modulus <= 0)
    return std::nullopt;
  int64_t constant = 0;
  Terms terms;
  if (!e.linearForm(constant, terms))
    return std::nullopt;
  int64_t r = positiveMod(constant, modulus);
  for (const auto &[v, coeff] : terms) {
    int i = loopOf(v);
    if (i < 0)
      return std::nullopt;
    const ForOp *l = loops[i];
    if (positiveMod(coeff, modulus) * positiveMod(l->step, modulus) % modulus != 0)
      return std::nullopt;
    auto first = residue(l->lo * coeff, modulus);
    if (!first)
      return std::nullopt;
    r = (r + *first) % modulus;
  }
  return r;
}

bool LoopNestBounds::equal(const IndexExpr &a, const IndexExpr &b) {
  auto armsA = minArms(a), armsB = minArms(b);
  if (armsA && armsB && canonical(*armsA) == canonical(*armsB))
    return true;
  auto isZero = [&](const IndexExpr &d) {
    auto lo = min(d), hi = max(d);
    return lo && hi && lo->value >= 0 && hi->value <= 0;
  };
  if (isZero(a - b) || isZero(b - a))
    return true;
  // Both constant over the nest, and the same constant.
  auto loA = min(a), hiA = max(a), loB = min(b), hiB = max(b);
  return loA && hiA && loB && hiB && loA->value == hiA->value && loB->value == hiB->value &&
         loA->value == loB->value;
}

bool LoopNestBounds::neverRuns(const ForOp *loop) {
  auto span = max(loop->hi - loop->lo);
  return span && span->value <= 0;
}

std::optional<llvm::SmallVector<int64_t, 8>>
LoopNestBounds::iterationOf(const Extreme &e) const {
  llvm::SmallVector<int64_t, 8> point;
  std::vector<int64_t> env(envSize, 0);
  for (unsigned i = 0; i < loops.size(); ++i) {
    const ForOp *l = loops[i];
    auto lo = l->lo.evalChecked(env), hi = l->hi.evalChecked(env);
    auto v = i < e.at.size() && e.at[i] ? e.at[i]->evalChecked(env) : lo;
    int64_t step = std::max<int64_t>(l->step, 1);
    if (!lo || !hi || !v || *v < *lo || *v >= *hi || (*v - *lo) % step != 0)
      return std::nullopt;
    env[l->iv->id] = *v;
    point.push_back(*v);
  }
  return point;
}

} // namespace tessel::ir

#include "ir/IndexExpr.h"
#include "ir/Kernel.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>

namespace tessel::ir {

IndexExpr::IndexExpr(int64_t c)
    : node(std::make_shared<const Node>(Node{Kind::Const, c, nullptr, nullptr, nullptr})) {}

IndexExpr IndexExpr::var(const Value *v) {
  return IndexExpr(std::make_shared<const Node>(Node{Kind::Var, 0, v, nullptr, nullptr}));
}

IndexExpr IndexExpr::make(Kind k, const IndexExpr &a, const IndexExpr &b) {
  return IndexExpr(std::make_shared<const Node>(Node{k, 0, nullptr, a.node, b.node}));
}

// Constants fold unless the result overflows; the node is kept then, so that
// evalChecked reports the overflow.
IndexExpr operator+(const IndexExpr &a, const IndexExpr &b) {
  int64_t r;
  if (a.isConst() && b.isConst() && !__builtin_add_overflow(a.constValue(), b.constValue(), &r))
    return r;
  if (a.isConst() && a.constValue() == 0)
    return b;
  if (b.isConst() && b.constValue() == 0)
    return a;
  return IndexExpr::make(IndexExpr::Kind::Add, a, b);
}

IndexExpr operator-(const IndexExpr &a, const IndexExpr &b) {
  int64_t r;
  if (a.isConst() && b.isConst() && !__builtin_sub_overflow(a.constValue(), b.constValue(), &r))
    return r;
  if (b.isConst() && b.constValue() == 0)
    return a;
  if (a.structurallyEqual(b))
    return 0;
  return IndexExpr::make(IndexExpr::Kind::Sub, a, b);
}

IndexExpr operator*(const IndexExpr &a, int64_t c) {
  int64_t r;
  if (a.isConst() && !__builtin_mul_overflow(a.constValue(), c, &r))
    return r;
  if (c == 1)
    return a;
  if (c == 0)
    return 0;
  return IndexExpr::make(IndexExpr::Kind::Mul, a, c);
}

IndexExpr min(const IndexExpr &a, const IndexExpr &b) {
  if (a.isConst() && b.isConst())
    return std::min(a.constValue(), b.constValue());
  if (a.structurallyEqual(b))
    return a;
  return IndexExpr::make(IndexExpr::Kind::Min, a, b);
}

int64_t IndexExpr::eval(llvm::ArrayRef<int64_t> env) const {
  switch (node->kind) {
  case Kind::Const: return node->constant;
  case Kind::Var: return env[node->var->id];
  case Kind::Add: return lhs().eval(env) + rhs().eval(env);
  case Kind::Sub: return lhs().eval(env) - rhs().eval(env);
  case Kind::Mul: return lhs().eval(env) * rhs().eval(env);
  case Kind::Min: return std::min(lhs().eval(env), rhs().eval(env));
  }
  return 0;
}

std::optional<int64_t> IndexExpr::evalChecked(llvm::ArrayRef<int64_t> env) const {
  switch (kind()) {
  case Kind::Const: return constValue();
  case Kind::Var:
    if (varValue()->id >= env.size())
      return std::nullopt;
    return env[varValue()->id];
  default: break;
  }
  auto a = lhs().evalChecked(env), b = rhs().evalChecked(env);
  if (!a || !b)
    return std::nullopt;
  int64_t r;
  switch (kind()) {
  case Kind::Add:
    if (__builtin_add_overflow(*a, *b, &r))
      return std::nullopt;
    return r;
  case Kind::Sub:
    if (__builtin_sub_overflow(*a, *b, &r))
      return std::nullopt;
    return r;
  case Kind::Mul:
    if (__builtin_mul_overflow(*a, *b, &r))
      return std::nullopt;
    return r;
  case Kind::Min: return std::min(*a, *b);
  default: return std::nullopt;
  }
}

void IndexExpr::collectVars(llvm::SmallVectorImpl<const Value *> &vars) const {
  if (node->kind == Kind::Var) {
    if (std::find(vars.begin(), vars.end(), node->var) == vars.end())
      vars.push_back(node->var);
    return;
  }
  if (node->lhs)
    lhs().collectVars(vars);
  if (node->rhs)
    rhs().collectVars(vars);
}

bool IndexExpr::mentions(const Value *v) const {
  llvm::SmallVector<const Value *, 4> vars;
  collectVars(vars);
  return std::find(vars.begin(), vars.end(), v) != vars.end();
}

IndexExpr IndexExpr::substitute(const Value *from, const IndexExpr &to) const {
  switch (node->kind) {
  case Kind::Const: return *this;
  case Kind::Var: return node->var == from ? to : *this;
  case Kind::Add: return lhs().substitute(from, to) + rhs().substitute(from, to);
  case Kind::Sub: return lhs().substitute(from, to) - rhs().substitute(from, to);
  case Kind::Mul: return lhs().substitute(from, to) * rhs().constValue();
  case Kind::Min: return min(lhs().substitute(from, to), rhs().substitute(from, to));
  }
  return *this;
}

bool IndexExpr::structurallyEqual(const IndexExpr &other) const {
  if (node == other.node)
    return true;
  if (node->kind != other.node->kind)
    return false;
  switch (node->kind) {
  case Kind::Const: return node->constant == other.node->constant;
  case Kind::Var: return node->var == other.node->var;
  default:
    return lhs().structurallyEqual(other.lhs()) && rhs().structurallyEqual(other.rhs());
  }
}

namespace {
/// Accumulates `scale * e` into a linear form; false when `e` holds a min()
/// or a coefficient overflows.
bool linearize(const IndexExpr &e, int64_t scale, int64_t &constant,
               llvm::SmallVectorImpl<std::pair<const Value *, int64_t>> &terms) {
  int64_t product, negated;
  switch (e.kind()) {
  case IndexExpr::Kind::Const:
    return !__builtin_mul_overflow(scale, e.constValue(), &product) &&
           !__builtin_add_overflow(constant, product, &constant);
  case IndexExpr::Kind::Var: {
    for (auto &t : terms)
      if (t.first == e.varValue())
        return !__builtin_add_overflow(t.second, scale, &t.second);
    terms.push_back({e.varValue(), scale});
    return true;
  }
  case IndexExpr::Kind::Add:
    return linearize(e.lhs(), scale, constant, terms) && linearize(e.rhs(), scale, constant, terms);
  case IndexExpr::Kind::Sub:
    return !__builtin_sub_overflow(int64_t(0), scale, &negated) &&
           linearize(e.lhs(), scale, constant, terms) &&
           linearize(e.rhs(), negated, constant, terms);
  case IndexExpr::Kind::Mul:
    return !__builtin_mul_overflow(scale, e.rhs().constValue(), &product) &&
           linearize(e.lhs(), product, constant, terms);
  case IndexExpr::Kind::Min: return false;
  }
  return false;
}
} // namespace

bool IndexExpr::linearForm(int64_t &constant,
                           llvm::SmallVectorImpl<std::pair<const Value *, int64_t>> &terms) const {
  return linearize(*this, 1, constant, terms);
}

bool IndexExpr::isAffine() const {
  int64_t constant = 0;
  llvm::SmallVector<std::pair<const Value *, int64_t>, 4> terms;
  return linearForm(constant, terms);
}

bool IndexExpr::advancesWith(const Value *v) const {
  int64_t constant = 0;
  llvm::SmallVector<std::pair<const Value *, int64_t>, 4> terms;
  if (!linearForm(constant, terms))
    return false;
  return llvm::count_if(terms, [&](auto &t) { return t.first == v && t.second == 1; }) == 1 &&
         llvm::none_of(terms, [&](auto &t) { return t.first == v && t.second != 1; });
}

IndexExpr IndexExpr::simplified() const {
  if (kind() == Kind::Min)
    return min(lhs().simplified(), rhs().simplified());
  int64_t constant = 0;
  llvm::SmallVector<std::pair<const Value *, int64_t>, 4> terms;
  if (!linearize(*this, 1, constant, terms))
    return make(kind(), lhs().simplified(), rhs().simplified());
  // Positive terms, then the constant, then the subtracted terms: `647 - %m`.
  IndexExpr out = 0;
  for (const auto &[v, coeff] : terms)
    if (coeff > 0)
      out = out + IndexExpr::var(v) * coeff;
  if (constant > 0)
    out = out + constant;
  for (const auto &[v, coeff] : terms)
    if (coeff < 0)
      out = out - IndexExpr::var(v) * -coeff;
  if (constant < 0)
    out = out - (-constant);
  return out;
}

// Precedence: 1 = additive, 2 = multiplicative, 3 = atom.
void IndexExpr::printPrec(llvm::raw_ostream &os, int prec) const {
  switch (node->kind) {
  case Kind::Const: os << node->constant; return;
  case Kind::Var: os << '%' << node->var->name; return;
  case Kind::Min:
    os << "min(";
    lhs().printPrec(os, 0);
    os << ", ";
    rhs().printPrec(os, 0);
    os << ')';
    return;
  case Kind::Mul:
    if (prec > 2)
      os << '(';
    lhs().printPrec(os, 2);
    os << '*';
    rhs().printPrec(os, 3);
    if (prec > 2)
      os << ')';
    return;
  case Kind::Add:
  case Kind::Sub:
    if (prec > 1)
      os << '(';
    lhs().printPrec(os, 1);
    os << (node->kind == Kind::Add ? " + " : " - ");
    rhs().printPrec(os, 2);
    if (prec > 1)
      os << ')';
    return;
  }
}

void IndexExpr::print(llvm::raw_ostream &os) const { printPrec(os, 0); }

std::string IndexExpr::str() const {
  std::string s;
  llvm::raw_string_ostream os(s);
  print(os);
  return os.str();
}

} // namespace tessel::ir

//===- compiler/Reference.cpp - Plain fp32 evaluation of a kernel ----------===//
#include "compiler/Reference.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <memory>

using namespace tessel::ast;

namespace tessel::compiler {

namespace {

using Value = std::shared_ptr<const HostTensor>;

llvm::Error fail(const std::string &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

std::string shapeText(const std::vector<int64_t> &shape) {
  return "[" + llvm::join(llvm::map_range(shape, [](int64_t d) { return std::to_string(d); }), " x ") + "]";
}

HostTensor zeros(int64_t rows, int64_t cols) {
  HostTensor t;
  t.shape = {rows, cols};
  t.data.assign(size_t(rows * cols), 0.0f);
  t.error.assign(size_t(rows * cols), 0.0f);
  return t;
}

double errorAt(const HostTensor &t, size_t i) { return t.error.empty() ? 0.0 : double(t.error[i]); }

/// Adds the rounding of storing each element in bf16 (ErrorModel).
void addStoreRounding(HostTensor &t) {
  for (size_t i = 0; i < t.data.size(); ++i)
    t.error[i] = float(double(t.error[i]) + ErrorModel::kStoreRoundoff * std::fabs(double(t.data[i])));
}

/// What a product takes of each element of an operand.
enum class Term { Value, Square, ErrorSquare };

float termAt(const HostTensor &t, Term term, size_t i) {
  float v = term == Term::ErrorSquare ? t.error[i] : t.at(i);
  return term == Term::Value ? v : v * v;
}

/// Rows [r0, r0 + rows) and columns [c0, c0 + cols) of `term` of t, row-major.
void blockOf(const HostTensor &t, Term term, int64_t r0, int64_t rows, int64_t c0, int64_t cols,
             std::vector<float> &out) {
  out.resize(size_t(rows * cols));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      out[size_t(r * cols + c)] = termAt(t, term, size_t((r0 + r) * t.shape[1] + c0 + c));
}

/// C = fx(X) @ fy(Y). Operands that are not float32 values in memory (bf16
/// inputs, squares) are made a panel at a time -- row panels of X, column
/// panels of Y, about 16 MiB each -- so no whole copy of an input is made;
/// every element of C still comes from one product over the full k.
void gemmOf(const HostTensor &x, Term fx, const HostTensor &y, Term fy, float *c) {
  const int64_t m = x.shape[0], k = x.shape[1], n = y.shape[1];
  const float *xv = fx == Term::Value ? x.floats() : nullptr, *yv = fy == Term::Value ? y.floats() : nullptr;
  const int64_t panel = std::max<int64_t>(64, (int64_t(1) << 22) / std::max<int64_t>(k, 1));
  const int64_t mStep = xv ? m : panel, nStep = yv ? n : panel;
  std::vector<float> xp, yp;
  for (int64_t n0 = 0; n0 < n; n0 += nStep) {
    const int64_t nn = std::min(nStep, n - n0);
    if (!yv)
      blockOf(y, fy, 0, k, n0, nn, yp);
    for (int64_t m0 = 0; m0 < m; m0 += mStep) {
      const int64_t mm = std::min(mStep, m - m0);
      if (!xv)
        blockOf(x, fx, m0, mm, 0, k, xp);
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(mm), int(nn), int(k), 1.0f,
                  xv ? xv + m0 * k : xp.data(), int(k), yv ? yv + n0 : yp.data(), yv ? int(n) : int(nn), 0.0f,
                  c + m0 * n + n0, int(n));
    }
  }
}

/// The error estimate of C = X @ Y (ErrorModel): the operands' errors through
/// the products, and the fp32 accumulation over k terms, as root sums of
/// squares, then C's own rounding.
void matmulError(const HostTensor &x, const HostTensor &y, HostTensor &c, int64_t kBlock) {
  int64_t k = x.shape[1];
  std::vector<float> sum(c.data.size()), term(c.data.size());
  // Accumulation: each of the k additions rounds a partial sum no larger
  // than sqrt(k) times the products' root sum of squares.
  gemmOf(x, Term::Square, y, Term::Square, sum.data());
  double accum = ErrorModel::kAccumRoundoff * double(k);
  // K-blocked with its running sum stored in bf16 (strip-accumulate): B
  // blocks round B - 1 partial sums, the j-th typically sqrt(j / B) times
  // the products' root sum of squares, (B - 1) / 2 of it in squares.
  double blocks = kBlock > 0 && k > kBlock ? double((k + kBlock - 1) / kBlock) : 1;
  double partial = ErrorModel::kStoreRoundoff * ErrorModel::kStoreRoundoff * (blocks - 1) / 2;
  for (float &v : sum)
    v = float((accum * accum + partial) * double(v));
  if (!x.error.empty()) {
    gemmOf(x, Term::ErrorSquare, y, Term::Square, term.data());
    for (size_t i = 0; i < sum.size(); ++i)
      sum[i] += term[i];
  }
  if (!y.error.empty()) {
    gemmOf(x, Term::Square, y, Term::ErrorSquare, term.data());
    for (size_t i = 0; i < sum.size(); ++i)
      sum[i] += term[i];
  }
  for (size_t i = 0; i < sum.size(); ++i)
    c.error[i] = std::sqrt(sum[i]);
  addStoreRounding(c);
}

class Evaluator {
public:
  std::map<std::string, Value> env;
  int64_t kBlock = 0; ///< ReferenceOptions::kBlock

  llvm::Expected<Value> eval(const Expr &e) {
    switch (e.kind) {
    case ExprKind::Ref: {
      auto it = env.find(e.name);
      if (it == env.end())
        return fail(fmt::format("reference: '{}' has no value (was the kernel type-checked?)", e.name));
      return it->second;
    }
    case ExprKind::MatMul:
      return evalMatMul(e);
    case ExprKind::Binary:
      return evalBinary(e);
    case ExprKind::Unary:
      return evalUnary(e);
    case ExprKind::Transpose: {
      auto a = eval(*e.lhs);
      if (!a)
        return a.takeError();
      const HostTensor &x = **a;
      int64_t r = x.shape[0], c = x.shape[1];
      auto out = std::make_shared<HostTensor>(zeros(c, r));
      for (int64_t i = 0; i < r; ++i)
        for (int64_t j = 0; j < c; ++j) {
          out->data[size_t(j * r + i)] = x.at(size_t(i * c + j));
          out->error[size_t(j * r + i)] = float(errorAt(x, size_t(i * c + j)));
        }
      return Value(out);
    }
    }
    return fail("reference: unknown expression kind");
  }

private:
  /// Both operands of a binary node, left then right.
  llvm::Expected<std::pair<Value, Value>> evalOperands(const Expr &e) {
    auto a = eval(*e.lhs);
    if (!a)
      return a.takeError();
    auto b = eval(*e.rhs);
    if (!b)
      return b.takeError();
    return std::make_pair(*a, *b);
  }

  llvm::Expected<Value> evalMatMul(const Expr &e) {
    auto ops = evalOperands(e);
    if (!ops)
      return ops.takeError();
    const HostTensor &x = *ops->first, &y = *ops->second;
    int64_t m = x.shape[0], k = x.shape[1], n = y.shape[1];
    if (y.shape[0] != k)
      return fail(fmt::format("reference: inner dimensions differ: {} @ {}", shapeText(x.shape),
                              shapeText(y.shape)));
    if (m > INT_MAX || n > INT_MAX || k > INT_MAX)
      return fail("reference: matrix too large for BLAS");
    auto out = std::make_shared<HostTensor>(zeros(m, n));
    gemmOf(x, Term::Value, y, Term::Value, out->data.data());
    matmulError(x, y, *out, kBlock);
    return Value(out);
  }

  llvm::Expected<Value> evalBinary(const Expr &e) {
    auto ops = evalOperands(e);
    if (!ops)
      return ops.takeError();
    const HostTensor &x = *ops->first, &y = *ops->second;
    if (x.shape != y.shape)
      return fail(fmt::format("reference: elementwise shapes differ: {} vs {}", shapeText(x.shape),
                              shapeText(y.shape)));
    auto out = std::make_shared<HostTensor>(zeros(x.shape[0], x.shape[1]));
    bool mul = e.binOp == BinaryOp::Mul;
    for (size_t i = 0; i < out->data.size(); ++i) {
      float xi = x.at(i), yi = y.at(i);
      out->data[i] = mul ? xi * yi : xi + yi;
      // First order: d(xy) = y dx + x dy, d(x + y) = dx + dy. A product
      // also keeps its second-order term dx dy, taken (like activations) over
      // the interval the check allows and scaled back: kErrorBoundFactor dx dy.
      // Without it the product of two values near 0 had an estimate near 0
      // (h * h of an h the kernel rounds across 0 failed the check).
      double ex = errorAt(x, i) * (mul ? std::fabs(double(yi)) : 1.0);
      double ey = errorAt(y, i) * (mul ? std::fabs(double(xi)) : 1.0);
      double second = mul ? kErrorBoundFactor * errorAt(x, i) * errorAt(y, i) : 0.0;
      out->error[i] = float(std::sqrt(ex * ex + ey * ey) + second);
    }
    addStoreRounding(*out);
    return Value(out);
  }

  llvm::Expected<Value> evalUnary(const Expr &e) {
    auto a = eval(*e.lhs);
    if (!a)
      return a.takeError();
    const HostTensor &x = **a;
    auto out = std::make_shared<HostTensor>(zeros(x.shape[0], x.shape[1]));
    for (size_t i = 0; i < out->data.size(); ++i) {
      double v = double(x.at(i)), fv = applyActFn(e.unaryFn, v);
      out->data[i] = float(fv);
      // How far f moves over the operand's error interval, taken as wide as
      // the check allows (kErrorBoundFactor) and scaled back: where f is
      // smooth this is |f'| times the error, and a kink within reach (relu
      // of a value near 0, which the kernel's rounding may put on the other
      // side) keeps its share instead of a zero estimate.
      double ev = errorAt(x, i) * kErrorBoundFactor;
      out->error[i] = float(std::max(std::fabs(applyActFn(e.unaryFn, v + ev) - fv),
                                     std::fabs(applyActFn(e.unaryFn, v - ev) - fv)) /
                            kErrorBoundFactor);
    }
    addStoreRounding(*out);
    return Value(out);
  }
};

} // namespace

llvm::Expected<std::map<std::string, HostTensor>>
evaluateReference(const Kernel &kernel, const std::map<std::string, HostTensor> &inputs,
                  int64_t kBlock) {
  Evaluator ev;
  ev.kBlock = kBlock;
  for (const Param &p : kernel.params) {
    auto it = inputs.find(p.name);
    if (it == inputs.end())
      return fail(fmt::format("reference: no input for parameter '{}' of kernel '{}'", p.name, kernel.name));
    const HostTensor &t = it->second;
    std::vector<int64_t> want = {p.type.rows, p.type.cols};
    if (t.shape != want)
      return fail(fmt::format("reference: input '{}' has shape {}, but the parameter is {}", p.name,
                              shapeText(t.shape), formatType(p.type)));
    size_t values = !t.bf16.empty() ? t.bf16.size() : !t.f32.empty() ? t.f32.size() : t.data.size();
    if (values != size_t(p.type.rows * p.type.cols))
      return fail(fmt::format("reference: input '{}' has {} values, its shape {} needs {}", p.name, values,
                              shapeText(t.shape), p.type.rows * p.type.cols));
    // Non-owning: the caller's inputs outlive the evaluation, and weights are big.
    ev.env[p.name] = Value(&t, [](const HostTensor *) {});
  }
  for (const auto &[name, t] : inputs)
    if (!ev.env.count(name))
      return fail(fmt::format("reference: input '{}' is not a parameter of kernel '{}'", name, kernel.name));
  if (kernel.body.empty() || !kernel.body.back().isReturn())
    return fail(fmt::format("reference: kernel '{}' has no return statement", kernel.name));

  for (const Stmt &s : kernel.body) {
    auto v = ev.eval(*s.value);
    if (!v)
      return v.takeError();
    if (s.isReturn()) {
      std::map<std::string, HostTensor> out;
      out[kReferenceResultKey] = **v;
      return out;
    }
    ev.env[s.name] = *v;
  }
  return fail("reference: unreachable");
}

} // namespace tessel::compiler

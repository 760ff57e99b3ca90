//===- compiler/Reference.cpp - Plain fp32 evaluation of a kernel ----------===//
#include "compiler/Reference.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <limits>
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

/// Adds the rounding of storing each element (`roundoff`: ErrorModel's
/// bf16 or fp32 unit).
void addStoreRounding(HostTensor &t, double roundoff) {
  for (size_t i = 0; i < t.data.size(); ++i)
    t.error[i] = float(double(t.error[i]) + roundoff * std::fabs(double(t.data[i])));
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
void matmulError(const HostTensor &x, const HostTensor &y, HostTensor &c, int64_t kBlock, double storeRoundoff) {
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
  double partial = storeRoundoff * storeRoundoff * (blocks - 1) / 2;
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
  addStoreRounding(c, storeRoundoff);
}

class Evaluator {
public:
  std::map<std::string, Value> env;
  /// The values with heads, one per head.
  std::map<std::string, std::vector<Value>> headEnv;
  int64_t kBlock = 0; ///< ReferenceOptions::kBlock
  double storeRoundoff = ErrorModel::kStoreRoundoff; ///< storeRoundoff(kernel)
  /// While evaluating a value with heads: its head `head` of `heads`, which
  /// reads head head / (heads / G) of a value of G heads.
  int64_t head = 0, heads = 0;

  llvm::Expected<Value> eval(const Expr &e) {
    switch (e.kind) {
    case ExprKind::Ref: {
      auto h = headEnv.find(e.name);
      if (h != headEnv.end() && heads > 0)
        return h->second[size_t(head / (heads / int64_t(h->second.size())))];
      auto it = env.find(e.name);
      if (it == env.end())
        return fail(fmt::format("reference: '{}' has no value (was the kernel type-checked?)", e.name));
      return it->second;
    }
    case ExprKind::MergeHeads:
      return evalMergeHeads(e);
    case ExprKind::MatMul:
      return evalMatMul(e);
    case ExprKind::Binary:
      return evalBinary(e);
    case ExprKind::Unary:
      return evalUnary(e);
    case ExprKind::Reduce:
      return evalReduce(e);
    case ExprKind::Number: {
      auto out = std::make_shared<HostTensor>(zeros(1, 1));
      out->data[0] = float(e.number);
      return Value(out);
    }
    case ExprKind::Call:
      return fail("reference: a call was not inlined");
    case ExprKind::Causal:
      return evalCausal(e);
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
    matmulError(x, y, *out, kBlock, storeRoundoff);
    return Value(out);
  }

  /// The value of `op` (ALU semantics: comparisons give 1 or 0), in fp64.
  static double apply(BinaryOp op, double x, double y) {
    switch (op) {
    case BinaryOp::Mul: return x * y;
    case BinaryOp::Add: return x + y;
    case BinaryOp::Sub: return x - y;
    case BinaryOp::Div: return x / y;
    case BinaryOp::Lt: return x < y;
    case BinaryOp::Le: return x <= y;
    case BinaryOp::Gt: return x > y;
    case BinaryOp::Ge: return x >= y;
    case BinaryOp::Eq: return x == y;
    case BinaryOp::Ne: return x != y;
    }
    return 0;
  }

  /// The error estimate of x op y from the operands' errors ex, ey: first
  /// order, plus (as activations do) the second-order term of a product or
  /// quotient over the interval the check allows. A comparison within reach
  /// of flipping may be off by 1.
  static double binaryError(BinaryOp op, double x, double y, double ex, double ey) {
    switch (op) {
    case BinaryOp::Add:
    case BinaryOp::Sub:
      return std::sqrt(ex * ex + ey * ey);
    case BinaryOp::Mul: {
      double a = ex * std::fabs(y), b = ey * std::fabs(x);
      return std::sqrt(a * a + b * b) + kErrorBoundFactor * ex * ey;
    }
    case BinaryOp::Div: {
      double wide = kErrorBoundFactor * ey;
      if (std::fabs(y) <= wide)
        return std::numeric_limits<float>::infinity(); // the divisor may be 0
      double a = ex / std::fabs(y), b = ey * std::fabs(x) / (y * y);
      return std::sqrt(a * a + b * b) * std::fabs(y) / (std::fabs(y) - wide);
    }
    default: {
      double reach = kErrorBoundFactor * std::sqrt(ex * ex + ey * ey);
      return std::fabs(x - y) <= reach ? 1.0 / kErrorBoundFactor : 0.0;
    }
    }
  }

  // Numpy broadcasting over two dimensions: an operand of 1 row (column)
  // is read at row (column) 0 for every row (column) of the result.
  llvm::Expected<Value> evalBinary(const Expr &e) {
    auto ops = evalOperands(e);
    if (!ops)
      return ops.takeError();
    const HostTensor &x = *ops->first, &y = *ops->second;
    auto broadcast = [](int64_t a, int64_t b) { return a == 1 ? b : a; };
    int64_t rows = broadcast(x.shape[0], y.shape[0]), cols = broadcast(x.shape[1], y.shape[1]);
    for (const HostTensor *t : {&x, &y})
      if ((t->shape[0] != rows && t->shape[0] != 1) || (t->shape[1] != cols && t->shape[1] != 1))
        return fail(fmt::format("reference: elementwise shapes do not broadcast: {} vs {}",
                                shapeText(x.shape), shapeText(y.shape)));
    auto out = std::make_shared<HostTensor>(zeros(rows, cols));
    auto index = [](const HostTensor &t, int64_t r, int64_t c) {
      return size_t((t.shape[0] == 1 ? 0 : r) * t.shape[1] + (t.shape[1] == 1 ? 0 : c));
    };
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        size_t i = size_t(r * cols + c), ix = index(x, r, c), iy = index(y, r, c);
        double xi = x.at(ix), yi = y.at(iy);
        out->data[i] = float(apply(e.binOp, xi, yi));
        out->error[i] = float(binaryError(e.binOp, xi, yi, errorAt(x, ix), errorAt(y, iy)));
      }
    addStoreRounding(*out, storeRoundoff);
    return Value(out);
  }

  // x[i, j] where j <= i + offset, else the fill (exact: no error).
public:
  /// Each head of `e` (in `count` of them), evaluated in turn.
  llvm::Expected<std::vector<Value>> evalHeads(const Expr &e, int64_t count) {
    int64_t savedHead = head, savedHeads = heads;
    std::vector<Value> parts;
    for (int64_t h = 0; h < count; ++h) {
      head = h;
      heads = count;
      auto v = eval(e);
      if (!v) {
        head = savedHead;
        heads = savedHeads;
        return v.takeError();
      }
      parts.push_back(*v);
    }
    head = savedHead;
    heads = savedHeads;
    return parts;
  }

private:
  /// merge_heads(x): head h of x in columns h * D .. h * D + D - 1.
  llvm::Expected<Value> evalMergeHeads(const Expr &e) {
    auto parts = evalHeads(*e.lhs, e.lhs->type.heads);
    if (!parts)
      return parts.takeError();
    int64_t rows = e.type.rows, d = e.lhs->type.cols, cols = e.type.cols;
    auto out = std::make_shared<HostTensor>(zeros(rows, cols));
    for (size_t h = 0; h < parts->size(); ++h) {
      const HostTensor &x = *(*parts)[h];
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < d; ++c) {
          size_t to = size_t(r * cols + int64_t(h) * d + c), from = size_t(r * d + c);
          out->data[to] = x.at(from);
          out->error[to] = float(errorAt(x, from));
        }
    }
    return Value(out);
  }

  llvm::Expected<Value> evalCausal(const Expr &e) {
    auto a = eval(*e.lhs);
    if (!a)
      return a.takeError();
    const HostTensor &x = **a;
    int64_t rows = x.shape[0], cols = x.shape[1];
    auto out = std::make_shared<HostTensor>(zeros(rows, cols));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        size_t i = size_t(r * cols + c);
        bool keep = c <= r + e.offset;
        out->data[i] = keep ? x.at(i) : float(e.number);
        out->error[i] = keep ? float(errorAt(x, i)) : 0.0f;
      }
    addStoreRounding(*out, storeRoundoff);
    return Value(out);
  }

  // The rows folded over their columns, in fp64. Sum and mean: the operand
  // errors as a root sum of squares; max and min move by at most the
  // largest error of the row.
  llvm::Expected<Value> evalReduce(const Expr &e) {
    auto a = eval(*e.lhs);
    if (!a)
      return a.takeError();
    const HostTensor &x = **a;
    int64_t rows = x.shape[0], cols = x.shape[1];
    auto out = std::make_shared<HostTensor>(zeros(rows, 1));
    for (int64_t r = 0; r < rows; ++r) {
      double acc = e.reduceOp == ReduceOp::Max   ? -HUGE_VAL
                   : e.reduceOp == ReduceOp::Min ? HUGE_VAL
                                                 : 0.0;
      double sq = 0, largest = 0, values = 0;
      for (int64_t c = 0; c < cols; ++c) {
        size_t i = size_t(r * cols + c);
        double v = x.at(i), ev = errorAt(x, i);
        acc = e.reduceOp == ReduceOp::Max ? std::max(acc, v) : e.reduceOp == ReduceOp::Min ? std::min(acc, v) : acc + v;
        sq += ev * ev;
        values += v * v;
        largest = std::max(largest, ev);
      }
      bool sum = e.reduceOp == ReduceOp::Sum || e.reduceOp == ReduceOp::Mean;
      // A sum's fp32 accumulation, as a matmul's (matmulError): what bounds
      // a cancelling sum once the stores round at fp32's unit.
      double accum = ErrorModel::kAccumRoundoff * double(cols);
      if (sum)
        sq += accum * accum * values;
      double scale = e.reduceOp == ReduceOp::Mean ? 1.0 / double(cols) : 1.0;
      out->data[size_t(r)] = float(acc * scale);
      out->error[size_t(r)] = float((sum ? std::sqrt(sq) : largest) * scale);
    }
    addStoreRounding(*out, storeRoundoff);
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
    addStoreRounding(*out, storeRoundoff);
    return Value(out);
  }
};


/// Head `head` of a parameter's input: its rows of the head's slice, read in
/// place (the whole input when the parameter has no heads).
HostTensor headOf(const HostTensor &t, const TensorType &type, int64_t head) {
  llvm::ArrayRef<float> f32 = t.f32.empty() ? llvm::ArrayRef<float>(t.data) : t.f32;
  if (type.heads == 0)
    return HostTensor{t.shape, {}, {}, t.bf16.empty() ? f32 : llvm::ArrayRef<float>(), t.bf16};
  size_t n = size_t(type.rows * type.cols), at = size_t(head) * n;
  HostTensor h;
  h.shape = {type.rows, type.cols};
  if (!t.bf16.empty())
    h.bf16 = t.bf16.slice(at, n);
  else
    h.f32 = f32.slice(at, n);
  return h;
}

/// Appends a head's result (values and error estimates) to `out`.
void appendHead(const HostTensor &head, HostTensor &out) {
  size_t n = !head.data.empty() ? head.data.size() : !head.bf16.empty() ? head.bf16.size() : head.f32.size();
  for (size_t i = 0; i < n; ++i) {
    out.data.push_back(head.at(i));
    out.error.push_back(head.error.empty() ? 0.0f : head.error[i]);
  }
}

/// Evaluates `kernel`'s statements in order, one with heads head by head;
/// returns the result (its heads' rows one after another).
llvm::Expected<HostTensor> evaluateKernel(const Kernel &kernel, Evaluator &ev) {
  for (const Stmt &s : kernel.body) {
    int64_t heads = s.value->type.heads;
    if (heads == 0) {
      auto v = ev.eval(*s.value);
      if (!v)
        return v.takeError();
      if (s.isReturn())
        return **v;
      ev.env[s.name] = *v;
      continue;
    }
    auto parts = ev.evalHeads(*s.value, heads);
    if (!parts)
      return parts.takeError();
    if (!s.isReturn()) {
      ev.headEnv[s.name] = std::move(*parts);
      continue;
    }
    HostTensor all;
    all.shape = {heads, s.value->type.rows, s.value->type.cols};
    for (const Value &part : *parts)
      appendHead(*part, all);
    return all;
  }
  return fail("reference: unreachable");
}

} // namespace

bool allF32(const Kernel &kernel) {
  bool all = kernel.resultType.dtype == DType::F32;
  for (const Param &p : kernel.params)
    all &= p.type.dtype == DType::F32;
  return all;
}

double storeRoundoff(const Kernel &kernel) {
  return allF32(kernel) ? ErrorModel::kF32StoreRoundoff : ErrorModel::kStoreRoundoff;
}

// A value with heads is evaluated head by head: its head h (of H) reads head
// h / (H / G) of a value of G heads (Sema: G divides H).
llvm::Expected<std::map<std::string, HostTensor>>
evaluateReference(const Kernel &kernel, const std::map<std::string, HostTensor> &inputs,
                  int64_t kBlock) {
  for (const Param &p : kernel.params) {
    auto it = inputs.find(p.name);
    if (it == inputs.end())
      return fail(fmt::format("reference: no input for parameter '{}' of kernel '{}'", p.name, kernel.name));
    const HostTensor &t = it->second;
    int64_t heads = std::max<int64_t>(p.type.heads, 1);
    std::vector<int64_t> want = {p.type.rows, p.type.cols};
    if (p.type.heads > 0)
      want.insert(want.begin(), p.type.heads);
    // The simulator holds a tensor with heads as its heads' rows one after another.
    std::vector<int64_t> flat = {heads * p.type.rows, p.type.cols};
    if (t.shape != want && t.shape != flat)
      return fail(fmt::format("reference: input '{}' has shape {}, but the parameter is {}", p.name,
                              shapeText(t.shape), formatType(p.type)));
    size_t values = !t.bf16.empty() ? t.bf16.size() : !t.f32.empty() ? t.f32.size() : t.data.size();
    if (values != size_t(heads * p.type.rows * p.type.cols))
      return fail(fmt::format("reference: input '{}' has {} values, its shape {} needs {}", p.name, values,
                              shapeText(t.shape), heads * p.type.rows * p.type.cols));
  }
  for (const auto &input : inputs) {
    const std::string &name = input.first;
    if (!llvm::any_of(kernel.params, [&](const Param &p) { return p.name == name; }))
      return fail(fmt::format("reference: input '{}' is not a parameter of kernel '{}'", name, kernel.name));
  }
  if (kernel.body.empty() || !kernel.body.back().isReturn())
    return fail(fmt::format("reference: kernel '{}' has no return statement", kernel.name));

  Evaluator ev;
  ev.kBlock = kBlock;
  ev.storeRoundoff = storeRoundoff(kernel);
  for (const Param &p : kernel.params) {
    const HostTensor &t = inputs.at(p.name);
    if (p.type.heads == 0) {
      // Non-owning: the caller's inputs outlive the evaluation, and weights are big.
      ev.env[p.name] = Value(&t, [](const HostTensor *) {});
      continue;
    }
    for (int64_t g = 0; g < p.type.heads; ++g)
      ev.headEnv[p.name].push_back(std::make_shared<HostTensor>(headOf(t, p.type, g)));
  }
  auto v = evaluateKernel(kernel, ev);
  if (!v)
    return v.takeError();
  std::map<std::string, HostTensor> out;
  out[kReferenceResultKey] = std::move(*v);
  return out;
}

} // namespace tessel::compiler

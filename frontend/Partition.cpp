//===- frontend/Partition.cpp - Tensor-parallel sharding of a kernel ------===//
#include "frontend/Partition.h"

#include "fmt/format.h"

#include <map>

namespace tessel::frontend {

char TensorParallelError::ID = 0;

namespace {

using ast::Expr;
using ast::ExprKind;

llvm::Error error(llvm::SMLoc loc, const std::string &message) {
  return llvm::make_error<TensorParallelError>(loc, "--tp: " + message);
}

class Planner {
public:
  Planner(const ast::Kernel &k, int cores) : kernel(k) {
    plan.cores = cores;
    plan.params.assign(k.params.size(), ShardAxis::None);
    for (size_t i = 0; i < k.params.size(); ++i)
      paramIndex[k.params[i].name] = i;
    for (const ast::Stmt &s : k.body)
      if (!s.isReturn())
        stmts[s.name] = s.value.get();
  }

  llvm::Expected<TensorParallelPlan> run() {
    std::vector<const Expr *> factors;
    flatten(*kernel.returnStmt().value, factors);
    if (factors.size() < 2)
      return error(kernel.returnStmt().loc,
                   "the kernel's result is not a matrix product; tensor parallelism splits chains "
                           "(X @ U @ V), products (X @ W) and MLP blocks (silu(X @ Wg) * (X @ Wu)) @ Wd");
    const Expr &first = *factors[0];
    llvm::SMLoc splitAt; // the weight whose rows are split
    if (first.kind == ExprKind::Ref && paramIndex.count(first.name)) {
      // A chain of parameters.
      for (const Expr *f : factors)
        if (!isParam(*f))
          return error(f->loc, notAParameter(*f, "in its returned chain") +
                                     "; a chain splits only when every factor is one");
      const size_t a = factors.size() >= 3 ? 1 : 0;
      plan.form = factors.size() >= 3 ? "chain" : "matmul";
      plan.dimension = fmt::format("the columns of {} = the rows of {}", factors[a]->name,
                                   factors[a + 1]->name);
      plan.dimSize = factors[a]->type.cols;
      splitAt = factors[a + 1]->loc;
      if (auto e = mark(*factors[a], ShardAxis::Cols))
        return std::move(e);
      if (auto e = mark(*factors[a + 1], ShardAxis::Rows))
        return std::move(e);
    } else {
      // An MLP block: elementwise over products, then a down projection.
      if (!isParam(*factors[1]))
        return error(factors[1]->loc, notAParameter(*factors[1], "after the elementwise part"));
      plan.form = "mlp";
      plan.dimension = fmt::format("the columns of the elementwise part = the rows of {}",
                                   factors[1]->name);
      plan.dimSize = first.type.cols;
      splitAt = factors[1]->loc;
      if (auto e = splitColumns(first))
        return std::move(e);
      if (auto e = mark(*factors[1], ShardAxis::Rows))
        return std::move(e);
    }
    if (plan.dimSize % plan.cores != 0)
      return error(splitAt,
                   fmt::format("{} is {}, which does not divide into {} cores", plan.dimension,
                               plan.dimSize, plan.cores));
    return plan;
  }

private:
  const ast::Kernel &kernel;
  TensorParallelPlan plan;
  std::map<std::string, size_t> paramIndex;
  std::map<std::string, const Expr *> stmts;

  bool isParam(const Expr &e) const { return e.kind == ExprKind::Ref && paramIndex.count(e.name); }
  /// "'U' ... is not a parameter", for a factor `where` that is not one.
  static std::string notAParameter(const Expr &e, const std::string &where) {
    if (e.kind == ExprKind::Ref)
      return fmt::format("'{}' {} is not a parameter", e.name, where);
    if (e.kind == ExprKind::Transpose && e.lhs->kind == ExprKind::Ref)
      return fmt::format("'{}.T' {} is a transposed parameter, which the split does not follow "
                         "(pass {} transposed instead)",
                         e.lhs->name, where, e.lhs->name);
    return fmt::format("the factor here {} is an expression, not a parameter", where);
  }
  const Expr &resolve(const Expr &e) const {
    if (e.kind == ExprKind::Ref)
      if (auto it = stmts.find(e.name); it != stmts.end())
        return resolve(*it->second);
    return e;
  }

  /// The factors of a product chain, looking through assignments of products.
  void flatten(const Expr &e0, std::vector<const Expr *> &out) const {
    const Expr &e = resolve(e0);
    if (e.kind == ExprKind::MatMul) {
      flatten(*e.lhs, out);
      flatten(*e.rhs, out);
    } else {
      out.push_back(&e);
    }
  }

  llvm::Error mark(const Expr &param, ShardAxis axis) {
    ShardAxis &slot = plan.params[paramIndex.at(param.name)];
    if (slot != ShardAxis::None && slot != axis)
      return error(param.loc, fmt::format("'{}' would be split both row-wise and column-wise",
                                          param.name));
    slot = axis;
    return llvm::Error::success();
  }

  /// Splits the columns of the elementwise expression `e`.
  llvm::Error splitColumns(const Expr &e0) {
    const Expr &e = resolve(e0);
    switch (e.kind) {
    case ExprKind::Binary:
      if (auto err = splitColumns(*e.lhs))
        return err;
      return splitColumns(*e.rhs);
    case ExprKind::Unary:
      return splitColumns(*e.lhs);
    case ExprKind::Ref:
      return mark(e, ShardAxis::Cols);
    case ExprKind::MatMul: {
      std::vector<const Expr *> factors;
      flatten(e, factors);
      if (!isParam(*factors.back()))
        return error(factors.back()->loc,
                     notAParameter(*factors.back(), "(the last factor of a product in the elementwise part)"));
      return mark(*factors.back(), ShardAxis::Cols);
    }
    case ExprKind::Number:
      return llvm::Error::success();
    case ExprKind::Reduce:
    case ExprKind::Call:
    case ExprKind::Causal:
    case ExprKind::MergeHeads:
      return error(e.opLoc, "a reduction, a mask or merged heads on the split dimension is not supported yet");
    case ExprKind::Transpose:
      break;
    }
    return error(e.opLoc, "a transposed operand on the split dimension is not supported yet");
  }
};

/// Recomputes the types of `e` from its operands (Sema's rules; the AST was
/// checked, so shapes stay consistent when the split is).
void retype(Expr &e, const std::map<std::string, ast::TensorType> &env) {
  if (e.lhs)
    retype(*e.lhs, env);
  if (e.rhs)
    retype(*e.rhs, env);
  switch (e.kind) {
  case ExprKind::Ref:
    e.type = env.at(e.name);
    break;
  case ExprKind::MatMul:
    e.type = {e.lhs->type.dtype, e.lhs->type.rows, e.rhs->type.cols};
    break;
  case ExprKind::Binary: {
    // Broadcasting (a number is 1 x 1): the larger of each dimension.
    const ast::TensorType &l = e.lhs->type, &r = e.rhs->type;
    e.type = {e.lhs->kind == ExprKind::Number ? r.dtype : l.dtype, std::max(l.rows, r.rows),
              std::max(l.cols, r.cols)};
    break;
  }
  case ExprKind::Unary:
  case ExprKind::Causal:
    e.type = e.lhs->type;
    break;
  case ExprKind::Reduce:
    e.type = {e.lhs->type.dtype, e.lhs->type.rows, 1};
    break;
  case ExprKind::MergeHeads:
    e.type = {e.lhs->type.dtype, e.lhs->type.rows, e.lhs->type.heads * e.lhs->type.cols};
    break;
  case ExprKind::Number:
  case ExprKind::Call:
    break;
  case ExprKind::Transpose:
    e.type = {e.lhs->type.dtype, e.lhs->type.cols, e.lhs->type.rows};
    break;
  }
}

} // namespace

llvm::Expected<TensorParallelPlan> planTensorParallel(const ast::Kernel &kernel, int cores) {
  if (cores < 1)
    return error(kernel.loc, fmt::format("{} cores; give at least 1", cores));
  for (const ast::Param &p : kernel.params)
    if (p.type.heads > 0)
      return error(p.loc, fmt::format("'{}' has heads: tensor parallelism of a kernel with heads is not "
                                      "supported yet (split its heads over the cores instead)",
                                      p.name));
  return Planner(kernel, cores).run();
}

void shardKernel(ast::Kernel &kernel, const TensorParallelPlan &plan) {
  std::map<std::string, ast::TensorType> env;
  for (size_t i = 0; i < kernel.params.size(); ++i) {
    ast::Param &p = kernel.params[i];
    if (plan.params[i] == ShardAxis::Rows)
      p.type.rows /= plan.cores;
    else if (plan.params[i] == ShardAxis::Cols)
      p.type.cols /= plan.cores;
    env[p.name] = p.type;
  }
  for (ast::Stmt &s : kernel.body) {
    retype(*s.value, env);
    if (!s.isReturn())
      env[s.name] = s.value->type;
  }
}

std::string TensorParallelPlan::describe(const ast::Kernel &kernel) const {
  std::string split, replicated;
  for (size_t i = 0; i < params.size(); ++i) {
    const std::string &name = kernel.params[i].name;
    if (params[i] == ShardAxis::None)
      replicated += (replicated.empty() ? "" : ", ") + name;
    else
      split += fmt::format("{}{} {}", split.empty() ? "" : ", ", name,
                           params[i] == ShardAxis::Rows ? "row-wise" : "column-wise");
  }
  return fmt::format("{} ({} = {} x {}); {} replicated; AllReduce of [{}, {}]", split, dimSize, cores,
                     dimSize / cores, replicated.empty() ? "nothing" : replicated,
                     kernel.resultType.rows, kernel.resultType.cols);
}

} // namespace tessel::frontend

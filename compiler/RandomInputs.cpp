//===- compiler/RandomInputs.cpp - How large a kernel's random inputs are ---===//
#include "compiler/RandomInputs.h"

#include <cmath>

namespace tessel::compiler {

namespace {

/// Records the fan-in of every parameter `e` uses as a matmul's right operand.
void findWeights(const ast::Expr &e, const ast::Kernel &kernel, std::map<std::string, int64_t> &fanIn) {
  if (e.kind == ast::ExprKind::MatMul) {
    const ast::Expr *rhs = e.rhs.get();
    bool transposed = false;
    while (rhs->kind == ast::ExprKind::Transpose) {
      transposed = !transposed;
      rhs = rhs->lhs.get();
    }
    if (rhs->kind == ast::ExprKind::Ref)
      for (const ast::Param &p : kernel.params)
        if (p.name == rhs->name)
          fanIn[p.name] = transposed ? p.type.cols : p.type.rows;
  }
  if (e.lhs)
    findWeights(*e.lhs, kernel, fanIn);
  if (e.rhs)
    findWeights(*e.rhs, kernel, fanIn);
}

} // namespace

std::map<std::string, double> randomInputHalfWidths(const ast::Kernel &kernel) {
  std::map<std::string, int64_t> fanIn;
  for (const ast::Stmt &s : kernel.body)
    findWeights(*s.value, kernel, fanIn);
  std::map<std::string, double> out;
  for (const ast::Param &p : kernel.params) {
    auto it = fanIn.find(p.name);
    out[p.name] = std::sqrt(3.0 / double(it == fanIn.end() ? 1 : std::max<int64_t>(1, it->second)));
  }
  return out;
}

} // namespace tessel::compiler

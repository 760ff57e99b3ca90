//===- frontend/ASTPrinter.cpp - `tessel compile --emit=ast` -------------===//
//
// One node per line, indented two spaces per level:
//   Kind [name] [: type] @line:col
// e.g. `MatMul : bf16[4096 x 4096] @5:10`. Deterministic: source order only.
//
//===----------------------------------------------------------------------===//
#include "frontend/Frontend.h"

#include <fmt/format.h>

using namespace tessel::ast;

namespace tessel {
namespace {

class ASTPrinter {
public:
  ASTPrinter(llvm::SourceMgr &sm, llvm::raw_ostream &os) : sm(sm), os(os) {}

  void print(const Module &m) {
    os << "Module\n";
    for (const Const &c : m.consts)
      line(1, fmt::format("Const {} = {}{}", c.name, c.value, c.overridden ? " (from -D)" : ""), c.loc);
    for (const Kernel &k : m.kernels)
      print(k);
  }

private:
  std::string where(llvm::SMLoc loc) const {
    if (!loc.isValid() || !sm.FindBufferContainingLoc(loc))
      return "@?";
    auto [l, c] = sm.getLineAndColumn(loc);
    // Nodes inlined from the prelude are located in it.
    unsigned id = sm.FindBufferContainingLoc(loc);
    if (id != sm.getMainFileID())
      return fmt::format("@{}:{}:{}", sm.getMemoryBuffer(id)->getBufferIdentifier().str(), l, c);
    return fmt::format("@{}:{}", l, c);
  }

  void line(unsigned depth, const std::string &text, llvm::SMLoc loc) {
    os << std::string(2 * depth, ' ') << text << " " << where(loc) << "\n";
  }

  void print(const Kernel &k) {
    line(1, fmt::format("Kernel {} -> {}", k.name, formatType(k.resultType)), k.loc);
    for (const Param &p : k.params)
      line(2, fmt::format("Param {} : {}", p.name, formatType(p.type)), p.loc);
    for (const Stmt &s : k.body) {
      if (s.isReturn())
        line(2, fmt::format("Return : {}", formatType(s.value->type)), s.loc);
      else
        line(2, fmt::format("Assign {} : {}", s.name, formatType(s.value->type)), s.loc);
      print(*s.value, 3);
    }
  }

  void print(const Expr &e, unsigned depth) {
    std::string head = exprKindName(e.kind);
    switch (e.kind) {
    case ExprKind::Ref:
      head += " " + e.name;
      break;
    case ExprKind::Binary:
      head += fmt::format(" {}", binaryOpName(e.binOp));
      break;
    case ExprKind::Unary:
      head += fmt::format(" {}", actFnName(e.unaryFn).str());
      break;
    case ExprKind::Number:
      head += fmt::format(" {}", e.number);
      break;
    case ExprKind::Reduce:
      head += fmt::format(" {} axis={}", reduceOpName(e.reduceOp), e.type.heads > 0 ? 2 : 1);
      break;
    case ExprKind::Causal:
      head += fmt::format(" offset={} fill={}", e.offset, e.number);
      break;
    default:
      break;
    }
    line(depth, fmt::format("{} : {}", head, formatType(e.type)), e.loc);
    if (e.lhs)
      print(*e.lhs, depth + 1);
    if (e.rhs)
      print(*e.rhs, depth + 1);
  }

  llvm::SourceMgr &sm;
  llvm::raw_ostream &os;
};

} // namespace

void printAST(const Module &module, llvm::SourceMgr &sm, llvm::raw_ostream &os) {
  ASTPrinter(sm, os).print(module);
}

} // namespace tessel

//===- ir/LoopDeps.cpp - Whether a loop's iterations are independent ------===//
//
// A loop is independent when every buffer its body writes and does not
// allocate itself is written at places disjoint between iterations (or
// accumulated by matmuls whose group the loop is) and is not also read in
// the body. Conservative: anything else is dependent.
//
//===----------------------------------------------------------------------===//
#include "ir/LoopDeps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Casting.h"

#include <cstdlib>

namespace tessel::ir {
namespace {

struct Span {
  int64_t step = 1, trips = 1;
};

class LoopDeps {
public:
  explicit LoopDeps(const ForOp &loop) : loop(loop) {
    collect(loop.body);
    spans[loop.iv] = {loop.step, loop.constTripCount()};
  }

  bool parallel() const {
    if (loop.constTripCount() <= 1)
      return false; // nothing to reorder; keep the program order explicit
    llvm::DenseSet<const Value *> written, read;
    for (const Op *op : instrs) {
      for (const Access *a : const_cast<Op *>(op)->reads())
        if (!local.count(a->base))
          read.insert(a->base);
      const Access *dst = const_cast<Op *>(op)->write();
      if (!dst || local.count(dst->base))
        continue;
      written.insert(dst->base);
      if (auto *m = llvm::dyn_cast<MatmulOp>(op))
        if (llvm::is_contained(m->resetOn, loop.iv))
          continue; // this loop's accumulation group
      if (!disjoint(*dst))
        return false;
    }
    for (const Value *v : written)
      if (read.count(v))
        return false;
    return true;
  }

private:
  void collect(const Block &b) {
    for (const auto &op : b.ops) {
      if (auto *a = llvm::dyn_cast<AllocOp>(op.get()))
        local.insert(a->result);
      else if (auto *f = llvm::dyn_cast<ForOp>(op.get())) {
        spans[f->iv] = {f->step, f->constTripCount()};
        collect(f->body);
      } else if (op->kind != OpKind::View)
        instrs.push_back(op.get());
    }
  }

  /// Whether successive iterations of the loop write disjoint places of the
  /// access: some index moves by at least its extent plus the reach of the
  /// inner loops per iteration.
  bool disjoint(const Access &a) const {
    for (const Index &i : a.indices) {
      int64_t c = 0;
      llvm::SmallVector<std::pair<const Value *, int64_t>, 4> terms;
      if (!i.start.linearForm(c, terms))
        continue;
      int64_t stride = 0, reach = 0;
      for (const auto &[v, coeff] : terms) {
        auto it = spans.find(v);
        if (v == loop.iv)
          stride = std::llabs(coeff * loop.step);
        else if (it != spans.end())
          reach += std::llabs(coeff) * it->second.step * std::max<int64_t>(it->second.trips - 1, 0);
      }
      std::optional<int64_t> extent = i.isRange() ? extentBound(*i.extent) : std::optional<int64_t>(1);
      if (stride > 0 && extent && stride >= reach + *extent)
        return true;
    }
    return false;
  }

  const ForOp &loop;
  llvm::DenseSet<const Value *> local;
  llvm::DenseMap<const Value *, Span> spans;
  std::vector<const Op *> instrs;
};

} // namespace

std::optional<int64_t> extentBound(const IndexExpr &e) {
  if (e.isConst())
    return e.constValue();
  if (e.kind() != IndexExpr::Kind::Min)
    return std::nullopt;
  auto a = extentBound(e.lhs()), b = extentBound(e.rhs());
  if (a && b)
    return std::min(*a, *b);
  return a ? a : b;
}

bool iterationsIndependent(const ForOp &loop) { return LoopDeps(loop).parallel(); }

} // namespace tessel::ir

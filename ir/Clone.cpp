#include "ir/Clone.h"

#include "llvm/Support/Casting.h"

namespace tessel::ir {

IndexExpr remapExpr(const IndexExpr &e, const ValueMap &map) {
  llvm::SmallVector<const Value *, 4> vars;
  e.collectVars(vars);
  IndexExpr out = e;
  for (const Value *v : vars) {
    auto it = map.find(v);
    if (it != map.end())
      out = out.substitute(v, IndexExpr::var(it->second));
  }
  return out;
}

Access remapAccess(const Access &a, const ValueMap &map) {
  Access out = a;
  auto it = map.find(a.base);
  if (it != map.end())
    out.base = it->second;
  for (Index &idx : out.indices) {
    idx.start = remapExpr(idx.start, map);
    if (idx.extent)
      idx.extent = remapExpr(*idx.extent, map);
  }
  return out;
}

static Value *cloneValue(const Value &old, Kernel &kernel, ValueMap &map) {
  Value *v = kernel.newValue(old.kind, kernel.uniqueName(old.name));
  v->type = old.type;
  v->role = old.role;
  v->loc = old.loc;
  map[&old] = v;
  return v;
}

std::unique_ptr<Op> cloneOp(const Op &op, Kernel &kernel, ValueMap &map) {
  switch (op.kind) {
  case OpKind::Alloc: {
    const auto &a = llvm::cast<AllocOp>(op);
    auto out = std::make_unique<AllocOp>();
    out->loc = a.loc;
    out->bufs = a.bufs;
    out->address = a.address;
    out->result = cloneValue(*a.result, kernel, map);
    out->result->def = out.get();
    return out;
  }
  case OpKind::For: {
    const auto &f = llvm::cast<ForOp>(op);
    auto out = std::make_unique<ForOp>();
    out->loc = f.loc;
    out->lo = remapExpr(f.lo, map);
    out->hi = remapExpr(f.hi, map);
    out->step = f.step;
    out->parallel = f.parallel;
    out->iv = cloneValue(*f.iv, kernel, map);
    out->iv->def = out.get();
    for (const auto &inner : f.body.ops)
      out->body.ops.push_back(cloneOp(*inner, kernel, map));
    return out;
  }
  case OpKind::Dma: {
    const auto &d = llvm::cast<DmaOp>(op);
    auto out = std::make_unique<DmaOp>(d);
    out->dst = remapAccess(d.dst, map);
    out->src = remapAccess(d.src, map);
    return out;
  }
  case OpKind::Matmul: {
    const auto &m = llvm::cast<MatmulOp>(op);
    auto out = std::make_unique<MatmulOp>(m);
    out->dst = remapAccess(m.dst, map);
    out->stationary = remapAccess(m.stationary, map);
    out->moving = remapAccess(m.moving, map);
    for (Value *&v : out->resetOn)
      if (auto it = map.find(v); it != map.end())
        v = it->second;
    return out;
  }
  case OpKind::Transpose: {
    const auto &t = llvm::cast<TransposeOp>(op);
    auto out = std::make_unique<TransposeOp>(t);
    out->dst = remapAccess(t.dst, map);
    out->src = remapAccess(t.src, map);
    return out;
  }
  case OpKind::Activation: {
    const auto &a = llvm::cast<ActivationOp>(op);
    auto out = std::make_unique<ActivationOp>(a);
    out->dst = remapAccess(a.dst, map);
    out->src = remapAccess(a.src, map);
    return out;
  }
  case OpKind::TensorTensor: {
    const auto &t = llvm::cast<TensorTensorOp>(op);
    auto out = std::make_unique<TensorTensorOp>(t);
    out->dst = remapAccess(t.dst, map);
    out->lhs = remapAccess(t.lhs, map);
    out->rhs = remapAccess(t.rhs, map);
    return out;
  }
  case OpKind::TensorScalar: {
    const auto &t = llvm::cast<TensorScalarOp>(op);
    auto out = std::make_unique<TensorScalarOp>(t);
    out->dst = remapAccess(t.dst, map);
    out->src = remapAccess(t.src, map);
    return out;
  }
  case OpKind::Copy: {
    const auto &c = llvm::cast<CopyOp>(op);
    auto out = std::make_unique<CopyOp>(c);
    out->dst = remapAccess(c.dst, map);
    out->src = remapAccess(c.src, map);
    return out;
  }
  case OpKind::Memset: {
    const auto &m = llvm::cast<MemsetOp>(op);
    auto out = std::make_unique<MemsetOp>(m);
    out->dst = remapAccess(m.dst, map);
    return out;
  }
  }
  return nullptr;
}

} // namespace tessel::ir

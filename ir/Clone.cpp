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

void substituteInOp(Op &op, const Value *from, const IndexExpr &to) {
  walkOp(op, [&](Op &o) {
    if (auto *loop = llvm::dyn_cast<ForOp>(&o)) {
      loop->lo = loop->lo.substitute(from, to).simplified();
      loop->hi = loop->hi.substitute(from, to).simplified();
    }
    llvm::SmallVector<Access *, 4> accesses = o.reads();
    accesses.append(o.writes());
    if (AffineIndex *index = affineIndexOf(o))
      index->offset = index->offset.substitute(from, to).simplified();
    for (Access *a : accesses)
      for (Index &idx : a->indices) {
        idx.start = idx.start.substitute(from, to).simplified();
        if (idx.extent)
          idx.extent = idx.extent->substitute(from, to).simplified();
      }
  });
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

/// A copy of an instruction (IR op classes are named after Ops.def: DmaOp, ...).
static std::unique_ptr<Op> copyInstruction(const Op &op) {
  switch (op.kind) {
#define TESSEL_OP(ENUM, MNEMONIC, ENGINE, OTHER_ENGINES, SRC_ROLES, FUNC)                          \
  case OpKind::ENUM:                                                                               \
    return std::make_unique<ENUM##Op>(llvm::cast<ENUM##Op>(op));
#include "support/Ops.def"
  default:
    return nullptr;
  }
}

std::unique_ptr<Op> cloneOp(const Op &op, Kernel &kernel, ValueMap &map) {
  if (const auto *a = llvm::dyn_cast<AllocOp>(&op)) {
    auto out = std::make_unique<AllocOp>();
    out->loc = a->loc;
    out->bufs = a->bufs;
    out->address = a->address;
    out->result = cloneValue(*a->result, kernel, map);
    out->result->def = out.get();
    return out;
  }
  if (const auto *v = llvm::dyn_cast<ViewOp>(&op)) {
    auto out = std::make_unique<ViewOp>();
    out->loc = v->loc;
    auto it = map.find(v->source);
    out->source = it == map.end() ? v->source : it->second;
    out->result = cloneValue(*v->result, kernel, map);
    out->result->def = out.get();
    return out;
  }
  if (const auto *f = llvm::dyn_cast<ForOp>(&op)) {
    auto out = std::make_unique<ForOp>();
    out->loc = f->loc;
    out->lo = remapExpr(f->lo, map);
    out->hi = remapExpr(f->hi, map);
    out->step = f->step;
    out->parallel = f->parallel;
    out->block = f->block;
    out->iv = cloneValue(*f->iv, kernel, map);
    out->iv->def = out.get();
    for (const auto &inner : f->body.ops)
      out->body.ops.push_back(cloneOp(*inner, kernel, map));
    return out;
  }
  std::unique_ptr<Op> out = copyInstruction(op);
  if (!out)
    return nullptr;
  for (Access *dst : out->writes())
    *dst = remapAccess(*dst, map);
  for (Access *src : out->reads())
    *src = remapAccess(*src, map);
  if (AffineIndex *index = affineIndexOf(*out))
    index->offset = remapExpr(index->offset, map);
  if (auto *m = llvm::dyn_cast<MatmulOp>(out.get()))
    for (Value *&v : m->resetOn)
      if (auto it = map.find(v); it != map.end())
        v = it->second;
  return out;
}

} // namespace tessel::ir

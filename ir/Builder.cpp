#include "ir/Builder.h"

namespace tessel::ir {

Value *appendAlloc(Kernel &kernel, Block &block, llvm::StringRef hint, MemSpace space, DType dtype,
                   llvm::ArrayRef<Dim> dims, int64_t bufs, llvm::SMLoc loc) {
  Value *v = kernel.newValue(ValueKind::Buffer, kernel.uniqueName(hint));
  v->type.space = space;
  v->type.dtype = dtype;
  v->type.dims.assign(dims.begin(), dims.end());
  v->role = TensorRole::Scratch;
  v->loc = loc;
  auto op = std::make_unique<AllocOp>();
  op->loc = loc;
  op->result = v;
  op->bufs = bufs;
  v->def = op.get();
  block.ops.push_back(std::move(op));
  return v;
}

ForOp &appendLoop(Kernel &kernel, Block &block, llvm::StringRef hint, IndexExpr lo, IndexExpr hi,
                  int64_t step, llvm::SMLoc loc) {
  auto loop = std::make_unique<ForOp>();
  loop->loc = loc;
  loop->iv = kernel.newValue(ValueKind::LoopVar, kernel.uniqueName(hint));
  loop->iv->def = loop.get();
  loop->iv->loc = loc;
  loop->lo = lo;
  loop->hi = hi;
  loop->step = step;
  ForOp &ref = *loop;
  block.ops.push_back(std::move(loop));
  return ref;
}

Access makeAccess(Value *base, llvm::ArrayRef<std::pair<IndexExpr, IndexExpr>> ranges) {
  Access a;
  a.base = base;
  for (const auto &[start, ext] : ranges)
    a.indices.push_back(Index{start, ext});
  return a;
}

} // namespace tessel::ir

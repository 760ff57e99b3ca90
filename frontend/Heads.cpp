//===- frontend/Heads.cpp - Laying out values with heads in HBM ----------===//
#include "frontend/Heads.h"

namespace tessel::frontend {

namespace {

void shiftAccess(ir::Access &a, const std::map<const ir::Value *, int64_t> &rowOffsets) {
  auto it = rowOffsets.find(a.base);
  if (it == rowOffsets.end() || it->second == 0 || a.indices.empty())
    return;
  a.indices[0].start = a.indices[0].start + ir::IndexExpr(it->second);
}

} // namespace

void shiftHeadRows(llvm::MutableArrayRef<std::unique_ptr<ir::Op>> ops,
                   const std::map<const ir::Value *, int64_t> &rowOffsets) {
  for (std::unique_ptr<ir::Op> &op : ops) {
    if (auto *loop = llvm::dyn_cast<ir::ForOp>(op.get())) {
      shiftHeadRows(loop->body.ops, rowOffsets);
      continue;
    }
    for (ir::Access *a : op->reads())
      shiftAccess(*a, rowOffsets);
    for (ir::Access *a : op->writes())
      shiftAccess(*a, rowOffsets);
  }
}

void widenToHeads(ir::Value &tensor, int64_t heads) { tensor.type.dims[0].size *= heads; }

} // namespace tessel::frontend

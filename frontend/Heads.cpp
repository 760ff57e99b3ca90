//===- frontend/Heads.cpp - Laying out values with heads in HBM ----------===//
#include "frontend/Heads.h"

namespace tessel::frontend {

namespace {

void shiftAccess(ir::Access &a, const std::map<const ir::Value *, HeadOffset> &offsets) {
  auto it = offsets.find(a.base);
  if (it == offsets.end())
    return;
  if (it->second.rows != 0 && !a.indices.empty())
    a.indices[0].start = a.indices[0].start + ir::IndexExpr(it->second.rows);
  if (it->second.cols != 0 && a.indices.size() > 1)
    a.indices[1].start = a.indices[1].start + ir::IndexExpr(it->second.cols);
}

} // namespace

void shiftHeads(llvm::MutableArrayRef<std::unique_ptr<ir::Op>> ops,
                const std::map<const ir::Value *, HeadOffset> &offsets) {
  for (std::unique_ptr<ir::Op> &op : ops) {
    if (auto *loop = llvm::dyn_cast<ir::ForOp>(op.get())) {
      shiftHeads(loop->body.ops, offsets);
      continue;
    }
    for (ir::Access *a : op->reads())
      shiftAccess(*a, offsets);
    for (ir::Access *a : op->writes())
      shiftAccess(*a, offsets);
  }
}

void widenToHeads(ir::Value &tensor, int64_t heads) { tensor.type.dims[0].size *= heads; }

} // namespace tessel::frontend

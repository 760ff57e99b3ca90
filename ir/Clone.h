//===- ir/Clone.h - Deep copies of ops with value remapping -----*- C++ -*-===//
#ifndef TESSEL_IR_CLONE_H
#define TESSEL_IR_CLONE_H

#include "ir/Kernel.h"

#include "llvm/ADT/DenseMap.h"

namespace tessel::ir {

/// Old value -> new value. Values not in the map are used as they are.
using ValueMap = llvm::DenseMap<const Value *, Value *>;

/// Rewrites the loop variables of `e` through `map`.
IndexExpr remapExpr(const IndexExpr &e, const ValueMap &map);
/// Rewrites the base and the index variables of `a` through `map`.
Access remapAccess(const Access &a, const ValueMap &map);
/// Replaces loop variable `from` by `to` in every loop bound and every
/// access index `op` holds, recursively (simplified).
void substituteInOp(Op &op, const Value *from, const IndexExpr &to);

/// Deep-copies `op` into `kernel`: every alloc and loop it contains defines a
/// fresh value (a unique name derived from the old one), recorded in `map`;
/// uses are rewritten through `map`.
std::unique_ptr<Op> cloneOp(const Op &op, Kernel &kernel, ValueMap &map);

} // namespace tessel::ir

#endif

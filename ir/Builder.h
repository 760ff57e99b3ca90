//===- ir/Builder.h - Appending allocs, loops and accesses -------*- C++ -*-===//
//
// The few constructors every producer of tile IR needs (TileGen, passes):
// each new value gets a kernel-unique name derived from a hint.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_IR_BUILDER_H
#define TESSEL_IR_BUILDER_H

#include "ir/Kernel.h"

namespace tessel::ir {

/// Appends `%hint = alloc space<dtype, dims> bufs N` to `block`.
Value *appendAlloc(Kernel &kernel, Block &block, llvm::StringRef hint, MemSpace space, DType dtype,
                   llvm::ArrayRef<Dim> dims, int64_t bufs, llvm::SMLoc loc);

/// Appends `for %hint = lo to hi step step {}` to `block`.
ForOp &appendLoop(Kernel &kernel, Block &block, llvm::StringRef hint, IndexExpr lo, IndexExpr hi,
                  int64_t step, llvm::SMLoc loc);

/// `%base[start +: extent, ...]`, one range per dimension.
Access makeAccess(Value *base, llvm::ArrayRef<std::pair<IndexExpr, IndexExpr>> ranges);

} // namespace tessel::ir

#endif

//===- backend/Backend.h - Tile IR to a simulator program -------*- C++ -*-===//
//
// Lowers a verified kernel to a runtime::Program (.tasm):
//  1. buffers without an address get one from a scope-based stack allocator
//     (a buffer lives while its enclosing block runs; sibling blocks reuse the
//     space), PSUM buffers aligned so no accumulation tile crosses a bank;
//  2. loops are normalised to `for %i = 0 to trips` (the IR's `lo + step*i`
//     substituted everywhere), so a start on a partition-folded dimension
//     (a buffer whose partition dim is larger than the target's partitions,
//     e.g. the transposed strip [K:7168, M:512]) divides exactly into a fold
//     index;
//  3. each IR op becomes one program statement in the same order; DMAs are
//     spread round-robin over the target's queues by static instruction;
//     each instruction keeps its op's source location (a fused or cloned op
//     keeps the location of the op it was made from).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_BACKEND_BACKEND_H
#define TESSEL_BACKEND_BACKEND_H

#include "ir/Kernel.h"
#include "runtime/Program.h"
#include "runtime/Target.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/SourceMgr.h"

namespace tessel::backend {

/// Gives every on-chip alloc without an address one (scope-based stack).
/// Fails, naming the totals, when the buffers exceed the target's SBUF/PSUM.
/// Places the on-chip buffers without addresses; a kernel that does not fit
/// is an error at the buffer that set the peak (located with `sources`).
llvm::Error assignStackAddresses(ir::Kernel &kernel, const runtime::Target &target,
                                 const llvm::SourceMgr *sources = nullptr);

/// `msg` as a located error at `loc`: "file:line:col: error: msg" with the
/// line and a caret, or a traced kernel's own "FILE:LINE: error: msg" (its
/// op's trailing `// FILE:LINE`); `msg` alone without a source.
llvm::Error locatedError(const llvm::SourceMgr *sources, llvm::SMLoc loc, const llvm::Twine &msg);

/// Lowers `kernel` (verified, every on-chip alloc addressed) to a program.
/// With `sources` (the SourceMgr holding the text the kernel's op locations
/// point into), every instruction gets its op's source location
/// (Instr::source, `loc(...)` in .tasm): file:line:col of the .tsl or .tir
/// text, or FILE:LINE of a `// FILE:LINE[:COL]` comment ending the op's
/// tile IR line (the NKI tracer writes one per op: the kernel.py line).
llvm::Expected<runtime::Program> lowerToProgram(const ir::Kernel &kernel,
                                                const runtime::Target &target,
                                                const llvm::SourceMgr *sources = nullptr);

} // namespace tessel::backend

#endif

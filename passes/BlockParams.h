//===- passes/BlockParams.h - --block NAME=INT,... ---------------*- C++ -*-===//
//
// Block (tiling) parameters live in Kernel::blockParams; every chain has `m`
// (row-strip height, the paper's bs) and `n` (output column block), later
// passes add others named after the dimension they tile. The user overrides
// them with --block m=512,n=512; these helpers parse and check that flag.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_PASSES_BLOCKPARAMS_H
#define TESSEL_PASSES_BLOCKPARAMS_H

#include "runtime/Target.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <string>

namespace tessel::passes {

using BlockOverrides = std::map<std::string, int64_t>;

/// Adds "m=512,n=512" to `out`; a malformed item, a non-integer value or a
/// name given twice is an error.
llvm::Error parseBlockSpec(llvm::StringRef spec, BlockOverrides &out);

/// Checks `overrides` against the kernel's parameters (`known`, its
/// blockParams) and the target, saying why a value is impossible:
///  - every name must be known;
///  - every value is a positive multiple of the 128-partition tile;
///  - `m` is at most the row count rounded up to the tile (`rows`; 0 = not
///    checked, e.g. for tile IR whose source is gone);
///  - `n` columns of fp32 accumulators fit one PSUM bank.
llvm::Error validateBlockOverrides(const BlockOverrides &overrides, const BlockOverrides &known,
                                   int64_t rows, const runtime::Target &target);

} // namespace tessel::passes

#endif

//===- passes/BlockParams.h - --block NAME=INT,... ---------------*- C++ -*-===//
//
// Block (tiling) parameters (ir/BlockConfig.h) as the user gives them:
// --block m=512,n=512 is parsed once into an ir::BlockConfig and checked once
// against the kernel and the target before anything is built with it.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_PASSES_BLOCKPARAMS_H
#define TESSEL_PASSES_BLOCKPARAMS_H

#include "ir/BlockConfig.h"
#include "runtime/Target.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace tessel::passes {

/// Adds "m=512,n=512" to `out`; a malformed item, a non-integer value or a
/// name given twice is an error.
llvm::Error parseBlockSpec(llvm::StringRef spec, ir::BlockConfig &out);

/// Checks `given` against the kernel's parameters (`known`) and the target, saying why a value is impossible:
///  - every name must be known;
///  - every value is a positive multiple of the target's partition tile;
///  - `m` is at most the row count rounded up to the tile (`rows`; 0 = not
///    checked, e.g. for tile IR whose source is gone);
///  - an output column block (`n`, or a projection's own, e.g. `n_r2`) of
///    fp32 accumulators fits one PSUM bank.
llvm::Error validateBlockConfig(const ir::BlockConfig &given, const ir::BlockConfig &known,
                                int64_t rows, const runtime::Target &target);

} // namespace tessel::passes

#endif

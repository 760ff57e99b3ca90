//===- tune/TuneSpace.h - The block configurations tessel tune tries -*- C++ -*-===//
//
// The search space of `tessel tune`: every combination of the kernel's block
// parameters (Kernel::blockParams) over power-of-two multiples of the
// target's partition tile, bounded by the dimension each one tiles, optionally
// restricted by --space NAME=V1,V2,... and split into --shard I/N.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_TUNE_TUNESPACE_H
#define TESSEL_TUNE_TUNESPACE_H

#include "frontend/AST.h"
#include "passes/BlockParams.h"
#include "runtime/Target.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tessel::tune {

/// One point of the space: a value for every block parameter.
using ir::BlockConfig;

/// "m=512,n=256" (names in order): the --block spelling of `config`.
std::string formatBlock(const BlockConfig &config);

/// What bounds the space of one kernel.
struct SpaceBounds {
  std::vector<std::string> names; ///< the kernel's block parameters
  int64_t rows = 0;               ///< rows of the row strip (bounds m)
  int64_t cols = 0;               ///< columns of the result (bounds n)
  int64_t contraction = 0;        ///< elements of the contraction K (bounds k); 0 = none
  /// A projection's own column block -> the columns it tiles (bounds it).
  std::map<std::string, int64_t> projectionColumns;
};

/// Bounds of `kernel`, whose default tile IR has the block parameters `params`.
SpaceBounds spaceBoundsOf(const ast::Kernel &kernel, const BlockConfig &params);

/// The largest value parameter `name` may take (it must also be a multiple
/// of the tile), 0 = unbounded.
int64_t maxBlockValue(llvm::StringRef name, const SpaceBounds &bounds,
                      const runtime::Target &target);

/// --space restrictions: parameter name -> the values to try.
using SpaceRestriction = std::map<std::string, std::vector<int64_t>>;

/// Adds "m=128,256,512" to `out`; malformed text, an empty list or a name
/// given twice is an error.
llvm::Error parseSpaceSpec(llvm::StringRef spec, SpaceRestriction &out);

/// Checks every restricted name and value against the kernel: an unknown
/// name, a value that is not a positive multiple of the tile, or one over the
/// dimension it tiles (for `k`, over the contraction K) is an error naming it.
llvm::Error validateSpace(const SpaceRestriction &restriction, const SpaceBounds &bounds,
                          const runtime::Target &target);

/// Every configuration, in a deterministic order (lexicographic by the
/// parameters' values, parameters by name).
std::vector<BlockConfig> enumerateSpace(const SpaceBounds &bounds,
                                        const SpaceRestriction &restriction,
                                        const runtime::Target &target);

/// --shard I/N: this process evaluates configurations I, I+N, I+2N, ... of
/// the enumerated space (0-based I < N).
struct Shard {
  unsigned index = 0, count = 1;
  bool isWhole() const { return count == 1; }
};
llvm::Expected<Shard> parseShard(llvm::StringRef spec);
std::vector<BlockConfig> selectShard(const std::vector<BlockConfig> &space, Shard shard);

} // namespace tessel::tune

#endif

//===- model/RankFile.h - The MLP's ranks, per matrix -----------*- C++ -*-===//
//
// --rank-file ranks.json: the rank of each factorised MLP weight, keyed by its
// Hugging Face name, each value either what `tessel factorize --json` printed
// for that weight (its "rank" is used and its "shape" checked) or a bare rank:
//
//   {"gate_proj": <factorize --json of gate_proj>, "up_proj": 512, "down_proj": {...}}
//
// Every layer uses the same ranks (the layers are modelled as identical).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_MODEL_RANKFILE_H
#define TESSEL_MODEL_RANKFILE_H

#include "model/ModelConfig.h"

#include "llvm/Support/Error.h"

#include <cstdint>

namespace tessel::model {

struct MlpRanks {
  int64_t gate = 0, up = 0, down = 0;
};

/// The ranks of `text` (the contents of `path`) for `config`'s MLP. Errors
/// name the key and its line: a missing matrix, a rank that is not a
/// positive integer or exceeds min(rows, cols), a shape that is not the
/// config's.
llvm::Expected<MlpRanks> parseRankFile(llvm::StringRef path, llvm::StringRef text, const ModelConfig &config);

/// Reads the file `path` and parses it.
llvm::Expected<MlpRanks> readRankFile(llvm::StringRef path, const ModelConfig &config);

/// The rank paper eq. 4-5 give each MLP weight for `ratio` (factorize::
/// chooseRank, aligned to `tile`, ordinary rounding). Errors: the ratio's.
llvm::Expected<MlpRanks> ranksForRatio(const ModelConfig &config, double ratio, int64_t tile);

} // namespace tessel::model

#endif

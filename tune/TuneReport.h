//===- tune/TuneReport.h - tessel tune's ranked results ------*- C++ -*-===//
//
// The report of a run (or of `tessel tune merge`): a ranked text table, one
// JSON object (read back by merge) or CSV. Keys: docs/tuning.md.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_TUNE_TUNEREPORT_H
#define TESSEL_TUNE_TUNEREPORT_H

#include "tune/TuneCache.h"
#include "tune/TuneResult.h"
#include "tune/TuneSpace.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace tessel::tune {

struct TuneReport {
  TuneKey key;
  std::vector<std::string> params; ///< the block parameters, in order
  size_t spaceSize = 0;            ///< configurations of the whole space (every shard)
  std::vector<std::string> space;  ///< the whole space in order (formatBlock), which the shards split
  std::vector<Shard> shards;       ///< the shards this report covers
  std::vector<ConfigResult> results;
  bool pruning = true;             ///< false under --exhaustive
  bool interrupted = false;
  std::string version = TESSEL_VERSION_STRING;

  /// Every shard 0..N-1 of the space is here.
  bool coversSpace() const;
  /// Ranks the results (rankResults).
  void rank();
  size_t count(ConfigStatus status, bool cached = false) const;
};

void printReportTable(const TuneReport &report, llvm::raw_ostream &os);
llvm::json::Value reportToJSON(const TuneReport &report);
void printReportCSV(const TuneReport &report, llvm::raw_ostream &os);

/// Reads a --report=json report back; anything missing or mistyped is an
/// error naming `origin`.
llvm::Expected<TuneReport> parseReportJSON(llvm::StringRef text, llvm::StringRef origin);

/// What a report's shards should hold and does not (`tessel tune merge`).
struct ShardGaps {
  std::vector<std::string> missing;    ///< configurations of its shards with no result
  std::vector<std::string> unfinished; ///< with a result that is "interrupted"
};

/// Checks that `report` holds exactly the configurations of its shards of its
/// space, once each; an error names `origin` and the first offending
/// configuration. The configurations it lacks are returned, not an error.
llvm::Expected<ShardGaps> checkShardResults(const TuneReport &report, llvm::StringRef origin);

/// "640 B", "12.5 KiB", "3.0 MiB".
std::string formatBytes(int64_t bytes);

} // namespace tessel::tune

#endif

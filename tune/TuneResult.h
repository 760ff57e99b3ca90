//===- tune/TuneResult.h - What tessel tune learned about one configuration -*- C++ -*-===//
//
// One result per block configuration, and its JSON form, shared by the
// report (`--report=json`, read back by `tessel tune merge`) and the on-disk
// cache. Top-level numbers are the simulator's; `model` holds the static cost
// model's (docs/tuning.md lists every key).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_TUNE_TUNERESULT_H
#define TESSEL_TUNE_TUNERESULT_H

#include "tune/TuneEval.h"
#include "tune/TuneSpace.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <optional>
#include <string>
#include <vector>

namespace tessel::tune {

enum class ConfigStatus {
  Simulated,   ///< measured (now or in an earlier run: fromCache)
  Pruned,      ///< its latency lower bound is no better than a measured latency
  OverBudget,  ///< --budget simulations were used up first
  Illegal,     ///< the compiler rejected it (reason)
  Failed,      ///< the simulator rejected it (reason; a compiler bug)
  Interrupted, ///< Ctrl-C came first
};

llvm::StringRef statusName(ConfigStatus status);

struct ConfigResult {
  BlockConfig block;
  ConfigStatus status = ConfigStatus::Interrupted;
  std::string reason;
  std::optional<ModelEstimate> model;
  std::optional<SimMeasure> sim;
  bool fromCache = false; ///< the simulation was not run by this process
};

llvm::json::Value resultToJSON(const ConfigResult &result);
/// Reads what resultToJSON wrote; anything missing or mistyped is an error
/// (a cache or report file is never trusted).
llvm::Expected<ConfigResult> resultFromJSON(const llvm::json::Value &value);

llvm::json::Object blockToJSON(const BlockConfig &block);
llvm::Expected<BlockConfig> blockFromJSON(const llvm::json::Value *value);

/// Orders results for the table: measured by latency, then the rest by the
/// model's prediction, then the rejected ones; ties by configuration.
void rankResults(std::vector<ConfigResult> &results);

/// The fastest measured result, or null.
const ConfigResult *bestResult(const std::vector<ConfigResult> &results);

} // namespace tessel::tune

#endif

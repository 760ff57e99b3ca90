//===- model/RankFile.cpp - The MLP's ranks, per matrix -------------------===//
#include "model/RankFile.h"

#include "factorize/Factorize.h"

#include "fmt/format.h"
#include "llvm/Support/JSON.h"

#include <algorithm>

namespace tessel::model {
namespace {

llvm::Error located(llvm::StringRef path, llvm::StringRef text, llvm::StringRef key, const std::string &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s: error: %s",
                                 locateKey(path, text, key).c_str(), message.c_str());
}

} // namespace

llvm::Expected<MlpRanks> parseRankFile(llvm::StringRef path, llvm::StringRef text, const ModelConfig &config) {
  llvm::Expected<llvm::json::Value> json = parseJsonFile(path, text);
  if (!json)
    return json.takeError();
  const llvm::json::Object *obj = json->getAsObject();
  if (!obj)
    return located(path, text, "", "a rank file is one JSON object: {\"gate_proj\": ..., \"up_proj\": ..., "
                                   "\"down_proj\": ...}");
  for (const auto &kv : *obj)
    if (kv.first != "gate_proj" && kv.first != "up_proj" && kv.first != "down_proj")
      return located(path, text, kv.first,
                     fmt::format("unknown matrix '{}': the factorised MLP has gate_proj, up_proj and "
                                 "down_proj",
                                 kv.first.str()));
  MlpRanks ranks;
  struct Matrix {
    const char *key;
    int64_t rows, cols;
    int64_t *rank;
  };
  const Matrix matrices[] = {{"gate_proj", config.hidden, config.intermediate, &ranks.gate},
                             {"up_proj", config.hidden, config.intermediate, &ranks.up},
                             {"down_proj", config.intermediate, config.hidden, &ranks.down}};
  for (const Matrix &m : matrices) {
    const llvm::json::Value *v = obj->get(m.key);
    if (!v)
      return located(path, text, "", fmt::format("missing '{}' (its rank, or `tessel factorize --json`'s "
                                                 "report of it)",
                                                 m.key));
    llvm::Optional<int64_t> rank = v->getAsInteger();
    if (const llvm::json::Object *report = v->getAsObject()) {
      rank = report->getInteger("rank");
      if (const llvm::json::Array *shape = report->getArray("shape")) {
        llvm::Optional<int64_t> rows = shape->size() == 2 ? (*shape)[0].getAsInteger() : llvm::None;
        llvm::Optional<int64_t> cols = shape->size() == 2 ? (*shape)[1].getAsInteger() : llvm::None;
        if (rows != m.rows || cols != m.cols)
          return located(path, text, m.key,
                         fmt::format("'{}' was factorised from a weight of shape {}; {}'s is [{}, {}]", m.key,
                                     llvm::formatv("{0}", llvm::json::Value(llvm::json::Array(*shape))).str(),
                                     config.name, m.rows, m.cols));
      }
    }
    if (!rank || *rank <= 0 || *rank > std::min(m.rows, m.cols))
      return located(path, text, m.key,
                     fmt::format("'{}' needs a rank from 1 to {} (min of [{}, {}]): a positive integer, "
                                 "or an object with \"rank\" as `tessel factorize --json` prints",
                                 m.key, std::min(m.rows, m.cols), m.rows, m.cols));
    *m.rank = *rank;
  }
  return ranks;
}

llvm::Expected<MlpRanks> readRankFile(llvm::StringRef path, const ModelConfig &config) {
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> file = readTextFile(path, "--rank-file: ");
  if (!file)
    return file.takeError();
  return parseRankFile(path, (*file)->getBuffer(), config);
}

llvm::Expected<MlpRanks> ranksForRatio(const ModelConfig &config, double ratio, int64_t tile) {
  // gate/up [hidden, intermediate] and down [intermediate, hidden] have the
  // same rank for a ratio: eq. 4 is symmetric in the two dimensions.
  llvm::Expected<factorize::RankChoice> choice =
      factorize::chooseRank(config.hidden, config.intermediate, ratio, tile, 0.5);
  if (!choice)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s (an MLP weight of %s is [%lld, %lld])",
                                   llvm::toString(choice.takeError()).c_str(), config.name.c_str(),
                                   (long long)config.hidden, (long long)config.intermediate);
  return MlpRanks{choice->rank, choice->rank, choice->rank};
}

} // namespace tessel::model

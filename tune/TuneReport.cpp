#include "tune/TuneReport.h"
#include "support/JsonLimits.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <map>
#include <set>

namespace json = llvm::json;

namespace tessel::tune {
using namespace compiler;
namespace {

llvm::Error invalid(llvm::StringRef origin, const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 (origin + ": not a tessel tune report: " + msg).str());
}

/// A report that parses but does not hold what its shards should.
llvm::Error inconsistent(llvm::StringRef origin, const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), (origin + ": " + msg).str());
}

std::string shardName(Shard s) { return llvm::formatv("{0}/{1}", s.index, s.count); }

std::string csvField(llvm::StringRef s) {
  if (!s.contains(',') && !s.contains('"') && !s.contains('\n'))
    return s.str();
  std::string quoted = "\"";
  for (char c : s)
    quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

} // namespace

std::string formatBytes(int64_t bytes) {
  if (bytes < 1024)
    return llvm::formatv("{0} B", bytes);
  if (bytes < 1024 * 1024)
    return llvm::formatv("{0:f1} KiB", bytes / 1024.0);
  return llvm::formatv("{0:f1} MiB", bytes / (1024.0 * 1024.0));
}

bool TuneReport::coversSpace() const {
  if (shards.empty())
    return false;
  std::set<unsigned> seen;
  for (Shard s : shards)
    if (s.count == shards.front().count)
      seen.insert(s.index);
  return seen.size() == shards.front().count;
}

void TuneReport::rank() { rankResults(results); }

size_t TuneReport::count(ConfigStatus status, bool cached) const {
  size_t n = 0;
  for (const ConfigResult &r : results)
    n += r.status == status && (status != ConfigStatus::Simulated || r.fromCache == cached);
  return n;
}

void printReportTable(const TuneReport &report, llvm::raw_ostream &os) {
  os << llvm::formatv("tessel tune: {0} ({1}) on {2}, --passes={3}\n", report.key.kernel,
                      report.key.shapes, report.key.target, report.key.pipeline);
  std::string shards;
  if (!(report.shards.size() == 1 && report.shards.front().isWhole())) {
    for (Shard s : report.shards)
      shards += (shards.empty() ? "" : ", ") + shardName(s);
    shards = " (shard " + shards + " of a space of " + std::to_string(report.spaceSize) + ")";
  }
  os << llvm::formatv("{0} configurations{1}: {2} simulated, {3} from the cache, {4} pruned by "
                      "the model, {5} illegal",
                      report.results.size(), shards, report.count(ConfigStatus::Simulated),
                      report.count(ConfigStatus::Simulated, true),
                      report.count(ConfigStatus::Pruned), report.count(ConfigStatus::Illegal));
  if (size_t n = report.count(ConfigStatus::OverBudget))
    os << ", " << n << " over the budget";
  if (size_t n = report.count(ConfigStatus::Failed))
    os << ", " << n << " failed";
  if (size_t n = report.count(ConfigStatus::Interrupted))
    os << ", " << n << " interrupted";
  os << "\n\n";

  os << llvm::formatv("{0,4}  {1,-16} {2,12} {3,7} {4,9} {5,11} {6,10} {7,12}\n", "rank", "block",
                      "latency_us", "MFU", "AI", "SBUF peak", "spill", "model_us");
  unsigned rank = 0;
  for (const ConfigResult &r : report.results) {
    std::string block = formatBlock(r.block);
    if (!r.model) {
      os << llvm::formatv("{0,4}  {1,-16} {2}: {3}\n", "-", block, statusName(r.status),
                          r.reason.empty() ? "-" : r.reason);
      continue;
    }
    std::string rankText = r.sim ? std::to_string(++rank) : "-";
    std::string latency = r.sim ? llvm::formatv("{0:f1}", r.sim->latencyUs).str()
                                : statusName(r.status).str();
    std::string mfu = r.sim ? llvm::formatv("{0:f1}%", r.sim->mfu * 100).str() : "-";
    double ai = r.sim ? r.sim->ai : r.model->ai;
    int64_t sbuf = r.sim ? r.sim->sbufPeakBytes : r.model->sbufPeakBytes;
    int64_t spill = static_cast<int64_t>(r.sim ? r.sim->spillBytes : r.model->spillBytes);
    os << llvm::formatv("{0,4}  {1,-16} {2,12} {3,7} {4,9:f1} {5,11} {6,10} {7,12:f1}\n", rankText,
                        block, latency, mfu, ai, formatBytes(sbuf), formatBytes(spill),
                        r.model->predictedUs);
  }
  os << "\n";
  if (const ConfigResult *best = bestResult(report.results))
    os << llvm::formatv("best: --block {0}  ({1:f1} us, MFU {2:f1}%)\n", formatBlock(best->block),
                        best->sim->latencyUs, best->sim->mfu * 100);
  else
    os << "best: none (no configuration was simulated)\n";
}

json::Value reportToJSON(const TuneReport &report) {
  json::Array results, shards, params, space;
  for (const std::string &c : report.space)
    space.push_back(c);
  for (const ConfigResult &r : report.results)
    results.push_back(resultToJSON(r));
  for (Shard s : report.shards)
    shards.push_back(shardName(s));
  for (const std::string &p : report.params)
    params.push_back(p);
  json::Object obj{{"kernel", report.key.kernel},
                   {"shapes", report.key.shapes},
                   {"target", report.key.target},
                   {"pipeline", report.key.pipeline},
                   {"key", report.key.hash},
                   {"tessel_version", report.version},
                   {"params", std::move(params)},
                   {"space_size", static_cast<int64_t>(report.spaceSize)},
                   {"space", std::move(space)},
                   {"shards", std::move(shards)},
                   {"pruning", report.pruning},
                   {"interrupted", report.interrupted},
                   {"configurations", static_cast<int64_t>(report.results.size())},
                   {"simulated", static_cast<int64_t>(report.count(ConfigStatus::Simulated))},
                   {"from_cache", static_cast<int64_t>(report.count(ConfigStatus::Simulated, true))},
                   {"pruned", static_cast<int64_t>(report.count(ConfigStatus::Pruned))},
                   {"over_budget", static_cast<int64_t>(report.count(ConfigStatus::OverBudget))},
                   {"illegal", static_cast<int64_t>(report.count(ConfigStatus::Illegal))},
                   {"failed", static_cast<int64_t>(report.count(ConfigStatus::Failed))},
                   {"results", std::move(results)}};
  const ConfigResult *best = bestResult(report.results);
  obj["best"] = best ? json::Value(blockToJSON(best->block)) : json::Value(nullptr);
  obj["best_latency_us"] = best ? json::Value(best->sim->latencyUs) : json::Value(nullptr);
  return obj;
}

void printReportCSV(const TuneReport &report, llvm::raw_ostream &os) {
  for (const std::string &p : report.params)
    os << p << ",";
  os << "status,latency_us,mfu,ai,sbuf_peak_bytes,spill_bytes,predicted_latency_us,from_cache,"
        "reason\n";
  for (const ConfigResult &r : report.results) {
    for (const std::string &p : report.params) {
      std::optional<int64_t> v = r.block.get(p);
      os << (v ? std::to_string(*v) : "") << ",";
    }
    os << statusName(r.status) << ",";
    if (r.sim)
      os << llvm::formatv("{0},{1},{2},{3},{4},", r.sim->latencyUs, r.sim->mfu, r.sim->ai,
                          r.sim->sbufPeakBytes, r.sim->spillBytes);
    else
      os << ",,,,,";
    if (r.model)
      os << llvm::formatv("{0}", r.model->predictedUs);
    os << "," << (r.sim ? (r.fromCache ? "true" : "false") : "") << "," << csvField(r.reason)
       << "\n";
  }
}

llvm::Expected<TuneReport> parseReportJSON(llvm::StringRef text, llvm::StringRef origin) {
  if (llvm::Error deep = checkJsonDepth(text, ""))
    return invalid(origin, llvm::toString(std::move(deep)));
  llvm::Expected<json::Value> root = json::parse(text);
  if (!root)
    return invalid(origin, "invalid JSON (" + llvm::toString(root.takeError()) + ")");
  const json::Object *obj = root->getAsObject();
  if (!obj)
    return invalid(origin, "not a JSON object");
  TuneReport report;
  for (auto [field, out] :
       {std::pair{"kernel", &report.key.kernel}, std::pair{"shapes", &report.key.shapes},
        std::pair{"target", &report.key.target}, std::pair{"pipeline", &report.key.pipeline},
        std::pair{"key", &report.key.hash}, std::pair{"tessel_version", &report.version}}) {
    auto s = obj->getString(field);
    if (!s)
      return invalid(origin, llvm::formatv("no '{0}' string", field));
    *out = s->str();
  }
  auto spaceSize = obj->getInteger("space_size");
  const json::Array *params = obj->getArray("params");
  const json::Array *shards = obj->getArray("shards");
  const json::Array *results = obj->getArray("results");
  const json::Array *space = obj->getArray("space");
  if (!spaceSize || *spaceSize < 0 || !params || !shards || !results || !space)
    return invalid(origin, "'space_size', 'space', 'params', 'shards' or 'results' is missing");
  report.spaceSize = static_cast<size_t>(*spaceSize);
  if (space->size() != report.spaceSize)
    return invalid(origin, llvm::formatv("'space' lists {0} configurations, 'space_size' is {1}",
                                         space->size(), report.spaceSize));
  for (const json::Value &c : *space) {
    auto name = c.getAsString();
    if (!name)
      return invalid(origin, "'space' holds a non-string");
    report.space.push_back(name->str());
  }
  report.pruning = obj->getBoolean("pruning").getValueOr(true);
  report.interrupted = obj->getBoolean("interrupted").getValueOr(false);
  for (const json::Value &p : *params) {
    auto name = p.getAsString();
    if (!name)
      return invalid(origin, "'params' holds a non-string");
    report.params.push_back(name->str());
  }
  for (const json::Value &s : *shards) {
    auto spec = s.getAsString();
    llvm::Expected<Shard> shard = spec ? parseShard(*spec) : invalid(origin, "bad shard");
    if (!shard)
      return invalid(origin, "'shards': " + llvm::toString(shard.takeError()));
    report.shards.push_back(*shard);
  }
  for (const json::Value &r : *results) {
    llvm::Expected<ConfigResult> result = resultFromJSON(r);
    if (!result)
      return invalid(origin, llvm::toString(result.takeError()));
    report.results.push_back(std::move(*result));
  }
  return report;
}

llvm::Expected<ShardGaps> checkShardResults(const TuneReport &report, llvm::StringRef origin) {
  // The configurations the report's shards hold, as selectShard splits them.
  std::map<std::string, std::string> shardOf;
  for (Shard s : report.shards) {
    if (s.index >= s.count)
      return inconsistent(origin, "shard " + shardName(s) + " does not exist");
    for (size_t i = s.index; i < report.space.size(); i += s.count)
      shardOf.emplace(report.space[i], shardName(s));
  }
  std::set<std::string> seen;
  ShardGaps gaps;
  for (const ConfigResult &r : report.results) {
    std::string name = formatBlock(r.block);
    if (!shardOf.count(name))
      return inconsistent(origin, llvm::formatv("configuration {0} is not in its shards ({1}) of the "
                                           "space of {2} configurations",
                                           name,
                                           llvm::join(llvm::map_range(report.shards, shardName), ", "),
                                           report.spaceSize));
    if (!seen.insert(name).second)
      return inconsistent(origin, "configuration " + name + " has two results");
    if (r.status == ConfigStatus::Interrupted)
      gaps.unfinished.push_back(name);
  }
  for (const auto &kv : shardOf)
    if (!seen.count(kv.first))
      gaps.missing.push_back(kv.first + " (shard " + kv.second + ")");
  return gaps;
}

} // namespace tessel::tune

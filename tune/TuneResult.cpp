#include "tune/TuneResult.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <tuple>

namespace json = llvm::json;

namespace tessel::tune {
namespace {

llvm::Error malformed(const llvm::Twine &what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "malformed result: " + what);
}

constexpr ConfigStatus kStatuses[] = {ConfigStatus::Simulated,  ConfigStatus::Pruned,
                                      ConfigStatus::OverBudget, ConfigStatus::Illegal,
                                      ConfigStatus::Failed,     ConfigStatus::Interrupted};

/// Reads the numbers `keys` of `obj` into `out` (all of them, or an error).
template <typename... T>
llvm::Error readNumbers(const json::Object &obj, llvm::StringRef where,
                        std::pair<llvm::StringRef, T *>... fields) {
  llvm::Error err = llvm::Error::success();
  auto read = [&](llvm::StringRef key, auto *out) {
    if (err)
      return;
    std::optional<double> v;
    if (auto d = obj.getNumber(key))
      v = *d;
    // Finite and exact in a double (a count of bytes is an integer too):
    // infinity would be written back as `inf`, which is not JSON.
    if (!v || *v < 0 || !(*v <= 9007199254740992.0)) {
      err = malformed("'" + where + key + "' is missing or not a non-negative number up to 2^53");
      return;
    }
    *out = static_cast<std::remove_pointer_t<decltype(out)>>(*v);
  };
  (read(fields.first, fields.second), ...);
  return err;
}

} // namespace

llvm::StringRef statusName(ConfigStatus status) {
  switch (status) {
  case ConfigStatus::Simulated: return "simulated";
  case ConfigStatus::Pruned: return "pruned";
  case ConfigStatus::OverBudget: return "over_budget";
  case ConfigStatus::Illegal: return "illegal";
  case ConfigStatus::Failed: return "failed";
  case ConfigStatus::Interrupted: return "interrupted";
  }
  return "?";
}

json::Object blockToJSON(const BlockConfig &block) {
  json::Object obj;
  for (const auto &[name, value] : block)
    obj[name] = value;
  return obj;
}

llvm::Expected<BlockConfig> blockFromJSON(const json::Value *value) {
  const json::Object *obj = value ? value->getAsObject() : nullptr;
  if (!obj || obj->empty())
    return malformed("'block' is missing or empty");
  BlockConfig block;
  for (const auto &kv : *obj) {
    auto v = kv.second.getAsInteger();
    if (!v || *v <= 0)
      return malformed("block parameter '" + kv.first.str() + "' is not a positive integer");
    block.set(kv.first.str(), *v);
  }
  return block;
}

json::Value resultToJSON(const ConfigResult &r) {
  json::Object obj{{"block", blockToJSON(r.block)}, {"status", statusName(r.status)}};
  if (!r.reason.empty())
    obj["reason"] = r.reason;
  // Every result has every key; null = not measured (or not compiled).
  auto measured = [&](auto value) { return r.sim ? json::Value(value) : json::Value(nullptr); };
  obj["latency_us"] = measured(r.sim ? r.sim->latencyUs : 0);
  obj["mfu"] = measured(r.sim ? r.sim->mfu : 0);
  obj["ai"] = measured(r.sim ? r.sim->ai : 0);
  obj["sbuf_peak_bytes"] = measured(r.sim ? r.sim->sbufPeakBytes : 0);
  obj["spill_bytes"] = measured(r.sim ? static_cast<int64_t>(r.sim->spillBytes) : 0);
  obj["from_cache"] = r.sim && r.fromCache;
  if (r.model)
    obj["model"] = json::Object{{"latency_us", r.model->predictedUs},
                                {"bound_us", r.model->boundUs},
                                {"ai", r.model->ai},
                                {"sbuf_peak_bytes", r.model->sbufPeakBytes},
                                {"spill_bytes", static_cast<int64_t>(r.model->spillBytes)}};
  else
    obj["model"] = nullptr;
  return obj;
}

llvm::Expected<ConfigResult> resultFromJSON(const json::Value &value) {
  const json::Object *obj = value.getAsObject();
  if (!obj)
    return malformed("not an object");
  ConfigResult r;
  auto block = blockFromJSON(obj->get("block"));
  if (!block)
    return block.takeError();
  r.block = std::move(*block);
  auto status = obj->getString("status");
  auto known = std::find_if(std::begin(kStatuses), std::end(kStatuses),
                            [&](ConfigStatus s) { return status && statusName(s) == *status; });
  if (known == std::end(kStatuses))
    return malformed("unknown 'status' of " + formatBlock(r.block));
  r.status = *known;
  if (auto reason = obj->getString("reason"))
    r.reason = reason->str();
  if (const json::Object *model = obj->getObject("model")) {
    ModelEstimate m;
    if (llvm::Error err = readNumbers(*model, "model.",
                                      std::pair{llvm::StringRef("latency_us"), &m.predictedUs},
                                      std::pair{llvm::StringRef("bound_us"), &m.boundUs},
                                      std::pair{llvm::StringRef("ai"), &m.ai},
                                      std::pair{llvm::StringRef("sbuf_peak_bytes"), &m.sbufPeakBytes},
                                      std::pair{llvm::StringRef("spill_bytes"), &m.spillBytes}))
      return err;
    r.model = m;
  }
  if (r.status == ConfigStatus::Simulated) {
    SimMeasure s;
    if (llvm::Error err = readNumbers(*obj, "",
                                      std::pair{llvm::StringRef("latency_us"), &s.latencyUs},
                                      std::pair{llvm::StringRef("mfu"), &s.mfu},
                                      std::pair{llvm::StringRef("ai"), &s.ai},
                                      std::pair{llvm::StringRef("sbuf_peak_bytes"), &s.sbufPeakBytes},
                                      std::pair{llvm::StringRef("spill_bytes"), &s.spillBytes}))
      return err;
    // A simulated kernel takes time and cannot run the tensor engine above
    // its peak (a 0 us latency would rank first).
    if (!(s.latencyUs > 0))
      return malformed("'latency_us' of simulated " + formatBlock(r.block) + " is 0");
    if (s.mfu > 1)
      return malformed(llvm::formatv("'mfu' of {0} is {1}, over 1 (the peak)", formatBlock(r.block), s.mfu).str());
    r.sim = s;
    r.fromCache = obj->getBoolean("from_cache").getValueOr(false);
  }
  bool needsModel = r.status == ConfigStatus::Simulated || r.status == ConfigStatus::Pruned ||
                    r.status == ConfigStatus::OverBudget;
  if (needsModel && !r.model)
    return malformed("'model' of " + formatBlock(r.block) + " is missing");
  return r;
}

void rankResults(std::vector<ConfigResult> &results) {
  auto key = [](const ConfigResult &r) {
    int group = r.sim ? 0 : r.model ? 1 : 2;
    double value = r.sim ? r.sim->latencyUs : r.model ? r.model->predictedUs : 0;
    return std::make_tuple(group, value, r.block);
  };
  std::stable_sort(results.begin(), results.end(),
                   [&](const ConfigResult &a, const ConfigResult &b) { return key(a) < key(b); });
}

const ConfigResult *bestResult(const std::vector<ConfigResult> &results) {
  const ConfigResult *best = nullptr;
  for (const ConfigResult &r : results)
    if (r.sim && (!best || r.sim->latencyUs < best->sim->latencyUs ||
                  (r.sim->latencyUs == best->sim->latencyUs &&
                   r.block < best->block)))
      best = &r;
  return best;
}

} // namespace tessel::tune

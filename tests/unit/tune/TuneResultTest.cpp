//===- tests/unit/tune/TuneResultTest.cpp - results and their JSON -----===//
#include "tune/TuneResult.h"

#include <gtest/gtest.h>

using namespace tessel::tune;
namespace json = llvm::json;

namespace {

ConfigResult simulated(int64_t m, int64_t n, double latencyUs, double boundUs) {
  ConfigResult r;
  r.block = {{"m", m}, {"n", n}};
  r.status = ConfigStatus::Simulated;
  r.model = ModelEstimate{boundUs, 100.5, 4096, 0, boundUs};
  r.sim = SimMeasure{latencyUs, 0.5, 101.25, 8192, 64};
  return r;
}

ConfigResult withStatus(int64_t m, ConfigStatus status, double boundUs = 0) {
  ConfigResult r;
  r.block = {{"m", m}, {"n", 512}};
  r.status = status;
  if (boundUs > 0)
    r.model = ModelEstimate{boundUs, 1, 1, 0, boundUs};
  if (status == ConfigStatus::Illegal)
    r.reason = "does not fit";
  return r;
}

json::Value parse(llvm::StringRef text) {
  auto v = json::parse(text);
  EXPECT_TRUE(bool(v)) << llvm::toString(v.takeError());
  return v ? std::move(*v) : json::Value(nullptr);
}

std::string errorOf(llvm::Expected<ConfigResult> r) {
  return r ? "" : llvm::toString(r.takeError());
}

TEST(TuneResult, JSONRoundTrip) {
  ConfigResult r = simulated(256, 512, 12.5, 10.0);
  r.fromCache = true;
  auto back = resultFromJSON(resultToJSON(r));
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(back->block, r.block);
  EXPECT_EQ(back->status, ConfigStatus::Simulated);
  EXPECT_TRUE(back->fromCache);
  EXPECT_DOUBLE_EQ(back->sim->latencyUs, 12.5);
  EXPECT_DOUBLE_EQ(back->sim->mfu, 0.5);
  EXPECT_EQ(back->sim->sbufPeakBytes, 8192);
  EXPECT_EQ(back->sim->spillBytes, 64u);
  EXPECT_DOUBLE_EQ(back->model->predictedUs, 10.0);
  EXPECT_DOUBLE_EQ(back->model->boundUs, r.model->boundUs);
  EXPECT_EQ(back->model->sbufPeakBytes, 4096);

  auto illegal = resultFromJSON(resultToJSON(withStatus(640, ConfigStatus::Illegal)));
  ASSERT_TRUE(bool(illegal));
  EXPECT_EQ(illegal->reason, "does not fit");
  EXPECT_FALSE(illegal->model);
  EXPECT_FALSE(illegal->sim);
}

TEST(TuneResult, UnmeasuredResultsHaveNullMeasurements) {
  json::Value v = resultToJSON(withStatus(128, ConfigStatus::Pruned, 30.0));
  const json::Object *obj = v.getAsObject();
  ASSERT_TRUE(obj);
  for (llvm::StringRef key : {"latency_us", "mfu", "ai", "sbuf_peak_bytes", "spill_bytes"}) {
    ASSERT_TRUE(obj->get(key)) << key.str();
    EXPECT_EQ(obj->get(key)->kind(), json::Value::Null) << key.str();
  }
  EXPECT_EQ(obj->getObject("model")->getNumber("latency_us").getValue(), 30.0);
}

TEST(TuneResult, UntrustedJSONIsRejected) {
  EXPECT_EQ(errorOf(resultFromJSON(parse("[1]"))), "malformed result: not an object");
  EXPECT_EQ(errorOf(resultFromJSON(parse(R"({"status": "pruned"})"))),
            "malformed result: 'block' is missing or empty");
  EXPECT_EQ(errorOf(resultFromJSON(parse(R"({"block": {"m": -128}, "status": "pruned"})"))),
            "malformed result: block parameter 'm' is not a positive integer");
  EXPECT_EQ(errorOf(resultFromJSON(parse(R"({"block": {"m": 128}, "status": "best"})"))),
            "malformed result: unknown 'status' of m=128");
  EXPECT_EQ(errorOf(resultFromJSON(parse(R"({"block": {"m": 128}, "status": "pruned"})"))),
            "malformed result: 'model' of m=128 is missing");
  json::Value good = resultToJSON(simulated(128, 128, 2, 1));
  good.getAsObject()->erase("mfu");
  EXPECT_EQ(errorOf(resultFromJSON(good)),
            "malformed result: 'mfu' is missing or not a non-negative number up to 2^53");
}

TEST(TuneResult, NumbersBeyondWhatJSONWritesBackAreRejected) {
  // Found by fuzz-tune-report: 1e999 parses as infinity, which a report
  // wrote back as `inf` (not JSON); a byte count past 2^53 is no integer.
  for (const char *number : {"1e999", "1e300"}) {
    json::Value r = resultToJSON(simulated(128, 128, 2, 1));
    json::Value big = *json::parse(number);
    (*r.getAsObject()->getObject("model"))["bound_us"] = big;
    EXPECT_EQ(errorOf(resultFromJSON(r)),
              "malformed result: 'model.bound_us' is missing or not a non-negative number up to 2^53")
        << number;
  }
}

TEST(TuneResult, RankingAndBest) {
  std::vector<ConfigResult> results = {
      withStatus(640, ConfigStatus::Illegal), withStatus(128, ConfigStatus::Pruned, 50),
      simulated(512, 512, 20, 5), withStatus(1024, ConfigStatus::OverBudget, 40),
      simulated(256, 512, 10, 6), simulated(256, 256, 10, 6)};
  rankResults(results);
  std::vector<std::string> order;
  for (const ConfigResult &r : results)
    order.push_back(formatBlock(r.block));
  // Measured by latency (ties by block), then by the model's bound, then rejected.
  EXPECT_EQ(order, (std::vector<std::string>{"m=256,n=256", "m=256,n=512", "m=512,n=512",
                                             "m=1024,n=512", "m=128,n=512", "m=640,n=512"}));
  const ConfigResult *best = bestResult(results);
  ASSERT_TRUE(best);
  EXPECT_EQ(formatBlock(best->block), "m=256,n=256");
  EXPECT_EQ(bestResult({withStatus(128, ConfigStatus::Pruned, 1)}), nullptr);
}

} // namespace

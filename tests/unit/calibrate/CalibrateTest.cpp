//===- tests/unit/calibrate/CalibrateTest.cpp - the fit recovers known parameters ===//
#include "calibrate/Calibrate.h"

#include "runtime/Simulator.h"

#include "gtest/gtest.h"

#include <fmt/format.h>

#include <cmath>

using namespace tessel::calibrate;
using namespace tessel::runtime;

namespace {

Program parseOrFail(const std::string &text) {
  auto p = parseProgram(text, "test.tasm");
  if (!p) {
    ADD_FAILURE() << llvm::toString(p.takeError());
    return Program();
  }
  return std::move(*p);
}

// Loads and stores `tiles` tiles of [128, cols]: sensitive to the fixed DMA
// cost (few, small transfers) and the per-partition overhead (many bytes).
std::string copyTiles(int tiles, int cols, int inFlight) {
  return fmt::format(R"(
tensor %in : bf16[128, {0}] input
tensor %out : bf16[128, {0}] output
buffer %t : sbuf bf16[128, {1}] bufs={3} addr=0
for %i = 0 to {2} {{
  alloc %t
  dma %t <- %in[0:128, %i*{1} : {1}] queue=0 queues={3}
  dma %out[0:128, %i*{1} : {1}] <- %t queue=8 queues={3}
}}
)",
                     tiles * cols, cols, tiles, inFlight);
}

/// Points whose "measured" latencies are what `truth` simulates.
Calibration measuredOn(const Target &truth) {
  std::vector<CalibPoint> pts;
  int shapes[][3] = {{1, 64, 1}, {4, 256, 1}, {16, 512, 8}, {16, 2048, 8}, {32, 128, 4}};
  for (auto &s : shapes) {
    CalibPoint p;
    p.program = parseOrFail(copyTiles(s[0], s[1], s[2]));
    p.m.name = fmt::format("copy{}x{}", s[0], s[1]);
    pts.push_back(std::move(p));
  }
  Calibration c(std::move(pts), 1);
  auto sims = c.simulate(truth, c.everyPoint());
  EXPECT_TRUE(bool(sims));
  std::vector<CalibPoint> measured = c.all();
  for (size_t i = 0; i < measured.size(); ++i)
    measured[i].m.latencyUs = (*sims)[i].latencyUs;
  return Calibration(std::move(measured), 1);
}

TEST(Calibrate, RecoversTheParametersThatProducedTheMeasurements) {
  Target start = trn1Target();
  Target truth = start;
  truth.dma_fixed_latency_ns = 900;
  truth.dma_descriptor_overhead_bytes = 512;
  Calibration c = measuredOn(truth);
  auto params = selectFreeParams("dma_fixed_latency_ns,dma_descriptor_overhead_bytes");
  ASSERT_TRUE(bool(params));
  auto before = c.simulate(start, c.everyPoint());
  ASSERT_TRUE(bool(before));
  EXPECT_GT(c.latencyWmape(c.everyPoint(), *before), 0.05);
  auto fit = c.fit(start, *params, c.everyPoint(), FitOptions());
  ASSERT_TRUE(bool(fit)) << llvm::toString(fit.takeError());
  EXPECT_LT(fit->score, 0.005);
  EXPECT_NEAR(fit->target.dma_fixed_latency_ns, 900, 50);
  EXPECT_NEAR(fit->target.dma_descriptor_overhead_bytes, 512, 50);
  // Nothing else moved.
  EXPECT_EQ(fit->target.dma_engine_bandwidth_gbs, start.dma_engine_bandwidth_gbs);
  EXPECT_EQ(fit->target.tensor_clock_ghz, start.tensor_clock_ghz);
}

// The per-transfer engine time is a free parameter: separable from the
// fixed latency because it occupies the engines (many transfers in flight
// queue behind it) while the latency overlaps across queues.
TEST(Calibrate, RecoversThePerTransferEngineTime) {
  Target start = trn1Target();
  Target truth = start;
  truth.dma_transfer_overhead_ns = 600;
  Calibration c = measuredOn(truth);
  auto params = selectFreeParams("dma_transfer_overhead_ns");
  ASSERT_TRUE(bool(params));
  auto fit = c.fit(start, *params, c.everyPoint(), FitOptions());
  ASSERT_TRUE(bool(fit)) << llvm::toString(fit.takeError());
  EXPECT_LT(fit->score, 0.005);
  EXPECT_NEAR(fit->target.dma_transfer_overhead_ns, 600, 30);
}

TEST(Calibrate, StaysWithinTheBounds) {
  Target start = trn1Target();
  Target truth = start;
  truth.dma_fixed_latency_ns = 5000; // beyond the 2000 ns bound
  Calibration c = measuredOn(truth);
  auto params = selectFreeParams("dma_fixed_latency_ns");
  ASSERT_TRUE(bool(params));
  auto fit = c.fit(start, *params, c.everyPoint(), FitOptions());
  ASSERT_TRUE(bool(fit));
  // Pushed to the upper bound, never past it.
  EXPECT_LE(fit->target.dma_fixed_latency_ns, 2000);
  EXPECT_GT(fit->target.dma_fixed_latency_ns, 1950);
}

TEST(Calibrate, FreeParametersExcludePublishedRates) {
  for (const FreeParam &p : freeParams()) {
    EXPECT_EQ(p.field.find("clock"), std::string::npos) << p.field;
    EXPECT_NE(p.field, "hbm_bandwidth_gbs");
    EXPECT_LT(p.lo, p.hi) << p.field;
  }
  auto bad = selectFreeParams("tensor_clock_ghz");
  EXPECT_FALSE(bool(bad));
  llvm::consumeError(bad.takeError());
}

} // namespace

// The TensorE throttle parameters are fitted only when --params names them.
TEST(Calibrate, TensorThrottleParamsAreOptIn) {
  auto byDefault = selectFreeParams("");
  ASSERT_TRUE(bool(byDefault));
  for (const FreeParam &p : *byDefault)
    EXPECT_EQ(p.field.rfind("tensor_throttle", 0), std::string::npos) << p.field;
  EXPECT_LT(byDefault->size(), freeParams().size());
  auto named = selectFreeParams("tensor_throttle_rate,tensor_warmup_ns");
  ASSERT_TRUE(bool(named));
  ASSERT_EQ(named->size(), 2u);
  EXPECT_EQ((*named)[0].field, "tensor_throttle_rate");
}

// A point measured twice (two rows running the same program) must not stay in
// the fit that predicts the other: the fit would be told the answer.
TEST(Calibrate, LeaveOneOutFitsWithoutTheLeftOutPointsDuplicates) {
  auto point = [](std::string path, std::string define, std::string pipeline) {
    CalibPoint p;
    p.m.kernel.path = std::move(path);
    if (!define.empty())
      p.m.kernel.defines.push_back({"M", std::move(define)});
    p.m.kernel.pipeline = std::move(pipeline);
    return p;
  };
  std::vector<CalibPoint> pts;
  pts.push_back(point("copy.tasm", "", "O0"));
  pts.push_back(point("copy.tasm", "", "O0")); // the same run, measured again
  pts.push_back(point("mm.tsl", "128", "O0"));
  pts.push_back(point("mm.tsl", "256", "O0")); // other defines: another program
  pts.push_back(point("mm.tsl", "128", "O2")); // another pipeline: another program
  Calibration c(std::move(pts), 1);
  EXPECT_EQ(c.trainingSetWithout(0), (std::vector<size_t>{2, 3, 4}));
  EXPECT_EQ(c.trainingSetWithout(1), (std::vector<size_t>{2, 3, 4}));
  EXPECT_EQ(c.trainingSetWithout(2), (std::vector<size_t>{0, 1, 3, 4}));
  EXPECT_EQ(c.trainingSetWithout(4), (std::vector<size_t>{0, 1, 2, 3}));
}

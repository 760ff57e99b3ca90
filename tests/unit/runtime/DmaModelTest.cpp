//===- tests/unit/runtime/DmaModelTest.cpp - DMA model vs published figures ===//
//
// The DMA rules and microbenchmarks of docs/measurements.md §3 and docs/hardware.md §4.3.
// Where a test compares with a measured figure it allows a stated tolerance:
// the model is checked, not fitted to the number. Each test against a
// published figure says which kind it is (docs/targets.md):
//   independent     the figure is not the one any value involved was derived from;
//   regression pin  a target value was derived from this very figure, so the
//                   test only guards that derivation against later edits.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

#include "runtime/DmaModel.h"
#include "runtime/Launch.h"

#include <fmt/format.h>

#include <cmath>

using namespace tessel::runtime;
using namespace tessel::runtime::test;

namespace {

Target trn2() {
  auto t = loadTarget("trn2");
  if (!t) {
    ADD_FAILURE() << llvm::toString(t.takeError());
    return trn1Target();
  }
  return *t;
}

double relErr(double model, double measured) { return std::fabs(model - measured) / measured; }

// Regression pin: dma_descriptor_overhead_bytes (256) was derived from this
// rule, "< 256 B per partition severely overhead-bound; >= 2 KiB recommended;
// >= 4 KiB near saturation" (nki-dma-bandwidth-guide.rst).
TEST(DmaModel, EfficiencyFollowsThePublishedBytesPerPartitionRule) {
  for (const Target &t : {trn1Target(), trn2()}) {
    DmaModel m(t);
    SCOPED_TRACE(t.name);
    EXPECT_LE(m.efficiency(255, 0, false), 0.5);
    EXPECT_GE(m.efficiency(2048, 0, false), 0.85);
    EXPECT_GE(m.efficiency(4096, 0, false), 0.9);
    double prev = 0;
    for (double bpp = 64; bpp <= 65536; bpp *= 2) {
      double e = m.efficiency(bpp, 0, false);
      EXPECT_GT(e, prev) << bpp;
      EXPECT_LE(e, 1.0);
      prev = e;
    }
  }
}

// Independent: two statements no value was derived from. The performance
// guide's Opt #9 example calls 1024 fp32 elements (4 KiB) per partition "the
// ideal size", "Beyond 1024 has diminished return on bandwidth"
// (nki_perf_guide.rst), and investigations/dma_efficiency.md: "Beyond 4 KB,
// improvements are marginal". A whole-partition transfer's utilisation of
// the engines gains less from 4 to 8 KiB per partition than from 2 to 4 KiB,
// and under 10 %.
TEST(DmaModel, BeyondFourKiBPerPartitionTheGainIsMarginal) {
  for (const Target &t : {trn1Target(), trn2()}) {
    SCOPED_TRACE(t.name);
    DmaModel m(t);
    auto utilisation = [&](int64_t bytesPerPartition) {
      DmaTiming c = m.cost({128 * bytesPerPartition, 128, 0, false});
      return double(128 * bytesPerPartition) / c.occupancyNs;
    };
    double gain24 = utilisation(4096) / utilisation(2048), gain48 = utilisation(8192) / utilisation(4096);
    EXPECT_LT(gain48, gain24);
    EXPECT_LT(gain48, 1.10);
  }
}

TEST(DmaModel, EfficiencyIsPerPartitionNotPerTransfer) {
  DmaModel m(trn1Target());
  // The same 128 KiB as 128 x 1 KiB or 32 x 4 KiB: the rule is about bytes
  // per partition, so the narrow-but-long transfer is the efficient one.
  DmaTiming wide = m.cost({128 * 1024, 128, 0, false});
  DmaTiming tall = m.cost({128 * 1024, 32, 0, false});
  EXPECT_DOUBLE_EQ(wide.bytesPerPartition, 1024);
  EXPECT_DOUBLE_EQ(tall.bytesPerPartition, 4096);
  EXPECT_GT(tall.efficiency, wide.efficiency);
}

TEST(DmaModel, PartitionBytesInSeveralRunsPayTheOverheadPerRun) {
  DmaModel m(trn1Target());
  double one = m.efficiency(4096, 4096, false);
  double four = m.efficiency(4096, 1024, false);
  EXPECT_DOUBLE_EQ(one, m.efficiency(4096, 0, false));
  EXPECT_DOUBLE_EQ(four, m.efficiency(1024, 0, false));
  EXPECT_LT(four, one);
}

TEST(DmaModel, TransposeRunsAtItsPublishedFraction) {
  Target t = trn2();
  DmaModel m(t);
  EXPECT_DOUBLE_EQ(m.efficiency(2048, 0, true), m.efficiency(2048, 0, false) * t.dma_transpose_efficiency);
}

TEST(DmaModel, EnginesFollowPartitions) {
  DmaModel m(trn1Target());
  EXPECT_EQ(m.enginesFor(128), 16);
  EXPECT_EQ(m.enginesFor(8), 1);
  EXPECT_EQ(m.enginesFor(9), 2);
  EXPECT_EQ(m.enginesFor(4), 1);
  EXPECT_EQ(m.enginesFor(4096), 16);
}

// "one DMA engine, HBM->SBUF, 32 KiB (A[4, 4096] bf16): 1,416 ns"
// (nki-dma-overview.rst). The figure is the data time at the engine's rate
// (23 B/ns); the fixed per-transfer cost comes on top of it in the model.
// Independent for the rate (23 B/ns is the per-generation table's, not read
// off this measurement); a regression pin for trn2's dma_transfer_overhead_ns
// (0), which was derived in part from this figure.
TEST(DmaModel, OneEngineMoves32KiBAtThePublishedRate) {
  Target t = trn2();
  DmaTiming c = DmaModel(t).cost({32 * 1024, 4, 0, false});
  EXPECT_EQ(c.engines, 1);
  double dataNs = c.isolatedNs(32 * 1024) - c.fixedNs;
  EXPECT_LT(relErr(dataNs, 1416), 0.05) << dataNs;
}

// Each engine processes one transfer at a time, and a transfer costs each of
// its engines dma_transfer_overhead_ns besides its bytes (ARCH-V2, DMA-BW).
TEST(DmaModel, TransferOverheadOccupiesEachEngineOfTheTransfer) {
  Target t = trn1Target();
  t.dma_transfer_overhead_ns = 500;
  DmaModel m(t);
  DmaTiming c = m.cost({128 * 1024, 128, 0, false});
  double perEngine = 128.0 * 1024 / 16;
  EXPECT_DOUBLE_EQ(c.engineNs, 500 + perEngine / (t.dma_engine_bandwidth_gbs * c.efficiency));
  EXPECT_DOUBLE_EQ(c.rateBytesPerNs, 128.0 * 1024 / c.engineNs);
  // All 16 engines are held for engineNs: the pool's share is the whole of it
  // (the HBM share, 410 GB/s, is not the scarcer resource here).
  EXPECT_DOUBLE_EQ(c.occupancyNs, c.engineNs);
  // One engine of 16: a sixteenth of the pool for the same engine time.
  DmaTiming one = m.cost({8 * 1024, 8, 0, false});
  EXPECT_EQ(one.engines, 1);
  EXPECT_DOUBLE_EQ(one.occupancyNs, one.engineNs / 16);
  // Without the overhead the pool is bytes / (16 engines x rate x efficiency).
  t.dma_transfer_overhead_ns = 0;
  DmaTiming bare = DmaModel(t).cost({128 * 1024, 128, 0, false});
  EXPECT_DOUBLE_EQ(bare.occupancyNs, 128.0 * 1024 / (t.dmaPoolBytesPerNs() * bare.efficiency));
}

TEST(DmaModel, HbmShareBindsWhenThePoolIsFaster) {
  Target t = trn1Target();
  t.dma_transfer_overhead_ns = 0;
  t.dma_engine_bandwidth_gbs = 40; // pool 640 GB/s > 410 GB/s HBM share
  DmaTiming c = DmaModel(t).cost({128 * 1024, 128, 0, false});
  EXPECT_DOUBLE_EQ(c.occupancyNs, 128.0 * 1024 / (t.hbmBytesPerNs() * c.efficiency));
}

// Regression pin: trn1's dma_transfer_overhead_ns (207 ns) was derived from
// this figure, nki_perf_guide.rst Opt #9's large transfers "achieving close
// to 85% DMA throughput utilization" at 32 KiB per transfer (a 128 x 1024
// fp32 load: 16 transfers of 8 partitions x 4 KiB), so reaching ~85 % here
// checks the derivation's arithmetic, not the model (docs/targets.md: the
// SDK 2.23 guide said 70 %). That smaller transfers lose more is the
// published bytes-per-partition rule.
TEST(DmaModel, Trn1ThirtyTwoKiBTransfersReachAboutEightyFivePercent) {
  const Target &t = trn1Target();
  DmaModel m(t);
  auto utilisation = [&](int64_t bytesPerPartition) {
    DmaTiming c = m.cost({128 * bytesPerPartition, 128, 0, false});
    return double(128 * bytesPerPartition) / c.occupancyNs / t.dmaPoolBytesPerNs();
  };
  EXPECT_NEAR(utilisation(4096), 0.85, 0.02);
  EXPECT_LT(utilisation(1024), utilisation(2048));
  EXPECT_LT(utilisation(2048), utilisation(4096));
  EXPECT_LT(utilisation(256), 0.4);
}

// N tiles of [128, cols] bf16 loaded then stored back, 8 transfers in flight
// per direction (neuron-agentic-development investigations/dma_efficiency.md).
std::string copyTiles(int tiles, int cols) {
  return fmt::format(R"(
tensor %in : bf16[128, {0}] input
tensor %out : bf16[128, {0}] output
buffer %t : sbuf bf16[128, {1}] bufs=8 addr=0
for %i = 0 to {2} {{
  alloc %t
  dma %t <- %in[0:128, %i*{1} : {1}] queue=0 queues=8
  dma %out[0:128, %i*{1} : {1}] <- %t queue=8 queues=8
}}
)",
                     tiles * cols, cols, tiles);
}

double simulatedNs(const std::string &text, const Target &t, LatencyKind k = LatencyKind::Device) {
  Program p = parseOrFail(text);
  SimOptions o;
  o.timingOnly = true;
  o.latency = k;
  return runOrFail(p, o, t).report.latencyNs;
}

// Independent for the 16 us run (dma_copy_1kib, held out); a regression pin
// for the 47 us run, whose 354 GB/s trn2's dma_transfer_overhead_ns (0) was
// derived from (dma_copy_4kib, in-sample).
// Tolerance 12%: the model is pessimistic on both (17.1 and 51.8 us): the
// 4 KiB run implies ~378 GB/s of data rate once the two exposed fixed costs
// are taken off, above trn2's 362.5 GB/s per-core HBM share, which caps the
// model (docs/calibration.md, "Where the model misses").
TEST(DmaModel, LoadStoreMicrobenchmarksWithinTwelvePercentOfMeasured) {
  Target t = trn2();
  // 16 x [128, 512]: 1 KiB per partition per transfer, 4 MiB moved, 16 us measured.
  double small = simulatedNs(copyTiles(16, 512), t);
  EXPECT_LT(relErr(small, 16000), 0.12) << small;
  // 16 x [128, 2048]: 4 KiB per partition, 16 MiB moved, 47 us measured.
  double large = simulatedNs(copyTiles(16, 2048), t);
  EXPECT_LT(relErr(large, 47000), 0.12) << large;
  // Achieved bandwidth rises with bytes per partition (259 -> 354 GB/s).
  EXPECT_GT(16.0 * 1024 * 1024 / large, 4.0 * 1024 * 1024 / small);
}

// "tiny kernels measure 3 us in device mode" (docs/measurements.md §5). Regression
// pin: launch_device_ns (0) and, in part, trn2's dma_fixed_latency_ns
// (1300 ns) were derived from this figure.
TEST(DmaModel, TinyKernelDeviceTimeNearThreeMicroseconds) {
  for (const Target &t : {trn1Target(), trn2()}) {
    double ns = simulatedNs(copyTiles(1, 64), t);
    EXPECT_LT(relErr(ns, 3000), 0.25) << t.name << ": " << ns;
  }
}

TEST(Launch, BenchmarkLatencyAddsTheTargetsLaunchTerm) {
  Target t = trn2();
  Program p = parseOrFail(copyTiles(2, 512));
  SimOptions o;
  o.timingOnly = true;
  Report device = runOrFail(p, o, t).report;
  o.latency = LatencyKind::Benchmark;
  Report bench = runOrFail(p, o, t).report;
  EXPECT_EQ(device.latencyPredicts, "device");
  EXPECT_EQ(bench.latencyPredicts, "benchmark");
  EXPECT_DOUBLE_EQ(bench.launchOverheadNs, t.launch_benchmark_ns);
  EXPECT_NEAR(bench.latencyNs - device.latencyNs, t.launch_benchmark_ns - t.launch_device_ns, 1e-6);
  EXPECT_EQ(*parseLatencyKind("benchmark"), LatencyKind::Benchmark);
  EXPECT_FALSE(parseLatencyKind("p99"));
}

} // namespace

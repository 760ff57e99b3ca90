//===- tests/unit/runtime/TimingTest.cpp - properties of the timing model -===//
#include "TestUtil.h"

#include "runtime/DmaModel.h"
#include "runtime/Timing.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"

#include <chrono>

using namespace tessel::runtime;
using namespace tessel::runtime::test;

namespace {

SimResult timed(const std::string &text, const Target &t = trn1Target()) {
  Program p = parseOrFail(text);
  SimOptions o;
  o.timingOnly = true;
  o.recordTimeline = true;
  return runOrFail(p, o, t);
}

const TraceEvent *eventAtLine(const SimResult &r, const Program &p, unsigned line, unsigned nth = 0) {
  for (const TraceEvent &e : r.timeline)
    if (p.instrs[e.instr].loc.line == line && nth-- == 0)
      return &e;
  return nullptr;
}

/// TensorE's time computing: its instructions' durations on the timeline
/// (its busy time also counts waits between a matmul's operands).
double tensorComputeNs(const SimResult &r) {
  double ns = 0;
  for (const TraceEvent &e : r.timeline)
    if (e.unit == 0)
      ns += e.durNs;
  return ns;
}

/// Two loads of [P, FA] and [P, FB] bf16; the second on queue QB.
std::string twoLoads(int p, int fa, int fb) {
  return llvm::formatv(R"(
tensor %A : bf16[{0}, {1}] input
tensor %B : bf16[{0}, {2}] input
buffer %a : sbuf bf16[{0}, {1}] bufs=1 addr=0
buffer %b : sbuf bf16[{0}, {2}] bufs=1 addr=16384
dma %a <- %A queue=0
dma %b <- %B queue=QB
)",
                       p, fa, fb)
      .str();
}
const std::string kTwoLoads = twoLoads(128, 4096, 4096);

std::string withQueue(const std::string &text, const char *q) {
  std::string s = text;
  s.replace(s.find("QB"), 2, q);
  return s;
}

TEST(Timing, IndependentDmasOnTwoQueuesOverlap) {
  const Target &t = trn1Target();
  SimResult same = timed(withQueue(kTwoLoads, "0"));
  SimResult two = timed(withQueue(kTwoLoads, "1"));
  double bytes = 2.0 * 128 * 4096 * 2;
  // Two queues start together; the bytes still share the HBM bandwidth.
  ASSERT_EQ(two.timeline.size(), 2u);
  EXPECT_EQ(two.timeline[0].startNs, two.timeline[1].startNs);
  EXPECT_GE(two.report.latencyNs, t.dma_fixed_latency_ns + bytes / t.hbm_bandwidth_gbs);
  // One queue issues the second transfer dma_queue_issue_ns after the first.
  ASSERT_EQ(same.timeline.size(), 2u);
  EXPECT_DOUBLE_EQ(same.timeline[1].startNs - same.timeline[0].startNs, t.dma_queue_issue_ns);
  EXPECT_LE(two.report.latencyNs, same.report.latencyNs);
}

// A queue issues its next transfer once the last one's descriptors are out
// (dma_queue_issue_ns), before the last one's data has arrived, and its
// transfers complete in order: a small transfer behind a large one on the
// same queue ends no earlier than the large one.
TEST(Timing, DmaQueueIssuesAheadAndCompletesInOrder) {
  const std::string text = twoLoads(8, 8192, 64);
  const Target &t = trn1Target();
  SimResult same = timed(withQueue(text, "0")), two = timed(withQueue(text, "1"));
  ASSERT_EQ(same.timeline.size(), 2u);
  const TraceEvent &big = same.timeline[0], &small = same.timeline[1];
  double bigEnd = big.startNs + big.durNs;
  EXPECT_DOUBLE_EQ(small.startNs, big.startNs + t.dma_queue_issue_ns);
  EXPECT_LT(small.startNs, bigEnd);
  EXPECT_GE(small.startNs + small.durNs, bigEnd);
  // On its own queue the small transfer finishes first (each runs on one
  // engine of the sixteen, so neither waits for the other's bandwidth).
  ASSERT_EQ(two.timeline.size(), 2u);
  EXPECT_LT(two.timeline[1].startNs + two.timeline[1].durNs, two.timeline[0].startNs + two.timeline[0].durNs);
}

// A loop loads a tile, then ScalarE works on it. With one buffer the load of
// iteration i+1 must wait (WAR) until iteration i's activation has read the
// tile; with two buffers (alloc per iteration) it does not.
const char *kPipeline = R"(
tensor %X : bf16[2048, 2048] input
tensor %Y : bf16[2048, 2048] output
buffer %x : sbuf bf16[128, 2048] bufs=BUFS addr=0
buffer %y : sbuf bf16[128, 2048] bufs=2 addr=16384
for %i = 0 to 16 {
  alloc %x
  dma %x <- %X[%i*128 : 128, 0:2048] queue=0
  alloc %y
  activation.exp %y <- %x
  dma %Y[%i*128 : 128, 0:2048] <- %y queue=1
}
)";

std::string withBufs(const char *bufs) {
  std::string s = kPipeline;
  s.replace(s.find("BUFS"), 4, bufs);
  return s;
}

TEST(Timing, DoubleBufferingIsFasterThanSingle) {
  SimResult single = timed(withBufs("1"));
  SimResult dbl = timed(withBufs("2"));
  EXPECT_LT(dbl.report.latencyNs, 0.9 * single.report.latencyNs)
      << "single " << single.report.latencyNs << " double " << dbl.report.latencyNs;
}

TEST(Timing, WarHazardIsRespected) {
  std::string text = withBufs("1");
  Program p = parseOrFail(text);
  SimOptions o;
  o.timingOnly = true;
  o.recordTimeline = true;
  SimResult r = runOrFail(p, o);
  // line numbers in kPipeline: dma load is line 8, activation line 10
  const TraceEvent *act0 = eventAtLine(r, p, 10, 0);
  const TraceEvent *load1 = eventAtLine(r, p, 8, 1);
  const TraceEvent *load0 = eventAtLine(r, p, 8, 0);
  ASSERT_TRUE(act0 && load1 && load0);
  EXPECT_GE(act0->startNs, load0->startNs + load0->durNs - 1e-9);  // RAW
  EXPECT_GE(load1->startNs, act0->startNs + act0->durNs - 1e-9);   // WAR
  // With two buffers the second load does not wait for the first activation.
  Program q = parseOrFail(withBufs("2"));
  SimResult d = runOrFail(q, o);
  const TraceEvent *dAct0 = eventAtLine(d, q, 10, 0);
  const TraceEvent *dLoad1 = eventAtLine(d, q, 8, 1);
  ASSERT_TRUE(dAct0 && dLoad1);
  EXPECT_LT(dLoad1->startNs, dAct0->startNs + dAct0->durNs);
}

// One slot holding two tiles, refilled every iteration: tile 0 is read
// once, early; tile 1 after a chain of ScalarE work.
const char *kRefilledPair = R"(REUSE
tensor %X : bf16[128, 8192] input
buffer %t : sbuf bf16[128, 2, 512] bufs=1 addr=0
buffer %o : sbuf bf16[128, 512] bufs=1 addr=4096
for %i = 0 to 4 {
  alloc %t
  dma %t[0:128, 0, 0:512] <- %X[0:128, %i*1024 : 512] queue=0
  dma %t[0:128, 1, 0:512] <- %X[0:128, %i*1024 + 512 : 512] queue=1
  activation.exp %o <- %t[0:128, 0, 0:512]
  activation.exp %o <- %o
  activation.exp %o <- %o
  activation.exp %o <- %t[0:128, 1, 0:512]
}
)";

std::string withReuse(const char *reuse) {
  std::string s = kRefilledPair;
  s.replace(s.find("REUSE"), 5, reuse);
  return s;
}

// Region by region, the next iteration's load of tile 0 waits only for the
// activation reading tile 0; with `reuse whole` (NKI kernels) it waits for
// every access to the slot's previous occupant, the last read of tile 1 too.
TEST(Timing, WholeSlotReuseWaitsForThePreviousOccupant) {
  SimOptions o;
  o.timingOnly = true;
  o.recordTimeline = true;
  Program region = parseOrFail(withReuse(""));
  Program whole = parseOrFail(withReuse("reuse whole"));
  EXPECT_EQ(region.slotReuse, SlotReuse::Region);
  ASSERT_EQ(whole.slotReuse, SlotReuse::Whole);
  SimResult r = runOrFail(region, o), w = runOrFail(whole, o);
  // Lines (the text's first line holds REUSE): the load of tile 0 is line 7,
  // the last read of tile 1 line 12.
  const TraceEvent *wRead1 = eventAtLine(w, whole, 12, 0), *wLoad0 = eventAtLine(w, whole, 7, 1);
  const TraceEvent *rRead1 = eventAtLine(r, region, 12, 0), *rLoad0 = eventAtLine(r, region, 7, 1);
  ASSERT_TRUE(wRead1 && wLoad0 && rRead1 && rLoad0);
  EXPECT_GE(wLoad0->startNs, wRead1->startNs + wRead1->durNs - 1e-9);
  EXPECT_LT(rLoad0->startNs, rRead1->startNs + rRead1->durNs);
  EXPECT_GT(w.report.latencyNs, r.report.latencyNs);
}

TEST(Timing, ReuseLineIsParsedAndPrinted) {
  Program whole = parseOrFail(withReuse("reuse whole"));
  std::string text;
  llvm::raw_string_ostream os(text);
  printProgram(whole, os);
  EXPECT_NE(os.str().find("reuse whole\n"), std::string::npos);
  EXPECT_EQ(parseOrFail(os.str()).slotReuse, SlotReuse::Whole);
  EXPECT_NE(parseError(withReuse("reuse some")).find("expected 'region' or 'whole' after 'reuse'"),
            std::string::npos);
  EXPECT_NE(parseError(withReuse("reuse whole\nreuse region")).find("duplicate 'reuse' line"),
            std::string::npos);
}

// A blocked matmul: out[128, 512] tiles accumulated over K; timing-only.
const char *kBigMatmul = R"(
kernel mm
tensor %A : bf16[2048, 1024] input
tensor %B : bf16[2048, 2048] input
tensor %C : bf16[1024, 2048] output
buffer %a : sbuf bf16[128, 16, 1024] bufs=1 addr=0
buffer %b : sbuf bf16[128, 16, 512] bufs=2 addr=32768
buffer %c : sbuf bf16[128, 512] bufs=2 addr=65536
buffer %p : psum f32[128, 512] bufs=4 addr=0
for %k = 0 to 16 {
  dma %a[0:128, %k, 0:1024] <- %A[%k*128 : 128, 0:1024] queue=0
}
for %n = 0 to 4 {
  alloc %b
  for %k = 0 to 16 {
    dma %b[0:128, %k, 0:512] <- %B[%k*128 : 128, %n*512 : 512] queue=1
  }
  for %m = 0 to 8 {
    alloc %p
    for %k = 0 to 16 {
      matmul %p[0:128, 0:512] <- %a[0:128, %k, %m*128 : 128], %b[0:128, %k, 0:512] reset_if_first(%k)
    }
    alloc %c
    copy %c <- %p
    dma %C[%m*128 : 128, %n*512 : 512] <- %c queue=2
  }
}
)";

TEST(Timing, NeverBeatsPhysics) {
  for (const char *targetName : {"trn1", "trn2"}) {
    auto t = loadTarget(targetName);
    ASSERT_TRUE(bool(t));
    for (const std::string &text : {std::string(kBigMatmul), withBufs("2"), withQueue(kTwoLoads, "1")}) {
      SimResult r = timed(text, *t);
      const Report &rep = r.report;
      double flopBound = double(rep.flops) / t->peakBf16Flops() * 1e9;
      double byteBound = double(rep.hbmReadBytes + rep.hbmWriteBytes) / t->hbm_bandwidth_gbs;
      EXPECT_GE(rep.latencyNs, flopBound * (1 - 1e-9));
      EXPECT_GE(rep.latencyNs, byteBound * (1 - 1e-9));
      EXPECT_LE(rep.mfu, 1.0);
      EXPECT_LE(rep.mbu, 1.0 + 1e-9);
    }
  }
}

TEST(Timing, BlockedMatmulIsComputeBound) {
  SimResult r = timed(kBigMatmul);
  const Report &rep = r.report;
  EXPECT_EQ(rep.flops, uint64_t(2) * 1024 * 2048 * 2048);
  // 512 matmuls of 128x128x512 at 512 cycles each on a 2.8 GHz array.
  EXPECT_NEAR(tensorComputeNs(r), 512 * 512 / 2.8, 1.0);
  EXPECT_EQ(rep.engines[0].instructions, 512u);
  EXPECT_GT(rep.mfu, 0.5) << rep.latencyNs;
  EXPECT_LE(rep.tensorEngineActivePct, 100.0);
  EXPECT_EQ(rep.hbmReadBytes, uint64_t(2) * (2048 * 1024 + 2048 * 2048));
  EXPECT_EQ(rep.hbmWriteBytes, uint64_t(2) * 1024 * 2048);
  EXPECT_EQ(rep.trafficInputs, rep.hbmReadBytes);
  EXPECT_EQ(rep.trafficOutputs, rep.hbmWriteBytes);
}

TEST(Timing, MatmulCostFollowsTheTargetFormula) {
  const Target &t = trn1Target();
  InstructionCosts c(t);
  EXPECT_NEAR(c.matmulNs(128, 128, 512, false, true), 512 / 2.8, 1e-9);
  EXPECT_NEAR(c.matmulNs(128, 128, 16, false, false), 64 / 2.8, 1e-9);     // MIN_II
  EXPECT_NEAR(c.matmulNs(128, 1, 128, false, false), 128 / 2.8, 1e-9);     // short stationary
  EXPECT_NEAR(c.matmulNs(128, 128, 512, true, false), 4 * 512 / 2.8, 1e-9); // fp32
  EXPECT_NEAR(c.peTransposeNs(128, 128, false), 128 / 2.8, 1e-9);
  EXPECT_NEAR(c.engineNs(Engine::Vector, 512, 1.0), (60 + 512) / 1.12, 1e-9);
  EXPECT_NEAR(c.engineNs(Engine::Scalar, 10, 1.0), (60 + 64) / 1.4, 1e-9);
  // DMA: each engine spends the per-transfer overhead plus its share of the
  // bytes at its bandwidth x efficiency (docs/calibration.md, "The DMA model").
  const double bw = t.dma_engine_bandwidth_gbs, over = t.dma_transfer_overhead_ns;
  auto d = c.dma(128 * 4096, 128, 4096, false);
  EXPECT_NEAR(d.efficiency, 4096.0 / (4096 + 256), 1e-12);
  EXPECT_NEAR(d.rate, 128 * 4096 / (over + 8 * 4096 / (bw * d.efficiency)), 1e-9);
  auto small = c.dma(4 * 4096, 4, 4096, false);
  EXPECT_NEAR(small.rate, 4 * 4096 / (over + 4 * 4096 / (bw * small.efficiency)), 1e-9); // one engine
  auto tr = c.dma(128 * 4096, 128, 4096, true);
  EXPECT_NEAR(tr.efficiency, d.efficiency * t.dma_transpose_efficiency, 1e-12);
  EXPECT_NEAR(tr.rate, 128 * 4096 / (over + 8 * 4096 / (bw * tr.efficiency)), 1e-9);
}

TEST(Timing, ManyQueuesSaturateTheSharedDmaResource) {
  // 16 queues x 8 transfers of 128 x 8 KiB: bound by what all transfers share
  // (trn1: the 16 x 17 B/ns engine pool, below the 410 GB/s HBM share).
  std::string text = R"(
tensor %A : bf16[16384, 4096] input
buffer %a : sbuf bf16[128, 4096] bufs=16 addr=0
for %i = 0 to 8 {
)";
  for (int q = 0; q < 16; ++q)
    text += "  alloc %a\n  dma %a <- %A[%i*2048 + " + std::to_string(q * 128) + " : 128, 0:4096] queue=" +
            std::to_string(q) + "\n";
  text += "}\n";
  SimResult r = timed(text);
  const Target &t = trn1Target();
  double bytes = 16384.0 * 4096 * 2;
  DmaTiming one = DmaModel(t).cost({128 * 4096 * 2, 128, 0, false});
  double bound = 128 * one.occupancyNs;
  EXPECT_GE(r.report.latencyNs, bound);
  EXPECT_GE(r.report.latencyNs, bytes / t.hbm_bandwidth_gbs);
  EXPECT_LT(r.report.latencyNs, 1.2 * bound);
}

TEST(Timing, Trn1SharesThePsumPortBetweenVectorAndScalar) {
  // Two independent PSUM evictions, one on VectorE and one on ScalarE.
  const char *text = R"(
tensor %A : bf16[128, 512] input
buffer %a : sbuf bf16[128, 512] bufs=1 addr=0
buffer %x : sbuf f32[128, 512] bufs=1 addr=1024
buffer %y : sbuf f32[128, 512] bufs=1 addr=4096
buffer %p : psum f32[128, 512] bufs=1 addr=0
buffer %q : psum f32[128, 512] bufs=1 addr=2048
dma %a <- %A queue=0
matmul %p <- %a[0:128, 0:128], %a reset
matmul %q <- %a[0:128, 0:128], %a reset
copy %x <- %p
activation.exp %y <- %q
)";
  auto overlap = [](const SimResult &r) {
    const TraceEvent &v = r.timeline[3], &s = r.timeline[4];
    return std::min(v.startNs + v.durNs, s.startNs + s.durNs) - std::max(v.startNs, s.startNs);
  };
  SimResult one = timed(text);
  ASSERT_EQ(one.timeline.size(), 5u);
  EXPECT_LE(overlap(one), 0.0);
  auto t2 = loadTarget("trn2");
  ASSERT_TRUE(bool(t2));
  SimResult two = timed(text, *t2);
  ASSERT_EQ(two.timeline.size(), 5u);
  EXPECT_GT(overlap(two), 0.0);
}

TEST(Timing, BackToBackDependentInstructionsPayTheOverhead) {
  const char *base = R"(
buffer %a : sbuf f32[128, 512] bufs=1 addr=0
buffer %b : sbuf f32[128, 512] bufs=1 addr=2048
buffer %c : sbuf f32[128, 512] bufs=1 addr=4096
memset %a <- 1
memset %c <- 2
tensor_scalar.mul %b <- SRC, 2
)";
  auto prog = [&](const char *src) {
    std::string t = base;
    t.replace(t.find("SRC"), 3, src);
    return t;
  };
  SimResult dep = timed(prog("%c")), indep = timed(prog("%a"));
  const Target &t = trn1Target();
  EXPECT_NEAR(dep.timeline[2].durNs - indep.timeline[2].durNs, t.engine_dependent_overhead_cycles / t.vector_clock_ghz,
              1e-9);
}

TEST(Timing, HotspotsAndTraceCap) {
  Program p = parseOrFail(withBufs("1"));
  SimOptions o;
  o.timingOnly = true;
  llvm::SmallString<128> path;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("trace", "json", path));
  o.tracePath = std::string(path);
  o.traceMaxEvents = 5;
  SimResult r = runOrFail(p, o);
  uint64_t total = 0;
  for (const HotspotReport &h : r.report.hotspots)
    total += h.count;
  EXPECT_EQ(total, r.report.dynamicInstructions); // 3 static instructions, all listed
  ASSERT_EQ(r.report.hotspots.size(), 3u);
  EXPECT_GE(r.report.hotspots[0].busyNs, r.report.hotspots[1].busyNs);
  std::string trace = readFile(std::string(path));
  EXPECT_NE(trace.find("\"dropped_events\":43"), std::string::npos) << trace.substr(0, 300);
  size_t slices = 0;
  for (size_t pos = 0; (pos = trace.find("\"ph\":\"X\"", pos)) != std::string::npos; ++pos)
    ++slices;
  EXPECT_EQ(slices, 5u);
  llvm::sys::fs::remove(path);
}

TEST(Timing, TimingOnlyRunsEveryInstruction) {
  // 100k dynamic instructions; their speed is measured by bench/sim_speed,
  // never by a timed unit test.
  std::string text = R"(
tensor %A : bf16[128, 512] input
tensor %Y : bf16[128, 512] output
buffer %a : sbuf bf16[128, 512] bufs=2 addr=0
buffer %b : sbuf bf16[128, 512] bufs=2 addr=2048
buffer %p : psum f32[128, 512] bufs=2 addr=0
for %i = 0 to 50 {
  alloc %a
  dma %a <- %A queue=0
  for %j = 0 to 1000 {
    alloc %p
    matmul %p <- %a[0:128, 0:128], %a reset
    alloc %b
    copy %b <- %p
  }
  dma %Y <- %b queue=1
}
)";
  Program p = parseOrFail(text);
  SimOptions o;
  o.timingOnly = true;
  SimResult r = runOrFail(p, o);
  EXPECT_EQ(r.report.dynamicInstructions, 100100u);
}

} // namespace

namespace {

// One DMA statement in a loop: with `queues=4` its executions rotate over
// four queues, so four are issued at once; one queue issues them one by one.
TEST(Timing, DmaRotatingOverQueuesOverlapsFixedLatency) {
  const char *text = R"(
tensor %A : bf16[1024, 512] input
buffer %a : sbuf bf16[128, 512] bufs=8 addr=0
for %i = 0 to 8 {
  alloc %a
  dma %a <- %A[%i*128 : 128, 0:512] queue=0QUEUES
}
)";
  std::string one = text, four = text;
  one.replace(one.find("QUEUES"), 6, "");
  four.replace(four.find("QUEUES"), 6, " queues=4");
  SimResult r1 = timed(one), r4 = timed(four);
  const Target &t = trn1Target();
  // One queue issues a transfer every dma_queue_issue_ns; four issue four at once.
  EXPECT_GE(r1.report.latencyNs, 7 * t.dma_queue_issue_ns + t.dma_fixed_latency_ns);
  EXPECT_LT(r4.report.latencyNs, r1.report.latencyNs - 2 * t.dma_queue_issue_ns);
  EXPECT_GE(r4.report.latencyNs, t.dma_queue_issue_ns + t.dma_fixed_latency_ns); // two rounds of four
  EXPECT_GE(r4.report.latencyNs, 8.0 * 128 * 512 * 2 / t.hbm_bandwidth_gbs);
  EXPECT_EQ(r4.report.queues.size(), 4u);
  Program p = parseOrFail(four);
  EXPECT_NE(printProgramToString(p).find("queue=0 queues=4"), std::string::npos);
}

} // namespace

// TensorE throttling after idle gaps (docs/calibration.md, "TensorE
// throttling"): the cost of one instruction given the idle gap before it.
TEST(Timing, TensorThrottleFormula) {
  Target t = trn1Target();
  t.tensor_throttle_rate = 0.5;
  t.tensor_warmup_ns = 1000;
  t.tensor_throttle_idle_ns = 300;
  InstructionCosts c(t);
  double warm = 0; // a kernel starts cold
  EXPECT_NEAR(c.tensorThrottledNs(200, 0, warm), 400, 1e-9); // all of it at half rate
  EXPECT_NEAR(warm, 400, 1e-9);
  // 600 ns of warm-up left does 300 ns of work; the other 100 run at full rate.
  EXPECT_NEAR(c.tensorThrottledNs(400, 100, warm), 700, 1e-9); // a short gap keeps the warm-up
  EXPECT_NEAR(warm, 1000, 1e-9);
  EXPECT_NEAR(c.tensorThrottledNs(200, 0, warm), 200, 1e-9); // warm: full rate
  EXPECT_NEAR(c.tensorThrottledNs(200, 299, warm), 200, 1e-9);
  EXPECT_NEAR(c.tensorThrottledNs(200, 300, warm), 400, 1e-9); // a long gap: cold again
  // Rate 1 (the default targets) changes nothing.
  Target off = trn1Target();
  ASSERT_EQ(off.tensor_throttle_rate, 1.0);
  double w = 0;
  EXPECT_EQ(InstructionCosts(off).tensorThrottledNs(200, 5000, w), 200);
}

// Matmuls each waiting for their own load (an idle gap before each) run
// throttled; the same matmuls on data loaded ahead pay the warm-up once.
const char *kGatedMatmuls = R"(
kernel gated
tensor %A : bf16[128, 128] input
tensor %B : bf16[1024, 512] input
buffer %a : sbuf bf16[128, 128] bufs=1 addr=0
buffer %b : sbuf bf16[128, 512] bufs=1 addr=256
buffer %p : psum f32[128, 512] bufs=1 addr=0
dma %a <- %A queue=0
alloc %p
for %k = 0 to 8 {
  alloc %b
  dma %b <- %B[%k*128 : 128, 0:512] queue=1
  matmul %p <- %a, %b reset_if_first(%k)
}
)";

const char *kMatmulsOnLoadedData = R"(
kernel ahead
tensor %A : bf16[128, 128] input
tensor %B : bf16[1024, 512] input
buffer %a : sbuf bf16[128, 128] bufs=1 addr=0
buffer %b : sbuf bf16[128, 8, 512] bufs=1 addr=256
buffer %p : psum f32[128, 512] bufs=1 addr=0
for %k = 0 to 8 {
  dma %b[0:128, %k, 0:512] <- %B[%k*128 : 128, 0:512] queue=1
}
dma %a <- %A queue=1
alloc %p
for %k = 0 to 8 {
  matmul %p <- %a, %b[0:128, %k, 0:512] reset_if_first(%k)
}
)";

TEST(Timing, TensorThrottlesAfterIdleGaps) {
  Target t = trn1Target();
  const double mm = 512 / t.tensor_clock_ghz; // one 128x128x512 matmul
  SimResult plain = timed(kGatedMatmuls, t);
  EXPECT_NEAR(tensorComputeNs(plain), 8 * mm, 1e-6);
  t.tensor_throttle_rate = 0.5;
  t.tensor_warmup_ns = 4 * mm;
  t.tensor_throttle_idle_ns = 100; // below a load's fixed latency
  SimResult throttled = timed(kGatedMatmuls, t);
  // Every matmul waited for its load (one buffer): each starts cold, at half rate.
  EXPECT_NEAR(tensorComputeNs(throttled), 8 * 2 * mm, 1e-6);
  EXPECT_GT(throttled.report.latencyNs, plain.report.latencyNs + 8 * mm - 1e-6);
  // Back to back after the loads (the stationary one comes last on their
  // queue): 4 * mm of warm-up does 2 * mm of work,
  // the other 6 matmuls run at full rate.
  SimResult ahead = timed(kMatmulsOnLoadedData, t);
  EXPECT_NEAR(tensorComputeNs(ahead), 4 * mm + 6 * mm, 1e-6);
}

namespace {

// A matmul whose moving tile arrives after its stationary one counts as
// TensorE busy from the stationary's arrival (the profile's active time,
// docs/calibration.md "TensorE busy"); it starts computing once the last
// operand is in. The shorter the gap between the arrivals, the less is
// counted.
TEST(Timing, TensorBusyCountsTheWaitBetweenOperands) {
  const char *text = R"(
tensor %S : bf16[128, 128] input
tensor %V : bf16[128, FV] input
tensor %Y : f32[128, 512] output
buffer %s : sbuf bf16[128, 128] bufs=1 addr=0
buffer %v : sbuf bf16[128, FV] bufs=1 addr=1024
buffer %p : psum f32[128, 512] bufs=1 addr=0
dma %s <- %S queue=0
dma %v <- %V queue=1
matmul %p[0:128, 0:512] <- %s[0:128, 0:128], %v[0:128, 0:512] reset
)";
  auto with = [&](const char *fv) {
    std::string s = text;
    for (size_t at; (at = s.find("FV")) != std::string::npos;)
      s.replace(at, 2, fv);
    return timed(s);
  };
  SimResult late = with("8192"), together = with("512"); // 2 MiB or 128 KiB behind 32 KiB
  auto endOf = [](const SimResult &r, size_t i) { return r.timeline[i].startNs + r.timeline[i].durNs; };
  ASSERT_EQ(late.timeline.size(), 3u);
  ASSERT_EQ(together.timeline.size(), 3u);
  double compute = late.timeline[2].durNs;
  double wait = endOf(late, 1) - endOf(late, 0);
  ASSERT_GT(wait, 1000.0);
  EXPECT_NEAR(late.report.engines[0].busyNs, compute + wait, 1e-6);
  EXPECT_DOUBLE_EQ(late.timeline[2].startNs, endOf(late, 1));
  double togetherWait = std::abs(endOf(together, 1) - endOf(together, 0));
  EXPECT_NEAR(together.report.engines[0].busyNs, together.timeline[2].durNs + togetherWait, 1e-6);
  EXPECT_LT(together.report.engines[0].busyNs, late.report.engines[0].busyNs - 1000.0);
}

} // namespace

namespace {

// A queue issues its next transfer before the last one ends, so a transfer
// that depends on an earlier one on the same queue (a store of the tile a
// load fills) still waits for it.
TEST(Timing, DependentDmaOnTheSameQueueWaits) {
  const char *text = R"(
tensor %A : bf16[128, 4096] input
tensor %B : bf16[128, 4096] output
buffer %a : sbuf bf16[128, 4096] bufs=1 addr=0
dma %a <- %A queue=0
dma %B <- %a queue=QB
)";
  for (const char *q : {"0", "1"}) {
    SimResult r = timed(withQueue(text, q));
    ASSERT_EQ(r.timeline.size(), 2u) << q;
    const TraceEvent &load = r.timeline[0], &store = r.timeline[1];
    EXPECT_GE(store.startNs, load.startNs + load.durNs - 1e-9) << "store on queue " << q;
  }
}

} // namespace

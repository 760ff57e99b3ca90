//===- tests/unit/runtime/VectorOpsTest.cpp - reductions, per-partition operands, masks --===//
//
// The ops of docs/ops.md "Reductions, per-partition operands and masks",
// each against a plain reference computed here, and their timing against
// the target's engine formula (docs/hardware.md §4.2).
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

#include <array>
#include <cmath>

using namespace tessel::runtime;
using namespace tessel::runtime::test;

namespace {

/// Values of a [P, F] input: distinct, both signs, not all integers.
std::vector<float> ramp(int64_t P, int64_t F) {
  std::vector<float> v(size_t(P * F));
  for (int64_t p = 0; p < P; ++p)
    for (int64_t f = 0; f < F; ++f)
      v[size_t(p * F + f)] = float(((p * 7 + f * 13) % 23) - 11) * 0.25f;
  return v;
}

SimResult run(const std::string &text, std::map<std::string, std::vector<float>> inputs) {
  Program p = parseOrFail(text);
  SimOptions o;
  o.inputData = std::move(inputs);
  return runOrFail(p, o);
}

TEST(VectorOps, TensorReduceAddMaxMinAlongTheFreeDimension) {
  const int64_t P = 3, F = 5;
  const std::string text = R"(
kernel reduce
tensor %A : f32[3, 5] input
tensor %S : f32[3, 1] output
tensor %X : f32[3, 1] output
tensor %N : f32[3, 1] output
buffer %a : sbuf f32[3, 5] bufs=1 addr=0
buffer %s : sbuf f32[3, 1] bufs=1 addr=32
buffer %x : sbuf f32[3, 1] bufs=1 addr=64
buffer %n : sbuf f32[3, 1] bufs=1 addr=96
dma %a <- %A queue=0
tensor_reduce.add %s[0:3, 0:1] <- %a[0:3, 0:5]
tensor_reduce.max %x[0:3, 0:1] <- %a[0:3, 0:5] engine=gpsimd
tensor_reduce.min %n[0:3, 0:1] <- %a[0:3, 0:5]
dma %S <- %s queue=0
dma %X <- %x queue=0
dma %N <- %n queue=0
)";
  std::vector<float> A = ramp(P, F);
  SimResult r = run(text, {{"A", A}});
  ASSERT_TRUE(r.output("S") && r.output("X") && r.output("N"));
  for (int64_t p = 0; p < P; ++p) {
    double sum = 0, mx = -1e30, mn = 1e30;
    for (int64_t f = 0; f < F; ++f) {
      double v = A[size_t(p * F + f)];
      sum += v, mx = std::max(mx, v), mn = std::min(mn, v);
    }
    EXPECT_FLOAT_EQ(r.output("S")->data[size_t(p)], float(sum)) << p;
    EXPECT_EQ(r.output("X")->data[size_t(p)], float(mx)) << p;
    EXPECT_EQ(r.output("N")->data[size_t(p)], float(mn)) << p;
  }
}

TEST(VectorOps, TensorScalarWithAPerPartitionTileAndReverse) {
  const int64_t P = 4, F = 3;
  const std::string text = R"(
kernel ts
tensor %A : f32[4, 3] input
tensor %C : f32[4, 1] input
tensor %D : f32[4, 3] output
tensor %Q : f32[4, 3] output
buffer %a : sbuf f32[4, 3] bufs=1 addr=0
buffer %c : sbuf f32[4, 1] bufs=1 addr=16
buffer %d : sbuf f32[4, 3] bufs=1 addr=32
buffer %q : sbuf f32[4, 3] bufs=1 addr=48
dma %a <- %A queue=0
dma %c <- %C queue=1
tensor_scalar.sub %d <- %a, %c[0:4, 0:1]
tensor_scalar.divide %q <- %a, 3 reverse
dma %D <- %d queue=0
dma %Q <- %q queue=0
)";
  std::vector<float> A = ramp(P, F), C = {1.5f, -2.0f, 0.25f, 4.0f};
  for (float &x : A)
    if (x == 0)
      x = 0.5f; // 3 / x below
  SimResult r = run(text, {{"A", A}, {"C", C}});
  ASSERT_TRUE(r.output("D") && r.output("Q"));
  for (int64_t p = 0; p < P; ++p)
    for (int64_t f = 0; f < F; ++f) {
      size_t i = size_t(p * F + f);
      EXPECT_EQ(r.output("D")->data[i], A[i] - C[size_t(p)]) << i;
      EXPECT_FLOAT_EQ(r.output("Q")->data[i], 3.0f / A[i]) << i;
    }
}

TEST(VectorOps, ActivationWithBiasAndScaleTilesAndAnAccumulator) {
  // exp(x * s[p] + b[p]) and its row sums in one instruction (fused softmax).
  const int64_t P = 2, F = 4;
  const std::string text = R"(
kernel act
tensor %A : f32[2, 4] input
tensor %B : f32[2, 1] input
tensor %S : f32[2, 1] input
tensor %E : bf16[2, 4] output
tensor %Z : f32[2, 1] output
buffer %a : sbuf f32[2, 4] bufs=1 addr=0
buffer %b : sbuf f32[2, 1] bufs=1 addr=16
buffer %s : sbuf f32[2, 1] bufs=1 addr=20
buffer %e : sbuf bf16[2, 4] bufs=1 addr=24
buffer %z : sbuf f32[2, 1] bufs=1 addr=32
dma %a <- %A queue=0
dma %b <- %B queue=1
dma %s <- %S queue=2
activation.exp %e <- %a scale=%s[0:2, 0:1] bias=%b[0:2, 0:1] accumulate=%z[0:2, 0:1]
dma %E <- %e queue=0
dma %Z <- %z queue=0
)";
  std::vector<float> A = ramp(P, F), B = {-1.0f, 0.5f}, S = {0.5f, 2.0f};
  SimResult r = run(text, {{"A", A}, {"B", B}, {"S", S}});
  ASSERT_TRUE(r.output("E") && r.output("Z"));
  for (int64_t p = 0; p < P; ++p) {
    double sum = 0;
    for (int64_t f = 0; f < F; ++f) {
      size_t i = size_t(p * F + f);
      double e = std::exp(double(A[i]) * S[size_t(p)] + B[size_t(p)]);
      sum += e;
      EXPECT_EQ(r.output("E")->data[i], roundToBF16(float(e))) << i; // fp32 math, bf16 store
    }
    // The sum is of the fp32 results, before the bf16 store.
    EXPECT_NEAR(r.output("Z")->data[size_t(p)], sum, 1e-5 * sum) << p;
  }
}

TEST(VectorOps, ElementwiseFunctionsAndComparisons) {
  const std::string text = R"(
kernel elem
tensor %A : f32[1, 4] input
tensor %B : f32[1, 4] input
tensor %R : f32[1, 4] output
tensor %G : f32[1, 4] output
tensor %W : f32[1, 4] output
buffer %a : sbuf f32[1, 4] bufs=1 addr=0
buffer %b : sbuf f32[1, 4] bufs=1 addr=16
buffer %r : sbuf f32[1, 4] bufs=1 addr=32
buffer %g : sbuf f32[1, 4] bufs=1 addr=48
buffer %w : sbuf f32[1, 4] bufs=1 addr=64
dma %a <- %A queue=0
dma %b <- %B queue=0
activation.rsqrt %r <- %a
tensor_tensor.is_ge %g <- %a, %b
tensor_tensor.pow %w <- %a, %b engine=gpsimd
dma %R <- %r queue=0
dma %G <- %g queue=0
dma %W <- %w queue=0
)";
  std::vector<float> A = {4, 0.25f, 9, 1}, B = {2, 0.5f, 10, 1};
  SimResult r = run(text, {{"A", A}, {"B", B}});
  ASSERT_TRUE(r.output("R") && r.output("G") && r.output("W"));
  EXPECT_EQ(r.output("R")->data, (std::vector<float>{0.5f, 2.0f, 1.0f / 3.0f, 1.0f}));
  EXPECT_EQ(r.output("G")->data, (std::vector<float>{1, 0, 0, 1}));
  EXPECT_EQ(r.output("W")->data, (std::vector<float>{16, 0.5f, 3486784401.0f, 1}));
}

TEST(VectorOps, IotaAndACausalMaskFromIndices) {
  // Rows q0 + p against columns k0 + f: keep where q >= k, else -inf --
  // the causal mask of one 4 x 6 score tile at q0 = 8 + 4 * %i, k0 = 10.
  const std::string text = R"(
kernel mask
tensor %A : f32[8, 6] input
tensor %I : f32[8, 6] output
tensor %M : f32[8, 6] output
buffer %a : sbuf f32[4, 6] bufs=1 addr=0
buffer %n : sbuf f32[4, 6] bufs=1 addr=32
buffer %m : sbuf f32[4, 6] bufs=1 addr=64
for %i = 0 to 2 {
  dma %a <- %A[%i*4 : 4, 0:6] queue=0
  iota %n <- offset=%i*4 + 8 partition=1 free=-1
  affine_select.is_ge %m <- %a offset=%i*4 - 2 partition=1 free=-1 fill=-inf
  dma %I[%i*4 : 4, 0:6] <- %n queue=0
  dma %M[%i*4 : 4, 0:6] <- %m queue=0
}
)";
  std::vector<float> A = ramp(8, 6);
  SimResult r = run(text, {{"A", A}});
  ASSERT_TRUE(r.output("I") && r.output("M"));
  for (int64_t row = 0; row < 8; ++row)
    for (int64_t f = 0; f < 6; ++f) {
      size_t i = size_t(row * 6 + f);
      int64_t q = 8 + row, k = 10 + f;
      EXPECT_EQ(r.output("I")->data[i], float(8 + row - f)) << i;
      EXPECT_EQ(r.output("M")->data[i], q >= k ? A[i] : -INFINITY) << i;
    }
}

/// The busy time of the instruction on `line` (its first execution).
double busyAt(const std::string &text, unsigned line) {
  Program p = parseOrFail(text);
  SimOptions o;
  o.timingOnly = true;
  o.recordTimeline = true;
  SimResult r = runOrFail(p, o);
  for (const TraceEvent &e : r.timeline)
    if (p.instrs[e.instr].loc.line == line)
      return e.durNs;
  ADD_FAILURE() << "no instruction on line " << line;
  return 0;
}

/// A program whose line 7 is `op` on tiles of F elements per partition, none
/// of its operands written by its engine's previous instruction.
std::string oneOp(int64_t F, const std::string &dtype, const std::string &op) {
  std::string f = std::to_string(F);
  return "buffer %a : sbuf " + dtype + "[128, " + f + "] bufs=1 addr=0\n" +
         "buffer %b : sbuf " + dtype + "[128, " + f + "] bufs=1 addr=" + std::to_string(F * 4) + "\n" +
         "buffer %r : sbuf " + dtype + "[128, 1] bufs=1 addr=" + std::to_string(F * 8) + "\n" +
         "memset %a <- 1\n" + "memset %b <- 0\n" + "memset %r <- 1 engine=gpsimd\n" + op + "\n";
}

TEST(VectorOps, TimingFollowsTheEngineFormulasAndScalesWithF) {
  const Target &t = trn1Target();
  const double base = t.engine_access_overhead_cycles;
  for (int64_t F : {1024, 4096}) {
    const double n = double(F);
    // tensor_reduce: N cycles in f32, N / 2 in bf16 with add or max (VectorE).
    EXPECT_NEAR(busyAt(oneOp(F, "f32", "tensor_reduce.add %r <- %a"), 7), (base + n) / t.vector_clock_ghz, 1e-6);
    EXPECT_NEAR(busyAt(oneOp(F, "bf16", "tensor_reduce.max %r <- %a"), 7), (base + n / 2) / t.vector_clock_ghz,
                1e-6);
    EXPECT_NEAR(busyAt(oneOp(F, "bf16", "tensor_reduce.min %r <- %a"), 7), (base + n) / t.vector_clock_ghz, 1e-6);
    // tensor_scalar with a tile operand costs what it does with an immediate.
    EXPECT_NEAR(busyAt(oneOp(F, "f32", "tensor_scalar.mul %b <- %a, %r"), 7),
                busyAt(oneOp(F, "f32", "tensor_scalar.mul %b <- %a, 2"), 7), 1e-9);
    // activation: N cycles; with an accumulator one MIN_II more (ScalarE).
    EXPECT_NEAR(busyAt(oneOp(F, "f32", "activation.exp %b <- %a bias=%r"), 7), (base + n) / t.scalar_clock_ghz, 1e-6);
    EXPECT_NEAR(busyAt(oneOp(F, "f32", "activation.exp %b <- %a accumulate=%r"), 7),
                (base + n + t.engine_min_ii_cycles) / t.scalar_clock_ghz, 1e-6);
    // iota, affine_select: GPSIMD_START + N (GpSimdE).
    EXPECT_NEAR(busyAt(oneOp(F, "f32", "iota %b <- offset=0 partition=1 free=1"), 7),
                (base + t.gpsimd_start_cycles + n) / t.gpsimd_clock_ghz, 1e-6);
    EXPECT_NEAR(busyAt(oneOp(F, "f32", "affine_select.is_ge %b <- %a offset=0 partition=1 free=-1 fill=0"), 7),
                (base + t.gpsimd_start_cycles + n) / t.gpsimd_clock_ghz, 1e-6);
  }
}

TEST(VectorOps, TheAccumulatorIsAWriteOthersWaitFor) {
  // The reduce reads the accumulator the activation writes: it starts
  // after the activation ends, on another engine.
  const std::string text = R"(
buffer %a : sbuf f32[128, 2048] bufs=1 addr=0
buffer %b : sbuf f32[128, 2048] bufs=1 addr=8192
buffer %z : sbuf f32[128, 1] bufs=1 addr=16384
buffer %y : sbuf f32[128, 1] bufs=1 addr=16388
memset %a <- 1
activation.exp %b <- %a accumulate=%z
tensor_reduce.add %y <- %z
)";
  Program p = parseOrFail(text);
  SimOptions o;
  o.timingOnly = true;
  o.recordTimeline = true;
  SimResult r = runOrFail(p, o);
  ASSERT_EQ(r.timeline.size(), 3u);
  EXPECT_GE(r.timeline[2].startNs, r.timeline[1].startNs + r.timeline[1].durNs - 1e-9);
}

TEST(VectorOps, RunTimeShapeErrors) {
  auto error = [](const std::string &op) {
    return runError(parseOrFail("buffer %a : sbuf f32[128, 64] bufs=1 addr=0\n"
                                "buffer %r : sbuf f32[128, 3] bufs=1 addr=256\n"
                                "memset %a <- 1\nmemset %r <- 1\n" +
                                op + "\n"));
  };
  // 3 does not divide 64: no runs of the source's elements make the destination.
  EXPECT_NE(error("tensor_reduce.add %r <- %a").find("tensor_reduce folds a [128, 64] tile into [128, 1] or runs of "
                                                      "its elements, but the destination is [128, 3]"),
            std::string::npos);
  EXPECT_NE(error("tensor_scalar.mul %a <- %a, %r[0:64, 0:1]")
                .find("a per-partition operand must be [128, 1] (one value per partition of the destination "
                      "[128, 64]), but %r gives [64, 1]"),
            std::string::npos);
  EXPECT_NE(parseError("buffer %a : sbuf f32[128, 64] bufs=1 addr=0\nbuffer %r : sbuf f32[128, 1] bufs=1 addr=256\n"
                       "tensor_reduce.mul %r <- %a\n")
                .find("`tensor_reduce` folds with add, max or min, not mul"),
            std::string::npos);
  EXPECT_NE(parseError("buffer %a : sbuf f32[128, 64] bufs=1 addr=0\n"
                       "iota %a <- offset=0 partition=1 free=1 engine=vector\n")
                .find("`iota` cannot run on the vector engine"),
            std::string::npos);
  EXPECT_NE(parseError("buffer %a : sbuf f32[128, 64] bufs=1 addr=0\niota %a <- offset=0 partition=1\n")
                .find("`iota` needs offset=, partition= and free="),
            std::string::npos);
}

} // namespace

TEST(VectorOps, TensorTensorScanCarriesTheRecurrenceAlongTheFreeDimension) {
  // r[f] = a[f] * r[f - 1] + b[f] (mamba's scan), from a number and from a
  // [P, 1] tile; then r[f] = max(a[f] - r[f - 1], b[f]) (other ops, in order).
  const int64_t P = 3, F = 6;
  const std::string text = R"(
kernel scan
tensor %A : f32[3, 6] input
tensor %B : f32[3, 6] input
tensor %I : f32[3, 1] input
tensor %R : f32[3, 6] output
tensor %T : f32[3, 6] output
tensor %M : f32[3, 6] output
buffer %a : sbuf f32[3, 6] bufs=1 addr=0
buffer %b : sbuf f32[3, 6] bufs=1 addr=32
buffer %i : sbuf f32[3, 1] bufs=1 addr=64
buffer %r : sbuf f32[3, 6] bufs=1 addr=96
buffer %t : sbuf f32[3, 6] bufs=1 addr=128
buffer %m : sbuf f32[3, 6] bufs=1 addr=160
dma %a <- %A queue=0
dma %b <- %B queue=1
dma %i <- %I queue=2
tensor_tensor_scan.mul.add %r[0:3, 0:6] <- %a[0:3, 0:6], %b[0:3, 0:6], 0.5
tensor_tensor_scan.mul.add %t[0:3, 0:6] <- %a[0:3, 0:6], %b[0:3, 0:6], %i[0:3, 0:1]
tensor_tensor_scan.sub.max %m[0:3, 0:6] <- %a[0:3, 0:6], %b[0:3, 0:6], -1
dma %R <- %r queue=0
dma %T <- %t queue=1
dma %M <- %m queue=2
)";
  std::vector<float> A = ramp(P, F), B = ramp(P, F), I = {2.0f, -1.0f, 0.25f};
  for (float &b : B)
    b = 0.5f - b;
  SimResult r = run(text, {{"A", A}, {"B", B}, {"I", I}});
  ASSERT_TRUE(r.output("R") && r.output("T") && r.output("M"));
  for (int64_t p = 0; p < P; ++p) {
    float x = 0.5f, y = I[size_t(p)], z = -1.0f;
    for (int64_t f = 0; f < F; ++f) {
      size_t i = size_t(p * F + f);
      x = A[i] * x + B[i];
      y = A[i] * y + B[i];
      z = std::max(A[i] - z, B[i]);
      EXPECT_FLOAT_EQ(r.output("R")->data[i], x) << i;
      EXPECT_FLOAT_EQ(r.output("T")->data[i], y) << i;
      EXPECT_FLOAT_EQ(r.output("M")->data[i], z) << i;
    }
  }
}

TEST(VectorOps, BnStatsAndBnAggrGiveTheMeanAndVarianceOfARow) {
  // Two bn_stats of 7 and 5 elements into one [P, 12] tile; bn_aggr of it is
  // the mean and (population) variance of the 12; of the first six values,
  // of the first 7.
  const int64_t P = 2, F = 12;
  const std::string text = R"(
kernel bn
tensor %A : f32[2, 12] input
tensor %S : f32[2, 12] output
tensor %G : f32[2, 2] output
tensor %H : f32[2, 2] output
buffer %a : sbuf f32[2, 12] bufs=1 addr=0
buffer %s : sbuf f32[2, 12] bufs=1 addr=64
buffer %g : sbuf f32[2, 2] bufs=1 addr=128
buffer %h : sbuf f32[2, 2] bufs=1 addr=160
dma %a <- %A queue=0
bn_stats %s[0:2, 0:6] <- %a[0:2, 0:7]
bn_stats %s[0:2, 6:6] <- %a[0:2, 7:5]
bn_aggr %g[0:2, 0:2] <- %s[0:2, 0:12]
bn_aggr %h[0:2, 0:2] <- %s[0:2, 0:6]
dma %S <- %s queue=0
dma %G <- %g queue=1
dma %H <- %h queue=2
)";
  std::vector<float> A = ramp(P, F);
  SimResult r = run(text, {{"A", A}});
  ASSERT_TRUE(r.output("S") && r.output("G") && r.output("H"));
  auto stats = [&](int64_t p, int64_t lo, int64_t hi, int64_t step) {
    double n = 0, sum = 0, m2 = 0;
    for (int64_t f = lo; f < hi; f += step)
      n += 1, sum += A[size_t(p * F + f)];
    for (int64_t f = lo; f < hi; f += step)
      m2 += std::pow(A[size_t(p * F + f)] - sum / n, 2);
    return std::array<double, 3>{n, sum / n, m2};
  };
  for (int64_t p = 0; p < P; ++p) {
    const float *s = r.output("S")->data.data() + p * F;
    const std::array<double, 3> parts[] = {stats(p, 0, 7, 2), stats(p, 1, 7, 2), stats(p, 7, 12, 2),
                                           stats(p, 8, 12, 2)};
    for (unsigned k = 0; k < 4; ++k)
      for (unsigned j = 0; j < 3; ++j)
        EXPECT_NEAR(s[k * 3 + j], parts[k][j], 1e-5) << p << " " << k << " " << j;
    const std::array<double, 3> all = stats(p, 0, 12, 1), first = stats(p, 0, 7, 1);
    EXPECT_NEAR(r.output("G")->data[size_t(p * 2)], all[1], 1e-5) << p;
    EXPECT_NEAR(r.output("G")->data[size_t(p * 2 + 1)], all[2] / 12, 1e-5) << p;
    EXPECT_NEAR(r.output("H")->data[size_t(p * 2)], first[1], 1e-5) << p;
    EXPECT_NEAR(r.output("H")->data[size_t(p * 2 + 1)], first[2] / 7, 1e-5) << p;
  }
}

TEST(VectorOps, ScanAndBatchNormTimingFollowTheirFormulas) {
  const Target &t = trn1Target();
  const double base = t.engine_access_overhead_cycles;
  for (int64_t F : {1024, 4096}) {
    const double n = double(F);
    // tensor_tensor_scan: 2N; bn_stats: N of its source; bn_aggr: 13 N / 3 of its source.
    EXPECT_NEAR(busyAt(oneOp(F, "f32", "tensor_tensor_scan.mul.add %b <- %a, %a, 0"), 7),
                (base + 2 * n) / t.vector_clock_ghz, 1e-6);
    EXPECT_NEAR(busyAt(oneOp(F, "f32", "bn_stats %b[0:128, 0:6] <- %a"), 7), (base + n) / t.vector_clock_ghz, 1e-6);
    const std::string triples = "%a[0:128, 0:" + std::to_string(F / 3 * 3) + "]";
    EXPECT_NEAR(busyAt(oneOp(F, "f32", "bn_aggr %b[0:128, 0:2] <- " + triples), 7),
                (base + 13.0 * double(F / 3 * 3) / 3) / t.vector_clock_ghz, 1e-6);
  }
}

TEST(VectorOps, TensorPartitionReduceFoldsThePartitionsColumnByColumn) {
  const int64_t P = 5, F = 4;
  const std::string text = R"(
kernel pr
tensor %A : f32[5, 4] input
tensor %S : f32[1, 4] output
tensor %X : f32[1, 4] output
buffer %a : sbuf f32[5, 4] bufs=1 addr=0
buffer %s : sbuf f32[1, 4] bufs=1 addr=32
buffer %x : sbuf f32[1, 4] bufs=1 addr=64
dma %a <- %A queue=0
tensor_partition_reduce.add %s[0:1, 0:4] <- %a[0:5, 0:4]
tensor_partition_reduce.max %x[0:1, 0:4] <- %a[0:5, 0:4]
dma %S <- %s queue=0
dma %X <- %x queue=1
)";
  std::vector<float> A = ramp(P, F);
  SimResult r = run(text, {{"A", A}});
  ASSERT_TRUE(r.output("S") && r.output("X"));
  for (int64_t f = 0; f < F; ++f) {
    float sum = 0.0f, mx = -1e30f;
    for (int64_t p = 0; p < P; ++p)
      sum += A[size_t(p * F + f)], mx = std::max(mx, A[size_t(p * F + f)]);
    EXPECT_FLOAT_EQ(r.output("S")->data[size_t(f)], sum) << f;
    EXPECT_EQ(r.output("X")->data[size_t(f)], mx) << f;
  }
  // One pass over the columns on GpSimdE [ASSUMED: no published cost].
  const Target &t = trn1Target();
  EXPECT_NEAR(busyAt(oneOp(2048, "f32", "tensor_partition_reduce.add %r[0:1, 0:1] <- %a[0:128, 0:1]"), 7),
              (t.engine_access_overhead_cycles + std::max(t.engine_min_ii_cycles, 1.0 / t.gpsimd_elems_per_cycle)) /
                  t.gpsimd_clock_ghz,
              1e-6);
}

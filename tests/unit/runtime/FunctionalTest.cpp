//===- tests/unit/runtime/FunctionalTest.cpp - numerics of the simulator --===//
#include "TestUtil.h"

#include "runtime/Npy.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cmath>

using namespace tessel::runtime;
using namespace tessel::runtime::test;

namespace {

const char *kXUV = R"(
kernel xuv_small
target trn1
tensor %X : bf16[200, 256] input
tensor %U : bf16[256, 128] input
tensor %V : bf16[128, 512] input
tensor %Y : f32[200, 512] output
buffer %u : sbuf bf16[128, 2, 128] bufs=1 addr=0
buffer %v : sbuf bf16[128, 512] bufs=1 addr=512
buffer %xt : sbuf bf16[128, 2, 128] bufs=2 addr=1536
buffer %tt : sbuf bf16[128, 128] bufs=1 addr=2560
buffer %y : sbuf f32[128, 512] bufs=2 addr=2816
buffer %p1 : psum f32[128, 128] bufs=1 addr=0
buffer %p2 : psum f32[128, 512] bufs=2 addr=2048
dma %u[0:128, 0, 0:128] <- %U[0:128, 0:128] queue=0
dma %u[0:128, 1, 0:128] <- %U[128:128, 0:128] queue=1
dma %v[0:128, 0:512] <- %V[0:128, 0:512] queue=2
for %m = 0 to 2 {
  alloc %xt
  for %k = 0 to 2 {
    dma %xt[0:128, %k, 0 : min(128, 200 - %m*128)] <- %X[%m*128 : min(128, 200 - %m*128), %k*128 : 128] queue=3 transpose
  }
  for %k = 0 to 2 {
    matmul %p1[0:128, 0 : min(128, 200 - %m*128)] <- %u[0:128, %k, 0:128], %xt[0:128, %k, 0 : min(128, 200 - %m*128)] reset_if_first(%k)
  }
  copy %tt[0:128, 0 : min(128, 200 - %m*128)] <- %p1[0:128, 0 : min(128, 200 - %m*128)]
  alloc %p2
  matmul %p2[0 : min(128, 200 - %m*128), 0:512] <- %tt[0:128, 0 : min(128, 200 - %m*128)], %v[0:128, 0:512] reset
  alloc %y
  activation.copy %y[0 : min(128, 200 - %m*128), 0:512] <- %p2[0 : min(128, 200 - %m*128), 0:512]
  dma %Y[%m*128 : min(128, 200 - %m*128), 0:512] <- %y[0 : min(128, 200 - %m*128), 0:512] queue=4
}
)";

TEST(Functional, XUVChainWithPartialTileMatchesReference) {
  Program p = parseOrFail(kXUV);
  SimOptions o;
  o.seed = 3;
  SimResult r = runOrFail(p, o);
  const TensorData *X = r.input("X"), *U = r.input("U"), *V = r.input("V"), *Y = r.output("Y");
  ASSERT_TRUE(X && U && V && Y);
  // Reference: T = bf16(X @ U) (the strip is stored as bf16), Y = T @ V.
  std::vector<float> T = matmulRef(X->data, U->data, 200, 256, 128);
  for (float &t : T)
    t = roundToBF16(t);
  std::vector<float> ref = matmulRef(T, V->data, 200, 128, 512);
  double maxErr = 0, maxRef = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    maxErr = std::max(maxErr, double(std::fabs(ref[i] - Y->data[i])));
    maxRef = std::max(maxRef, double(std::fabs(ref[i])));
  }
  EXPECT_GT(maxRef, 0.1);
  // fp32 accumulation in a different order; T rounding may flip at ties.
  EXPECT_LT(maxErr, 2e-2 * maxRef);
  EXPECT_EQ(r.report.flops, 39321600u);
  EXPECT_TRUE(r.report.warnings.empty());
}

TEST(Functional, InputsAreBf16RoundedAndDeterministic) {
  Program p = parseOrFail(kXUV);
  SimOptions o;
  o.seed = 11;
  SimResult a = runOrFail(p, o), b = runOrFail(p, o);
  o.seed = 12;
  SimResult c = runOrFail(p, o);
  ASSERT_TRUE(a.input("X") && b.input("X") && c.input("X"));
  EXPECT_EQ(a.input("X")->data, b.input("X")->data);
  EXPECT_NE(a.input("X")->data, c.input("X")->data);
  for (float x : a.input("X")->data) {
    ASSERT_EQ(x, roundToBF16(x));
    ASSERT_LE(std::fabs(x), std::sqrt(3.0 / 200) * (1 + 1.0 / 128)); // bf16 rounding may step past s
  }
  EXPECT_EQ(a.output("Y")->data, b.output("Y")->data);
}

TEST(Functional, MatmulAccumulatesOverK) {
  // out[M=2, N=3] = S[K=4, M=2]^T @ Mv[K=4, N=3], computed as two K=2 halves.
  Program p = parseOrFail(R"(
kernel acc
tensor %S : f32[4, 2] input
tensor %M : f32[4, 3] input
tensor %O : f32[2, 3] output
buffer %s : sbuf f32[2, 2, 2] bufs=1 addr=0
buffer %m : sbuf f32[2, 2, 3] bufs=1 addr=64
buffer %p : psum f32[2, 3] bufs=1 addr=0
buffer %o : sbuf f32[2, 3] bufs=1 addr=128
for %k = 0 to 2 {
  dma %s[0:2, %k, 0:2] <- %S[%k*2 : 2, 0:2] queue=0
  dma %m[0:2, %k, 0:3] <- %M[%k*2 : 2, 0:3] queue=1
}
for %k = 0 to 2 {
  matmul %p[0:2, 0:3] <- %s[0:2, %k, 0:2], %m[0:2, %k, 0:3] reset_if_first(%k)
}
copy %o[0:2, 0:3] <- %p[0:2, 0:3]
dma %O[0:2, 0:3] <- %o[0:2, 0:3] queue=2
)");
  SimOptions o;
  o.inputData["S"] = {1, 2, 3, 4, 5, 6, 7, 8};
  o.inputData["M"] = {1, 0, 2, 0, 1, 0, 3, 1, 1, 0, 0, 4};
  SimResult r = runOrFail(p, o);
  // S^T = [[1,3,5,7],[2,4,6,8]]; M rows: [1,0,2],[0,1,0],[3,1,1],[0,0,4]
  // row0: 1*[1,0,2] + 3*[0,1,0] + 5*[3,1,1] + 7*[0,0,4] = [16, 8, 35]
  // row1: 2*[1,0,2] + 4*[0,1,0] + 6*[3,1,1] + 8*[0,0,4] = [20, 10, 42]
  ASSERT_TRUE(r.output("O"));
  EXPECT_EQ(r.output("O")->data, (std::vector<float>{16, 8, 35, 20, 10, 42}));
  EXPECT_EQ(r.report.flops, uint64_t(2 * 2 * 2 * 3 * 2));
}

TEST(Functional, TransposeActivationAndVectorOps) {
  Program p = parseOrFail(R"(
kernel ops
tensor %A : f32[2, 3] input
tensor %T : f32[3, 2] output
tensor %G : f32[2, 3] output
buffer %a : sbuf f32[2, 3] bufs=1 addr=0
buffer %b : sbuf f32[2, 3] bufs=1 addr=16
buffer %c : sbuf f32[3, 2] bufs=1 addr=32
buffer %pt : psum f32[3, 2] bufs=1 addr=0
dma %a <- %A queue=0
transpose %pt[0:3, 0:2] <- %a[0:2, 0:3]
copy %c[0:3, 0:2] <- %pt[0:3, 0:2]
dma %T <- %c queue=1
activation.silu %b[0:2, 0:3] <- %a[0:2, 0:3] scale=2 bias=1
tensor_tensor.mul %b[0:2, 0:3] <- %b[0:2, 0:3], %a[0:2, 0:3]
tensor_scalar.add %b[0:2, 0:3] <- %b[0:2, 0:3], 0.5
dma %G <- %b queue=1
)");
  SimOptions o;
  std::vector<float> A = {-2, -1, 0, 0.5, 1, 3};
  o.inputData["A"] = A;
  SimResult r = runOrFail(p, o);
  ASSERT_TRUE(r.output("T") && r.output("G"));
  EXPECT_EQ(r.output("T")->data, (std::vector<float>{-2, 0.5, -1, 1, 0, 3}));
  for (size_t i = 0; i < A.size(); ++i) {
    double x = 2.0 * A[i] + 1.0;
    double silu = x / (1.0 + std::exp(-x));
    EXPECT_NEAR(r.output("G")->data[i], silu * A[i] + 0.5, 1e-5) << i;
  }
  EXPECT_EQ(r.report.transposeFlops, uint64_t(2 * 2 * 2 * 3));
  EXPECT_EQ(r.report.flops, 0u);
}

TEST(Functional, ActivationFunctions) {
  Program p = parseOrFail(R"(
kernel acts
tensor %A : f32[1, 5] input
tensor %G : f32[1, 5] output
tensor %R : f32[1, 5] output
tensor %E : f32[1, 5] output
buffer %a : sbuf f32[1, 5] bufs=1 addr=0
buffer %g : sbuf f32[1, 5] bufs=1 addr=32
buffer %r : sbuf f32[1, 5] bufs=1 addr=64
buffer %e : sbuf f32[1, 5] bufs=1 addr=96
dma %a <- %A queue=0
activation.gelu %g <- %a
activation.relu %r <- %a
activation.exp %e <- %a
dma %G <- %g queue=0
dma %R <- %r queue=0
dma %E <- %e queue=0
)");
  SimOptions o;
  std::vector<float> A = {-3, -0.5, 0, 0.7, 2};
  o.inputData["A"] = A;
  SimResult r = runOrFail(p, o);
  for (size_t i = 0; i < A.size(); ++i) {
    double x = A[i];
    double gelu = 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); // exact form, not the tanh one
    EXPECT_NEAR(r.output("G")->data[i], gelu, 1e-6);
    EXPECT_EQ(r.output("R")->data[i], x > 0 ? float(x) : 0.0f);
    EXPECT_NEAR(r.output("E")->data[i], std::exp(x), 1e-5 * std::exp(x));
  }
}

TEST(Functional, Bf16StoresRoundToNearestEven) {
  Program p = parseOrFail(R"(
kernel cast
tensor %A : f32[1, 4] input
tensor %B : f32[1, 4] output
buffer %a : sbuf f32[1, 4] bufs=1 addr=0
buffer %h : sbuf bf16[1, 4] bufs=1 addr=16
dma %a <- %A queue=0
copy %h <- %a
dma %B <- %h queue=0
)");
  SimOptions o;
  // 1 + 2^-8 is a tie between 1 and 1 + 2^-7: rounds to even (1).
  // 1 + 3*2^-8 ties between 1+2^-7 and 1+2^-6: rounds to even (1 + 2^-6).
  o.inputData["A"] = {1.0f + 1.0f / 256, 1.0f + 3.0f / 256, 1.0f + 1.0f / 128 + 1.0f / 1024, -2.5f};
  SimResult r = runOrFail(p, o);
  EXPECT_EQ(r.output("B")->data,
            (std::vector<float>{1.0f, 1.0f + 1.0f / 64, 1.0f + 1.0f / 128, -2.5f}));
}

TEST(Functional, NpyInputsAndOutputs) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("tessel-rt", dir));
  std::string in = (dir + "/a.npy").str();
  ASSERT_FALSE(bool(writeNpy(in, {2, 3}, {1, 2, 3, 4, 5, 6.01f})));
  Program p = parseOrFail(R"(
kernel io
tensor %A : bf16[2, 3] input
tensor %B : f32[2, 3] output
buffer %a : sbuf bf16[2, 3] bufs=1 addr=0
buffer %b : sbuf f32[2, 3] bufs=1 addr=16
dma %a <- %A queue=0
copy %b <- %a
dma %B <- %b queue=0
)");
  SimOptions o;
  o.inputFiles["A"] = in;
  o.outputDir = (dir + "/out").str();
  SimResult r = runOrFail(p, o);
  auto out = readNpy((dir + "/out/B.npy").str());
  ASSERT_TRUE(bool(out)) << llvm::toString(out.takeError());
  EXPECT_EQ(out->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(out->data, (std::vector<float>{1, 2, 3, 4, 5, roundToBF16(6.01f)}));
  // The wrong shape is named with expected vs found.
  ASSERT_FALSE(bool(writeNpy(in, {3, 2}, {1, 2, 3, 4, 5, 6})));
  std::string err = runError(p, o);
  EXPECT_NE(err.find("input 'A'"), std::string::npos) << err;
  EXPECT_NE(err.find("expected shape [2, 3]"), std::string::npos) << err;
  EXPECT_NE(err.find("found [3, 2]"), std::string::npos) << err;
  // Unknown input names are rejected.
  SimOptions bad;
  bad.inputFiles["Q"] = in;
  err = runError(p, bad);
  EXPECT_NE(err.find("no input tensor named 'Q'"), std::string::npos) << err;
  bad.inputFiles.clear();
  bad.inputFiles["B"] = in;
  err = runError(p, bad);
  EXPECT_NE(err.find("'B' is an output tensor"), std::string::npos) << err;
  llvm::sys::fs::remove_directories(dir);
}

TEST(Functional, StridedViewsIndexDimsAndTransposedStores) {
  // W[3, 4, 6]: load W[1, :, 2:5] (an index dim, a strided free range) into
  // columns 1..3 of a [4, 2, 3] buffer slot, then store it transposed.
  Program p = parseOrFail(R"(
tensor %W : f32[3, 4, 6] input
tensor %O : f32[3, 4] output
tensor %Q : f32[4, 2, 3] output
buffer %b : sbuf f32[4, 2, 3] bufs=1 addr=0
dma %b[0:4, 1, 0:3] <- %W[1, 0:4, 2:3] queue=0
dma %b[0:4, 0, 0:3] <- %W[2, 0:4, 0:3] queue=1
dma %O[0:3, 0:4] <- %b[0:4, 1, 0:3] queue=2 transpose
dma %Q <- %b queue=3
)");
  SimOptions o;
  std::vector<float> W(72);
  for (size_t i = 0; i < W.size(); ++i)
    W[i] = float(i);
  o.inputData["W"] = W;
  SimResult r = runOrFail(p, o);
  auto w = [&](int a, int b, int c) { return W[size_t(a * 24 + b * 6 + c)]; };
  const TensorData *O = r.output("O"), *Q = r.output("Q");
  ASSERT_TRUE(O && Q);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      EXPECT_EQ(O->data[size_t(i * 4 + j)], w(1, j, 2 + i)) << i << "," << j;
  for (int pp = 0; pp < 4; ++pp)
    for (int c = 0; c < 3; ++c) {
      EXPECT_EQ(Q->data[size_t(pp * 6 + 0 * 3 + c)], w(2, pp, c));
      EXPECT_EQ(Q->data[size_t(pp * 6 + 1 * 3 + c)], w(1, pp, 2 + c));
    }
  EXPECT_EQ(r.report.hbmReadBytes, 2u * 12 * 4);
  EXPECT_EQ(r.report.hbmWriteBytes, (12u + 24u) * 4);
}

TEST(Functional, MatmulOnStridedAndSingleColumnViews) {
  // Stationary: a strided [K=3, M=4] view (2 of 4 blocks x 2 of 8 columns);
  // moving: a single column (index dim); output: a strided PSUM view.
  Program p = parseOrFail(R"(
tensor %S : f32[3, 4, 8] input
tensor %M : f32[3, 5] input
tensor %O : f32[4, 1] output
tensor %P : f32[4, 2, 2] output
buffer %s : sbuf f32[3, 4, 8] bufs=1 addr=0
buffer %m : sbuf f32[3, 5] bufs=1 addr=128
buffer %p : psum f32[4, 3, 2] bufs=1 addr=0
buffer %q : psum f32[4, 1] bufs=1 addr=64
buffer %o : sbuf f32[4, 1] bufs=1 addr=160
buffer %oo : sbuf f32[4, 2, 2] bufs=1 addr=192
dma %s <- %S queue=0
dma %m <- %M queue=1
matmul %q[0:4, 0:1] <- %s[0:3, 1:2, 0:2], %m[0:3, 4] reset
copy %o <- %q
dma %O <- %o queue=2
matmul %p[0:4, 0:2, 0:1] <- %s[0:3, 1:2, 0:2], %m[0:3, 0:2] reset
matmul %p[0:4, 0:2, 0:1] <- %s[0:3, 1:2, 0:2], %m[0:3, 2:2] accumulate
matmul %p[0:4, 0:2, 1] <- %s[0:3, 1:2, 4:2], %m[0:3, 0:2] reset
copy %oo <- %p[0:4, 0:2, 0:2]
dma %P <- %oo queue=3
)");
  SimOptions o;
  std::vector<float> S(96), M(15);
  for (size_t i = 0; i < S.size(); ++i)
    S[i] = float(int(i % 7) - 3);
  for (size_t i = 0; i < M.size(); ++i)
    M[i] = float(int(i % 5) - 2);
  o.inputData["S"] = S;
  o.inputData["M"] = M;
  SimResult r = runOrFail(p, o);
  auto st = [&](int k, int m, int col0) { // stationary element [k, m] of %s[0:3, 1:2, col0:2]
    return S[size_t(k * 32 + (1 + m / 2) * 8 + col0 + m % 2)];
  };
  auto mv = [&](int k, int n) { return M[size_t(k * 5 + n)]; };
  const TensorData *O = r.output("O"), *P = r.output("P");
  ASSERT_TRUE(O && P);
  for (int m = 0; m < 4; ++m) {
    float want = 0;
    for (int k = 0; k < 3; ++k)
      want += st(k, m, 0) * mv(k, 4);
    EXPECT_EQ(O->data[size_t(m)], want) << m;
    for (int n = 0; n < 2; ++n) {
      float acc = 0, other = 0;
      for (int k = 0; k < 3; ++k) {
        acc += st(k, m, 0) * (mv(k, n) + mv(k, 2 + n));
        other += st(k, m, 4) * mv(k, n);
      }
      EXPECT_EQ(P->data[size_t(m * 4 + n * 2 + 0)], acc) << m << "," << n;
      EXPECT_EQ(P->data[size_t(m * 4 + n * 2 + 1)], other) << m << "," << n;
    }
  }
}

TEST(Functional, TimingOnlySkipsNumbersButKeepsTiming) {
  Program p = parseOrFail(kXUV);
  SimOptions o;
  SimResult f = runOrFail(p, o);
  o.timingOnly = true;
  SimResult t = runOrFail(p, o);
  EXPECT_TRUE(t.outputs.empty());
  EXPECT_TRUE(t.inputs.empty());
  EXPECT_FALSE(t.report.functional);
  EXPECT_DOUBLE_EQ(f.report.latencyNs, t.report.latencyNs);
  EXPECT_EQ(f.report.flops, t.report.flops);
}

} // namespace

// One DMA may move a [g*128, F] tensor region to or from g partition groups
// of a folded buffer: tensor row r is partition r mod 128, group r div 128.
// A wide load then per-group stores (and the reverse) copy the tensor exactly.
TEST(Functional, DmaOverSeveralPartitionGroups) {
  Program p = parseOrFail(R"(
kernel groups
target trn1
tensor %W : bf16[768, 64] input
tensor %A : bf16[768, 64] output
tensor %B : bf16[768, 64] output
buffer %t : sbuf bf16[128, 3, 64] bufs=1 addr=0
buffer %u : sbuf bf16[128, 3, 64] bufs=1 addr=512
for %h = 0 to 2 {
  dma %t[0:128, 0:3, 0:64] <- %W[%h*384 : 384, 0:64] queue=0
  for %g = 0 to 3 {
    dma %A[%h*384 + %g*128 : 128, 0:64] <- %t[0:128, %g, 0:64] queue=1
    dma %u[0:128, %g, 0:64] <- %W[%h*384 + %g*128 : 128, 0:64] queue=2
  }
  dma %B[%h*384 : 384, 0:64] <- %u[0:128, 0:3, 0:64] queue=3
}
)");
  SimResult r = runOrFail(p);
  const TensorData *W = r.input("W"), *A = r.output("A"), *B = r.output("B");
  ASSERT_TRUE(W && A && B);
  EXPECT_EQ(A->data, W->data);
  EXPECT_EQ(B->data, W->data);
  // 2 wide loads + 6 narrow stores + 6 narrow loads + 2 wide stores.
  uint64_t transfers = 0;
  for (const QueueReport &q : r.report.queues)
    transfers += q.transfers;
  EXPECT_EQ(transfers, 16u);
}

TEST(Functional, DmaGroupsMustMatchTheTensorRows) {
  Program p = parseOrFail(R"(
kernel groups
target trn1
tensor %W : bf16[256, 64] input
tensor %A : bf16[256, 64] output
buffer %t : sbuf bf16[128, 3, 64] bufs=1 addr=0
dma %t[0:128, 0:3, 0:64] <- %W[0:256, 0:64] queue=0
dma %A[0:128, 0:64] <- %t[0:128, 0, 0:64] queue=1
)");
  std::string err = runError(p);
  EXPECT_NE(err.find("tile shapes differ"), std::string::npos) << err;
}

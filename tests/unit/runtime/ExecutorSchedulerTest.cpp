//===- tests/unit/runtime/ExecutorSchedulerTest.cpp - each half alone -----===//
//
// The numeric executor and the timing scheduler driven directly with tile
// views, without the simulator's walk over the program.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

#include "runtime/NumericExecutor.h"
#include "runtime/TimingScheduler.h"

using namespace tessel::runtime;
using namespace tessel::runtime::test;

namespace {

const char *kProgram = R"(
tensor %A : f32[2, 2] input
tensor %B : f32[2, 3] input
tensor %C : f32[2, 3] output
buffer %a : sbuf f32[2, 2] bufs=1 addr=0
buffer %b : sbuf f32[2, 3] bufs=1 addr=64
buffer %c : psum f32[2, 3] bufs=1 addr=0
buffer %o : sbuf f32[2, 3] bufs=1 addr=128
alloc %a
dma %a <- %A queue=0
alloc %b
dma %b <- %B queue=1
alloc %c
matmul %c <- %a, %b
alloc %o
copy %o <- %c
dma %C <- %o queue=2
)";

/// The whole [rows, cols] object as a contiguous tile.
TileView whole(const Program &p, bool buffer, uint32_t id, uint32_t obj) {
  const std::vector<int64_t> &shape = buffer ? p.buffers[id].shape : p.tensors[id].shape;
  TileView v;
  v.P = shape[0];
  v.pStride = shape[1];
  v.nf = 1;
  v.fSize[0] = v.F = v.contig = shape[1];
  v.fStride[0] = 1;
  v.isBuffer = buffer;
  v.id = id;
  v.obj = obj;
  int64_t bytes = buffer ? p.buffers[id].address : 0;
  v.rect = {0, shape[0], bytes, bytes + (buffer ? 4 : 1) * shape[1]};
  return v;
}

TEST(NumericExecutor, LoadsAndMultipliesWithoutTheWalk) {
  Program p = parseOrFail(kProgram);
  NumericExecutor num(p);
  num.setInput(0, {1, 2, 3, 4});       // A = [[1, 2], [3, 4]]
  num.setInput(1, {1, 0, 1, 0, 1, 1}); // B = [[1, 0, 1], [0, 1, 1]]
  TileView A = whole(p, false, 0, 0), B = whole(p, false, 1, 1), C = whole(p, false, 2, 2);
  TileView a = whole(p, true, 0, 3), b = whole(p, true, 1, 4), c = whole(p, true, 2, 5), o = whole(p, true, 3, 6);
  EXPECT_EQ(num.firstUnwritten(A), -1); // inputs count as written
  EXPECT_EQ(num.firstUnwritten(a), 0);
  num.dma(a, A, false);
  num.dma(b, B, false);
  EXPECT_EQ(num.firstUnwritten(a), -1);
  num.matmul(c, a, b, true); // c = a^T @ b = [[1, 3, 4], [2, 4, 6]]
  num.elementwise(p.instrs[3], o, &c);
  num.dma(C, o, false);
  EXPECT_EQ(num.unwrittenElements(2), 0u);
  EXPECT_EQ(num.takeTensor(2), (std::vector<float>{1, 3, 4, 2, 4, 6}));
  num.allocate(0, 0);
  EXPECT_EQ(num.firstUnwritten(a), 0);
}

TEST(TimingScheduler, MatmulWaitsForBothLoadsWithoutTheWalk) {
  Program p = parseOrFail(kProgram);
  const Target &t = trn1Target();
  TimingScheduler sched(p, t, /*recording=*/true, /*keepAll=*/true, 0);
  TileView A = whole(p, false, 0, sched.tensorObject(0)), B = whole(p, false, 1, sched.tensorObject(1));
  TileView C = whole(p, false, 2, sched.tensorObject(2));
  TileView a = whole(p, true, 0, sched.slotObject(0, 0)), b = whole(p, true, 1, sched.slotObject(1, 0));
  TileView c = whole(p, true, 2, sched.slotObject(2, 0)), o = whole(p, true, 3, sched.slotObject(3, 0));
  sched.dma(p.instrs[0], 0, A, a, true);
  sched.dma(p.instrs[1], 1, B, b, true);
  TileView ops[2] = {a, b};
  sched.matmul(p.instrs[2], 2, c, ops);
  sched.engineOp(p.instrs[3], 3, o, &c, 1);
  sched.dma(p.instrs[4], 4, C, o, false);
  const std::vector<TraceEvent> &ev = sched.events();
  ASSERT_EQ(ev.size(), 5u);
  double loaded = std::max(ev[0].startNs + ev[0].durNs, ev[1].startNs + ev[1].durNs);
  EXPECT_EQ(ev[2].startNs, loaded);                          // RAW on both operands
  EXPECT_GT(ev[3].startNs, ev[2].startNs + ev[2].durNs);     // the copy waits for the product's latency
  EXPECT_GE(ev[4].startNs, ev[3].startNs + ev[3].durNs);     // the store waits for the copy
  Report r = sched.report();
  EXPECT_EQ(r.flops, uint64_t(2 * 2 * 2 * 3));
  EXPECT_EQ(r.dynamicInstructions, 5u);
  EXPECT_EQ(r.hbmReadBytes, uint64_t(4 * (4 + 6)));
}

} // namespace

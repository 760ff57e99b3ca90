//===- tests/unit/runtime/ThreadsTest.cpp - numbers on several threads ----===//
//
// The task graph runs conflicting tasks in program order (the submitting
// thread among its threads once the window is full), and a functional
// run gives the same bits on any number of threads, in float32 or bf16
// results.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

#include "runtime/TaskGraph.h"

#include <atomic>
#include <chrono>
#include <thread>
#include <cstring>

using namespace tessel::runtime;
using namespace tessel::runtime::test;

namespace {

TEST(TaskGraph, ConflictingTasksRunInProgramOrder) {
  std::vector<int> log;
  std::atomic<int> independent{0};
  {
    TaskGraph tasks(4, /*window=*/8);
    for (int i = 0; i < 200; ++i) {
      // Every third task writes the shared region (read by the others); the
      // rest write a region of their own.
      Touch shared{true, 0, Rect{0, 1, 0, 1}, i % 3 == 0};
      Touch own{true, 1, Rect{i, i + 1, 0, 1}, true};
      Touch touches[] = {shared, own};
      tasks.submit(touches, [&, i](unsigned thread) {
        EXPECT_LT(thread, 4u);
        if (i % 3 == 0)
          log.push_back(i);
        else
          ++independent;
      });
    }
    tasks.finish();
    EXPECT_EQ(independent.load(), 133);
  }
  ASSERT_EQ(log.size(), 67u);
  for (size_t i = 0; i < log.size(); ++i)
    EXPECT_EQ(log[i], int(3 * i));
}

TEST(TaskGraph, TheSubmitterRunsTasksWhileTheWindowIsFull) {
  const std::thread::id submitter = std::this_thread::get_id();
  std::atomic<int> bySubmitter{0}, byWorker{0};
  {
    TaskGraph tasks(2, /*window=*/4);
    for (int i = 0; i < 40; ++i) {
      Touch own{true, 0, Rect{i, i + 1, 0, 1}, true};
      tasks.submit(own, [&](unsigned thread) {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        bool onSubmitter = std::this_thread::get_id() == submitter;
        EXPECT_EQ(thread, onSubmitter ? 1u : 0u); // one worker (0) and the submitter (1)
        ++(onSubmitter ? bySubmitter : byWorker);
      });
    }
    tasks.finish();
  }
  EXPECT_EQ(bySubmitter + byWorker, 40);
  EXPECT_GT(bySubmitter.load(), 0);
}

TEST(TaskGraph, OneThreadRunsEachTaskAtOnce) {
  TaskGraph tasks(1);
  int ran = 0;
  tasks.submit({}, [&](unsigned thread) { ran += 1 + int(thread); });
  EXPECT_EQ(ran, 1);
}

// Tile products of two PSUM slots at a time, an activation and stores.
const char *kProducts = R"(
kernel products
target trn1
tensor %S : bf16[256, 512] input
tensor %W : bf16[256, 1024] input
tensor %Y : bf16[512, 1024] output
buffer %s : sbuf bf16[128, 2, 512] bufs=1 addr=0
buffer %w : sbuf bf16[128, 2, 1024] bufs=1 addr=2048
buffer %p : psum f32[128, 512] bufs=2 addr=0
buffer %o : sbuf bf16[128, 512] bufs=2 addr=6144
for %k = 0 to 2 {
  dma %s[0:128, %k, 0:512] <- %S[%k*128 : 128, 0:512] queue=0
  dma %w[0:128, %k, 0:1024] <- %W[%k*128 : 128, 0:1024] queue=1
}
for %m = 0 to 4 {
  for %n = 0 to 2 {
    alloc %p
    for %k = 0 to 2 {
      matmul %p[0:128, 0:512] <- %s[0:128, %k, %m*128 : 128], %w[0:128, %k, %n*512 : 512] reset_if_first(%k)
    }
    alloc %o
    activation.silu %o[0:128, 0:512] <- %p[0:128, 0:512]
    dma %Y[%m*128 : 128, %n*512 : 512] <- %o[0:128, 0:512] queue=2
  }
}
)";

TEST(Threads, ResultsAreBitIdenticalForAnyThreadCount) {
  Program p = parseOrFail(kProducts);
  SimOptions one, four, bits;
  one.threads = 1;
  four.threads = 4;
  bits.threads = 3;
  bits.bf16Results = true;
  SimResult a = runOrFail(p, one), b = runOrFail(p, four), c = runOrFail(p, bits);
  ASSERT_TRUE(a.output("Y") && b.output("Y") && c.output("Y"));
  const std::vector<float> &ya = a.output("Y")->data, &yb = b.output("Y")->data;
  ASSERT_EQ(ya.size(), size_t(512 * 1024));
  ASSERT_EQ(yb.size(), ya.size());
  EXPECT_EQ(std::memcmp(ya.data(), yb.data(), ya.size() * sizeof(float)), 0);
  // bf16 results: the same values, 2 bytes each, inputs included.
  const TensorData &yc = *c.output("Y");
  EXPECT_TRUE(yc.data.empty());
  ASSERT_EQ(yc.size(), ya.size());
  for (size_t i = 0; i < ya.size(); ++i)
    ASSERT_EQ(floatBits(yc.at(i)), floatBits(ya[i])) << i;
  EXPECT_EQ(c.input("W")->bf16.size(), size_t(256 * 1024));
  EXPECT_EQ(c.input("W")->at(77), a.input("W")->data[77]);
}

} // namespace

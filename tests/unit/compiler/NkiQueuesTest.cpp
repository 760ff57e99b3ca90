//===- tests/unit/compiler/NkiQueuesTest.cpp - DMA queues of NKI kernels ----===//
#include "compiler/NkiInput.h"

#include <gtest/gtest.h>

using namespace tessel;
using runtime::Access;
using runtime::Instr;
using runtime::Opcode;

namespace {

Access tensor(uint32_t id) {
  Access a;
  a.kind = Access::Kind::Tensor;
  a.id = id;
  return a;
}

Access buffer(uint32_t id) {
  Access a;
  a.kind = Access::Kind::Buffer;
  a.id = id;
  return a;
}

/// A DMA as the backend leaves it (rotating over four queues).
Instr dma(Access dst, Access src) {
  Instr in;
  in.op = Opcode::Dma;
  in.dst = dst;
  in.srcs = {src};
  in.queueSpan = 4;
  return in;
}

Instr load(uint32_t hbm, uint32_t buf) { return dma(buffer(buf), tensor(hbm)); }
Instr store(uint32_t hbm, uint32_t buf) { return dma(tensor(hbm), buffer(buf)); }

runtime::Target trn1() {
  llvm::Expected<runtime::Target> target = runtime::loadTarget("trn1");
  EXPECT_TRUE(bool(target)) << llvm::toString(target.takeError());
  return *target;
}

} // namespace

TEST(NkiQueues, OneQueuePerTensorAndDirectionWhateverTheStatements) {
  runtime::Program program;
  // Two statements loading tensor 0 (a list of tiles, or two halves), one
  // loading tensor 1, then tensor 0 again, a store to tensor 2 and a load back
  // from it (the other direction: a stream of its own).
  program.instrs = {load(0, 0), load(0, 1), load(1, 2), load(0, 3), store(2, 4), load(2, 5)};
  Instr copy;
  copy.op = Opcode::Copy;
  program.instrs.insert(program.instrs.begin() + 2, copy);
  compiler::assignNkiDmaQueues(program, trn1());
  std::vector<uint32_t> queues, spans;
  for (const Instr &in : program.instrs)
    if (in.op == Opcode::Dma) {
      queues.push_back(in.queue);
      spans.push_back(in.queueSpan);
    }
  EXPECT_EQ(queues, (std::vector<uint32_t>{0, 0, 1, 0, 2, 3}));
  EXPECT_EQ(spans, (std::vector<uint32_t>(6, 1)));
}

TEST(NkiQueues, StreamsBeyondTheTargetsQueuesWrapAround) {
  runtime::Target target = trn1();
  const uint32_t n = uint32_t(target.dma_queues);
  runtime::Program program;
  for (uint32_t t = 0; t <= n; ++t)
    program.instrs.push_back(load(t, t));
  compiler::assignNkiDmaQueues(program, target);
  for (uint32_t t = 0; t < n; ++t)
    EXPECT_EQ(program.instrs[t].queue, t);
  EXPECT_EQ(program.instrs[n].queue, 0u);
}

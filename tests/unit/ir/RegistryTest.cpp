//===- tests/unit/ir/RegistryTest.cpp - Every registered op in IR text ----===//
//
// Each instruction of support/Ops.def, each activation and ALU operation and
// each dtype reads and prints back unchanged, under its registered name.
//
//===----------------------------------------------------------------------===//
#include "IRTestUtil.h"

using namespace tessel::ir;
using tessel::ir::test::IRFixture;

namespace {

const char *kHead = "kernel @k(%A: hbm<f32, [M:128, N:128]>) -> () {\n"
                    "  %s = alloc sbuf<f32, [M:128, N:128]>\n"
                    "  %p = alloc psum<f32, [M:128, N:128]>\n";

/// One instance of each instruction, as the printer writes it.
std::string instructionText(tessel::Opcode op) {
  switch (op) {
  case tessel::Opcode::Dma: return "dma %s[0 +: 128, 0 +: 128] <- %A[0 +: 128, 0 +: 128]";
  case tessel::Opcode::Matmul: return "matmul %p[0 +: 128, 0 +: 128] <- %s[0 +: 128, 0 +: 128], %s[0 +: 128, 0 +: 128]";
  case tessel::Opcode::Transpose: return "transpose %p[0 +: 128, 0 +: 128] <- %s[0 +: 128, 0 +: 128]";
  case tessel::Opcode::Activation: return "activation gelu %s[0 +: 128, 0 +: 128] <- %p[0 +: 128, 0 +: 128]";
  case tessel::Opcode::TensorTensor: return "tensor_tensor add %s[0 +: 128, 0 +: 128] <- %s[0 +: 128, 0 +: 128], %p[0 +: 128, 0 +: 128]";
  case tessel::Opcode::TensorScalar: return "tensor_scalar mul %s[0 +: 128, 0 +: 128] <- %s[0 +: 128, 0 +: 128], 2.0";
  case tessel::Opcode::Copy: return "copy %s[0 +: 128, 0 +: 128] <- %p[0 +: 128, 0 +: 128]";
  case tessel::Opcode::Memset: return "memset %s[0 +: 128, 0 +: 128], 0.0";
  case tessel::Opcode::TensorReduce: return "tensor_reduce max %s[0 +: 128, 0 +: 1] <- %p[0 +: 128, 0 +: 128]";
  case tessel::Opcode::Iota: return "iota %s[0 +: 128, 0 +: 128] offset 3 partition 1 free -1";
  case tessel::Opcode::AffineSelect:
    return "affine_select is_ge %s[0 +: 128, 0 +: 128] <- %s[0 +: 128, 0 +: 128] offset 0 partition 1 free -1 fill -inf";
  case tessel::Opcode::TensorTensorScan:
    return "tensor_tensor_scan mul add %s[0 +: 128, 0 +: 128] <- %s[0 +: 128, 0 +: 128], %p[0 +: 128, 0 +: 128] "
           "initial %s[0 +: 128, 0 +: 1]";
  case tessel::Opcode::BnStats: return "bn_stats %s[0 +: 128, 0 +: 6] <- %p[0 +: 128, 0 +: 128]";
  case tessel::Opcode::BnAggr: return "bn_aggr %s[0 +: 128, 0 +: 2] <- %s[0 +: 128, 0 +: 6]";
  case tessel::Opcode::TensorPartitionReduce:
    return "tensor_partition_reduce add %s[0 +: 1, 0 +: 128] <- %s[0 +: 128, 0 +: 128]";
  }
  return "";
}

/// Parses a kernel whose last op is `line`, checks it prints back unchanged,
/// and returns that op.
const Op *roundTrip(IRFixture &f, std::unique_ptr<Module> &m, const std::string &line) {
  std::string text = std::string(kHead) + "  " + line + "\n}\n";
  m = f.parse(text);
  EXPECT_TRUE(m) << f.all();
  if (!m)
    return nullptr;
  EXPECT_EQ(toString(*m->kernels[0]), text);
  return m->kernels[0]->body.ops.back().get();
}

TEST(Registry, EveryInstructionRoundTrips) {
  for (tessel::Opcode code : tessel::allOpcodes()) {
    IRFixture f;
    std::unique_ptr<Module> m;
    const Op *op = roundTrip(f, m, instructionText(code));
    ASSERT_TRUE(op) << tessel::opcodeName(code).str();
    EXPECT_EQ(opcodeOf(op->kind), code);
    EXPECT_EQ(op->mnemonic(), tessel::opcodeName(code));
  }
}

/// Every enumerator of `all`, written into an op by `line`, reads back as
/// itself (`field` of the parsed op).
template <class OpT, class E, class LineFn, class FieldFn>
void expectEachRoundTrips(llvm::ArrayRef<E> all, LineFn line, FieldFn field) {
  for (E e : all) {
    IRFixture f;
    std::unique_ptr<Module> m;
    const Op *op = roundTrip(f, m, line(e));
    ASSERT_TRUE(op);
    EXPECT_EQ(field(*llvm::cast<OpT>(op)), e);
  }
}

TEST(Registry, EveryActivationRoundTrips) {
  expectEachRoundTrips<ActivationOp>(
      tessel::allActFns(),
      [](ActFn fn) { return "activation " + actFnName(fn).str() + " %s[0 +: 128, 0 +: 128] <- %p[0 +: 128, 0 +: 128]"; },
      [](const ActivationOp &op) { return op.fn; });
}

TEST(Registry, EveryAluOperationRoundTrips) {
  expectEachRoundTrips<TensorScalarOp>(
      tessel::allAluOps(),
      [](AluOp alu) { return "tensor_scalar " + aluOpName(alu).str() + " %s[0 +: 128, 0 +: 128] <- %s[0 +: 128, 0 +: 128], 1.0"; },
      [](const TensorScalarOp &op) { return op.alu; });
}

TEST(Registry, EveryDTypeRoundTrips) {
  expectEachRoundTrips<AllocOp>(
      tessel::allDTypes(), [](DType t) { return "%b = alloc sbuf<" + dtypeName(t).str() + ", [M:128, N:4]>"; },
      [](const AllocOp &op) { return op.result->type.dtype; });
}

} // namespace

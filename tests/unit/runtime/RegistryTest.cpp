//===- tests/unit/runtime/RegistryTest.cpp - Every registered op in .tasm -===//
//
// Each instruction of support/Ops.def, each activation and ALU operation, each
// dtype and each engine choice reads and prints back under its registered name.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

using namespace tessel::runtime;
using namespace tessel::runtime::test;

namespace {

const char *kHead = "kernel k\ntarget trn1\n\n"
                    "tensor %A : f32[128, 128] input\n\n"
                    "buffer %s : sbuf f32[128, 128] bufs=1 addr=0\n"
                    "buffer %p : psum f32[128, 128] bufs=1 addr=0\n\n";

/// One instance of each instruction, as the printer writes it.
std::string instructionText(Opcode op) {
  switch (op) {
  case Opcode::Dma: return "dma %s[0:128, 0:128] <- %A[0:128, 0:128] queue=0";
  case Opcode::Matmul: return "matmul %p[0:128, 0:128] <- %s[0:128, 0:128], %s[0:128, 0:128] reset";
  case Opcode::Transpose: return "transpose %p[0:128, 0:128] <- %s[0:128, 0:128]";
  case Opcode::Activation: return "activation.gelu %s[0:128, 0:128] <- %p[0:128, 0:128]";
  case Opcode::TensorTensor: return "tensor_tensor.add %s[0:128, 0:128] <- %s[0:128, 0:128], %p[0:128, 0:128]";
  case Opcode::TensorScalar: return "tensor_scalar.mul %s[0:128, 0:128] <- %s[0:128, 0:128], 2";
  case Opcode::Copy: return "copy %s[0:128, 0:128] <- %p[0:128, 0:128]";
  case Opcode::Memset: return "memset %s[0:128, 0:128] <- 0";
  case Opcode::TensorReduce: return "tensor_reduce.max %s[0:128, 0:1] <- %p[0:128, 0:128]";
  case Opcode::Iota: return "iota %s[0:128, 0:128] <- offset=3 partition=1 free=-1";
  case Opcode::AffineSelect:
    return "affine_select.is_ge %s[0:128, 0:128] <- %s[0:128, 0:128] offset=0 partition=1 free=-1 fill=-inf";
  case Opcode::TensorTensorScan:
    return "tensor_tensor_scan.mul.add %s[0:128, 0:128] <- %s[0:128, 0:128], %p[0:128, 0:128], %s[0:128, 0:1]";
  case Opcode::BnStats: return "bn_stats %s[0:128, 0:6] <- %p[0:128, 0:128]";
  case Opcode::BnAggr: return "bn_aggr %s[0:128, 0:2] <- %s[0:128, 0:6]";
  case Opcode::TensorPartitionReduce: return "tensor_partition_reduce.max %s[0:1, 0:128] <- %s[0:128, 0:128]";
  }
  return "";
}

/// Parses a program whose only instruction is `line` and checks that it
/// prints back unchanged.
Program roundTrip(const std::string &line) {
  Program p = parseOrFail(std::string(kHead) + line + "\n");
  EXPECT_EQ(p.instrs.size(), 1u) << line;
  std::string printed = printProgramToString(p);
  EXPECT_NE(printed.find(line + "\n"), std::string::npos) << printed;
  EXPECT_EQ(printProgramToString(parseOrFail(printed)), printed);
  return p;
}

TEST(Registry, EveryInstructionRoundTrips) {
  for (Opcode op : tessel::allOpcodes()) {
    Program p = roundTrip(instructionText(op));
    ASSERT_EQ(p.instrs.size(), 1u);
    EXPECT_EQ(p.instrs[0].op, op);
    EXPECT_EQ(p.instrs[0].engine, tessel::defaultEngine(op));
  }
}

TEST(Registry, EveryActivationRoundTrips) {
  for (ActFn fn : tessel::allActFns()) {
    Program p = roundTrip("activation." + tessel::actFnName(fn).str() + " %s[0:128, 0:128] <- %p[0:128, 0:128]");
    ASSERT_EQ(p.instrs.size(), 1u);
    EXPECT_EQ(p.instrs[0].actFn(), fn);
  }
  // NKI's spelling of copy.
  Program p = parseOrFail(std::string(kHead) + "activation.identity %s[0:128, 0:128] <- %p[0:128, 0:128]\n");
  ASSERT_EQ(p.instrs.size(), 1u);
  EXPECT_EQ(p.instrs[0].actFn(), ActFn::Copy);
}

TEST(Registry, EveryAluOperationRoundTrips) {
  for (AluOp alu : tessel::allAluOps()) {
    Program p = roundTrip("tensor_tensor." + tessel::aluOpName(alu).str() +
                          " %s[0:128, 0:128] <- %s[0:128, 0:128], %p[0:128, 0:128]");
    ASSERT_EQ(p.instrs.size(), 1u);
    EXPECT_EQ(p.instrs[0].aluOp(), alu);
  }
}

TEST(Registry, EveryDTypeRoundTrips) {
  for (DType t : tessel::allDTypes()) {
    std::string decl = "buffer %b : sbuf " + tessel::dtypeName(t).str() + "[128, 4] bufs=1 addr=0\n";
    Program p = parseOrFail(decl);
    ASSERT_EQ(p.buffers.size(), 1u);
    EXPECT_EQ(p.buffers[0].dtype, t);
    EXPECT_NE(printProgramToString(p).find(decl), std::string::npos) << printProgramToString(p);
  }
}

TEST(Registry, EngineChoicesFollowTheTable) {
  for (unsigned e = 0; e < tessel::NumEngines; ++e) {
    Engine engine = Engine(e);
    std::string text = std::string(kHead) + "tensor_scalar.mul %s[0:128, 0:128] <- %s[0:128, 0:128], 2 engine=" +
                       tessel::engineName(engine).str() + "\n";
    bool allowed = tessel::engineAllowed(Opcode::TensorScalar, engine);
    EXPECT_EQ(parseError(text).empty(), allowed) << tessel::engineName(engine).str();
  }
}

TEST(Registry, MisspelledNamesGetASuggestion) {
  EXPECT_NE(parseError(std::string(kHead) + "matmull %p[0:128, 0:128] <- %s[0:128, 0:128], %s[0:128, 0:128]\n")
                .find("unknown statement 'matmull' (did you mean 'matmul'?)"),
            std::string::npos);
  EXPECT_NE(parseError(std::string(kHead) + "activation.gleu %s[0:128, 0:128] <- %p[0:128, 0:128]\n")
                .find("unknown activation function 'gleu' (did you mean 'gelu'?)"),
            std::string::npos);
  EXPECT_NE(parseError(std::string(kHead) + "activation.softplus %s[0:128, 0:128] <- %p[0:128, 0:128]\n")
                .find("unknown activation function 'softplus' (expected activation.F with F one of copy, identity, "
                      "silu, gelu, relu, exp, sigmoid, tanh, square, rsqrt, reciprocal, log, abs)"),
            std::string::npos);
  EXPECT_NE(parseError(std::string(kHead) + "frobnicate %s <- %s\n")
                .find("unknown statement 'frobnicate' (expected for, alloc, dma, matmul, transpose, activation.F, "
                      "tensor_tensor.OP, tensor_scalar.OP, copy, memset, tensor_reduce.OP, iota, affine_select.OP, "
                      "tensor_tensor_scan.OP0.OP1, bn_stats, bn_aggr or tensor_partition_reduce.OP)"),
            std::string::npos);
}

} // namespace

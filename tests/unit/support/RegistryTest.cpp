//===- tests/unit/support/RegistryTest.cpp - Ops, activations, dtypes -----===//
#include "support/Activation.h"
#include "support/DType.h"
#include "support/Ops.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace tessel;

namespace {

TEST(Registry, DTypeNamesRoundTripAndSizes) {
  ASSERT_EQ(allDTypes().size(), 2u);
  for (DType t : allDTypes())
    EXPECT_EQ(parseDType(dtypeName(t)), t) << dtypeName(t).str();
  EXPECT_EQ(dtypeBytes(DType::BF16), 2);
  EXPECT_EQ(dtypeBytes(DType::F32), 4);
  EXPECT_EQ(parseDType("f16"), std::nullopt);
}

TEST(Registry, ActivationNamesRoundTrip) {
  for (ActFn f : allActFns())
    EXPECT_EQ(parseActFn(actFnName(f)), f) << actFnName(f).str();
  EXPECT_EQ(parseActFn("softplus"), std::nullopt);
  EXPECT_EQ(actFnName(ActFn::Gelu), "gelu");
}

TEST(Registry, DslFunctionsAreTheDesignsOnes) {
  std::vector<std::string> dsl;
  for (ActFn f : allActFns())
    if (isDslFunction(f))
      dsl.push_back(actFnName(f).str());
  EXPECT_EQ(dsl, (std::vector<std::string>{"silu", "gelu", "relu", "exp", "sigmoid", "tanh", "rsqrt",
                                            "reciprocal", "log", "abs"}));
}

// Reference values computed by hand from the textbook formulas (not numpy).
TEST(Registry, ActivationValues) {
  struct Case {
    ActFn f;
    double x, want;
  };
  const Case cases[] = {
      {ActFn::Copy, -1.5, -1.5},
      {ActFn::Silu, 0.0, 0.0},
      {ActFn::Silu, 1.0, 0.7310585786300049},    // 1 / (1 + e^-1)
      {ActFn::Silu, -1.0, -0.2689414213699951},
      {ActFn::Gelu, 0.0, 0.0},
      {ActFn::Gelu, 1.0, 0.8413447460685429},    // Phi(1): the erf form (tanh form: 0.8411920)
      {ActFn::Gelu, -1.0, -0.15865525393145707},
      {ActFn::Relu, -2.0, 0.0},
      {ActFn::Relu, 2.5, 2.5},
      {ActFn::Exp, 1.0, 2.718281828459045},
      {ActFn::Sigmoid, 0.0, 0.5},
      {ActFn::Sigmoid, 2.0, 0.8807970779778823},
      {ActFn::Tanh, 0.5, 0.46211715726000974},
      {ActFn::Square, -3.0, 9.0},
      {ActFn::Rsqrt, 4.0, 0.5},
      {ActFn::Rsqrt, 0.25, 2.0},
      {ActFn::Reciprocal, -8.0, -0.125},
      {ActFn::Log, 1.0, 0.0},
      {ActFn::Log, 7.38905609893065, 2.0}, // e^2
      {ActFn::Abs, -2.5, 2.5},
      {ActFn::Abs, 3.0, 3.0},
  };
  for (const Case &c : cases)
    EXPECT_NEAR(applyActFn(c.f, c.x), c.want, 1e-12) << actFnName(c.f).str() << "(" << c.x << ")";
  // Every activation has a case above.
  for (ActFn f : allActFns())
    EXPECT_TRUE(std::any_of(std::begin(cases), std::end(cases), [&](const Case &c) { return c.f == f; }))
        << actFnName(f).str();
  // Where e^-x overflows, silu is a (tiny) number, not NaN.
  EXPECT_NEAR(applyActFn(ActFn::Silu, -1000.0), 0.0, 1e-300);
}

TEST(Registry, AluOps) {
  for (AluOp op : allAluOps())
    EXPECT_EQ(parseAluOp(aluOpName(op)), op);
  EXPECT_EQ(applyAluOp(AluOp::Add, 2, 3), 5);
  EXPECT_EQ(applyAluOp(AluOp::Sub, 2, 3), -1);
  EXPECT_EQ(applyAluOp(AluOp::Mul, 2, 3), 6);
  EXPECT_EQ(applyAluOp(AluOp::Max, 2, 3), 3);
  EXPECT_EQ(applyAluOp(AluOp::Min, 2, 3), 2);
  EXPECT_EQ(applyAluOp(AluOp::Divide, 3, 4), 0.75f);
  EXPECT_EQ(applyAluOp(AluOp::Pow, 2, 10), 1024.0f);
  EXPECT_EQ(applyAluOp(AluOp::Pow, 4, 0.5f), 2.0f);
  // Comparisons are masks: 1.0 where true, 0.0 where false.
  struct Cmp {
    AluOp op;
    float lt, eq, gt; // a < b, a == b, a > b
  };
  const Cmp cmps[] = {{AluOp::IsEqual, 0, 1, 0}, {AluOp::NotEqual, 1, 0, 1}, {AluOp::IsGt, 0, 0, 1},
                      {AluOp::IsGe, 0, 1, 1},    {AluOp::IsLt, 1, 0, 0},    {AluOp::IsLe, 1, 1, 0}};
  for (const Cmp &c : cmps) {
    EXPECT_EQ(applyAluOp(c.op, 1, 2), c.lt) << aluOpName(c.op).str();
    EXPECT_EQ(applyAluOp(c.op, 2, 2), c.eq) << aluOpName(c.op).str();
    EXPECT_EQ(applyAluOp(c.op, 3, 2), c.gt) << aluOpName(c.op).str();
  }
}

TEST(Registry, OpcodesAndEngines) {
  EXPECT_EQ(allOpcodes().size(), 15u);
  for (Opcode op : allOpcodes()) {
    EXPECT_EQ(parseOpcode(opcodeName(op)), op);
    EXPECT_TRUE(engineAllowed(op, defaultEngine(op))) << opcodeName(op).str();
  }
  EXPECT_EQ(parseOpcode("alloc"), std::nullopt); // structural, not an instruction
  EXPECT_EQ(opcodeName(Opcode::TensorScalar), "tensor_scalar");
  EXPECT_EQ(defaultEngine(Opcode::Activation), Engine::Scalar);
  EXPECT_TRUE(engineAllowed(Opcode::TensorScalar, Engine::GpSimd));
  EXPECT_FALSE(engineAllowed(Opcode::TensorTensor, Engine::Scalar));
  EXPECT_FALSE(engineAllowed(Opcode::Matmul, Engine::Vector));
  EXPECT_EQ(opInfo(Opcode::Matmul).srcRoles,
            (std::vector<llvm::StringRef>{"stationary", "moving"}));
  EXPECT_TRUE(opInfo(Opcode::Memset).srcRoles.empty());
  EXPECT_EQ(opInfo(Opcode::Activation).func, FuncKind::Activation);
  EXPECT_EQ(opInfo(Opcode::TensorScalar).func, FuncKind::Alu);
  for (unsigned e = 0; e < NumEngines; ++e)
    EXPECT_EQ(parseEngine(engineName(Engine(e))), Engine(e));
}

} // namespace

//===- tests/unit/frontend/SemaTest.cpp - constants, -D, shapes, type errors -===//
#include "FrontendTestUtil.h"

using namespace tessel;
using namespace tessel::ast;
using namespace tessel::testutil;

namespace {
TensorType bf16(int64_t r, int64_t c) { return TensorType{DType::BF16, r, c}; }

const char *kSmall = "const M = 4\nconst K = 8\nkernel k(X: bf16[M, K]) -> bf16[M, K] {\n  return X\n}\n";
} // namespace

TEST(Sema, DesignKernelsAreTyped) {
  Compiled c = compile(kDesignKernels);
  ASSERT_TRUE(c.module) << c.diags;
  const Kernel &up = c.module->kernels[0];
  EXPECT_EQ(up.params[0].type, bf16(4096, 7168));
  EXPECT_EQ(up.resultType, bf16(4096, 18432));
  const Expr &ret = *up.returnStmt().value;
  EXPECT_EQ(ret.kind, ExprKind::MatMul);
  EXPECT_EQ(ret.type, bf16(4096, 18432));
  EXPECT_EQ(ret.lhs->type, bf16(4096, 4096)); // X @ U

  const Kernel &mlp = c.module->kernels[1];
  const Expr &h = *mlp.body[0].value;
  EXPECT_EQ(h.kind, ExprKind::Binary);
  EXPECT_EQ(h.binOp, BinaryOp::Mul);
  EXPECT_EQ(h.type, bf16(4096, 8192));
  EXPECT_EQ(h.lhs->kind, ExprKind::Unary);
  EXPECT_EQ(h.lhs->unaryFn, UnaryFn::Silu);
  EXPECT_EQ(mlp.returnStmt().value->type, bf16(4096, 2048));
  EXPECT_EQ(mlp.returnStmt().value->lhs->lhs->type, bf16(4096, 8192)); // Ref h
}

TEST(Sema, DefineOverridesConstant) {
  Compiled c = compile(kDesignKernels, {{"M", "8192"}});
  ASSERT_TRUE(c.module) << c.diags;
  EXPECT_EQ(c.module->consts[0].value, 8192);
  EXPECT_TRUE(c.module->consts[0].overridden);
  EXPECT_EQ(c.module->kernels[0].params[0].type, bf16(8192, 7168));
  EXPECT_EQ(c.module->kernels[1].resultType, bf16(8192, 2048));
}

TEST(Sema, AnyPositiveRowCount) {
  for (const char *m : {"1", "7", "640"}) {
    Compiled c = compile(kDesignKernels, {{"M", m}});
    ASSERT_TRUE(c.module) << c.diags;
    EXPECT_EQ(c.module->kernels[0].resultType.rows, std::stoll(m));
  }
}

TEST(Sema, NoMultipleOf128Requirement) {
  Compiled c = compile("kernel k(X: bf16[3, 5], W: bf16[5, 7]) -> bf16[3, 7] {\n  return X @ W\n}\n");
  EXPECT_TRUE(c.module) << c.diags;
}

TEST(Sema, TransposeAndUnaryTypes) {
  Compiled c = compile("kernel k(X: f32[3, 5], W: f32[3, 7]) -> f32[7, 5] {\n"
                       "  a = transpose(W) @ X\n  b = relu(exp(gelu(a)))\n  return b + a * a\n}\n");
  ASSERT_TRUE(c.module) << c.diags;
  EXPECT_EQ(c.module->kernels[0].body[0].value->lhs->type, (TensorType{DType::F32, 7, 3}));
  EXPECT_EQ(c.module->kernels[0].resultType, (TensorType{DType::F32, 7, 5}));
}

TEST(Sema, BroadcastingColumnsRowsAndNumbers) {
  Compiled c = compile("kernel k(X: bf16[6, 5], b: bf16[5], c: bf16[6, 1]) -> bf16[6, 5] {\n"
                       "  s = sum(X, axis=1)\n  r = X + b\n  q = c * b\n  return X / s + r * 0.5 - q\n}\n");
  ASSERT_TRUE(c.module) << c.diags;
  const Kernel &k = c.module->kernels[0];
  EXPECT_EQ(k.params[1].type, (TensorType{DType::BF16, 1, 5}));
  EXPECT_EQ(k.body[0].value->type, (TensorType{DType::BF16, 6, 1}));
  EXPECT_EQ(k.body[1].value->type, (TensorType{DType::BF16, 6, 5}));
  EXPECT_EQ(k.body[2].value->type, (TensorType{DType::BF16, 6, 5})); // an outer broadcast
  EXPECT_EQ(k.resultType, (TensorType{DType::BF16, 6, 5}));
}

TEST(Sema, ReductionOverRowsIsATransposedColumnReduction) {
  Compiled c = compile("kernel k(X: f32[6, 5]) -> f32[1, 5] {\n  return max(X, axis=0)\n}\n");
  ASSERT_TRUE(c.module) << c.diags;
  const Expr &e = *c.module->kernels[0].returnStmt().value;
  EXPECT_EQ(e.kind, ExprKind::Transpose);
  EXPECT_EQ(e.lhs->kind, ExprKind::Reduce);
  EXPECT_EQ(e.lhs->type, (TensorType{DType::F32, 5, 1}));
}

TEST(Sema, HeadsGroupOverMatmulAndElementwise) {
  Compiled c = compile("kernel k(Q: bf16[8, 7, 64], K: bf16[2, 7, 64], W: bf16[64, 64]) -> bf16[8, 7, 64] {\n"
                       "  s = softmax(causal(Q @ K.T * 0.125))\n  return s @ (K @ W)\n}\n");
  ASSERT_TRUE(c.module) << c.diags;
  const Kernel &k = c.module->kernels[0];
  EXPECT_EQ(k.params[1].type, (TensorType{DType::BF16, 7, 64, 2}));
  const Expr &ret = *k.returnStmt().value;
  EXPECT_EQ(ret.type, (TensorType{DType::BF16, 7, 64, 8}));
  EXPECT_EQ(ret.lhs->type, (TensorType{DType::BF16, 7, 7, 8}));  // s
  EXPECT_EQ(ret.rhs->type, (TensorType{DType::BF16, 7, 64, 2})); // K @ W: a 2-D weight serves every head
}

TEST(Sema, AxesOfAValueWithHeads) {
  auto typeOf = [](const std::string &expr, const std::string &result) {
    Compiled c = compile("kernel k(X: f32[3, 6, 5]) -> f32" + result + " {\n  return " + expr + "\n}\n");
    EXPECT_TRUE(c.module) << c.diags;
    return c.module ? c.module->kernels[0].returnStmt().value->type : TensorType{};
  };
  EXPECT_EQ(typeOf("sum(X, axis=2)", "[3, 6, 1]"), (TensorType{DType::F32, 6, 1, 3}));
  EXPECT_EQ(typeOf("sum(X, axis=-1)", "[3, 6, 1]"), (TensorType{DType::F32, 6, 1, 3}));
  EXPECT_EQ(typeOf("max(X, axis=1)", "[3, 1, 5]"), (TensorType{DType::F32, 1, 5, 3}));
  EXPECT_EQ(typeOf("max(X, axis=-2)", "[3, 1, 5]"), (TensorType{DType::F32, 1, 5, 3}));
  EXPECT_EQ(typeOf("X.T", "[3, 5, 6]"), (TensorType{DType::F32, 5, 6, 3}));
}

TEST(Sema, FunctionsAreInlinedWithFreshLocals) {
  Compiled c = compile("fn twice(x, s=2) {\n  h = x * s\n  return h + h\n}\n"
                       "kernel k(X: bf16[4, 4]) -> bf16[4, 4] {\n  h = X\n  return twice(h @ X) + twice(X, s=3)\n}\n");
  ASSERT_TRUE(c.module) << c.diags;
  const Kernel &k = c.module->kernels[0];
  std::vector<std::string> names;
  for (const Stmt &s : k.body)
    names.push_back(s.name);
  EXPECT_EQ(names, (std::vector<std::string>{"h", "twice_x_1", "twice_h_1", "twice_h_2", ""}));
  EXPECT_DOUBLE_EQ(k.body[3].value->rhs->number, 3.0);
}

TEST(SemaErrors, ReductionAxisAndArguments) {
  auto diagsOf = [](const std::string &expr) {
    return compile("kernel k(X: bf16[4, 8]) -> bf16[4, 1] {\n  return " + expr + "\n}\n").diags;
  };
  EXPECT_NE(diagsOf("sum(X, axis=2)").find("t.tsl:2:22: error: axis 2 is out of range"), std::string::npos);
  EXPECT_NE(diagsOf("sum(X, axis=3)").find("t.tsl:2:22: error: axis 3 is out of range"), std::string::npos);
  EXPECT_NE(diagsOf("sum(X)").find("t.tsl:2:10: error: 'sum' needs an axis"), std::string::npos);
  EXPECT_NE(diagsOf("sum(X, axis=0.5)").find("error: the axis of 'sum' must be an integer"), std::string::npos);
  EXPECT_NE(diagsOf("sum(X, dim=1)").find("error: 'sum' has no argument 'dim'"), std::string::npos);
}

TEST(SemaErrors, ErrorInsideAPreludeFunctionNotesTheCall) {
  Compiled c = compile("kernel k(X: bf16[4, 8], g: bf16[4]) -> bf16[4, 8] {\n  return rmsnorm(X, g)\n}\n");
  EXPECT_NE(c.diags.find("<prelude>:"), std::string::npos) << c.diags;
  EXPECT_NE(c.diags.find("do not broadcast"), std::string::npos) << c.diags;
  EXPECT_NE(c.diags.find("t.tsl:2:10: note: in the call to 'rmsnorm' here"), std::string::npos) << c.diags;
}

TEST(Sema, TransposedOutput) {
  Compiled c = compile("const M = 256\nkernel k(X: bf16[M, 128], U: bf16[128, 64], V: bf16[64, 512]) -> bf16[512, M] {\n"
                       "  return (X @ U @ V).T\n}\n");
  ASSERT_TRUE(c.module) << c.diags;
  EXPECT_EQ(c.module->kernels[0].returnStmt().value->kind, ExprKind::Transpose);
}

TEST(Sema, ConstantsMayBeUsedBeforeTheirDefinition) {
  Compiled c = compile("kernel k(X: bf16[M, 8]) -> bf16[M, 8] {\n  return X\n}\nconst M = 3\n");
  EXPECT_TRUE(c.module) << c.diags;
}

//===----------------------------------------------------------------------===//
// -D errors (no source location: `tessel: error:`)
//===----------------------------------------------------------------------===//

TEST(SemaDefines, UnknownNameListsKnownConstants) {
  Compiled c = compile(kSmall, {{"N", "5"}});
  EXPECT_FALSE(c.module);
  EXPECT_EQ(c.diags, "tessel: error: -D N=5: no constant named 'N' in the file; known constants: 'M', 'K'\n");
}

TEST(SemaDefines, UnknownNameSuggestsClosest) {
  Compiled c = compile(kSmall, {{"Mm", "5"}});
  EXPECT_NE(c.diags.find("no constant named 'Mm' in the file (did you mean 'M'?)"), std::string::npos) << c.diags;
}

TEST(SemaDefines, FileWithoutConstants) {
  Compiled c = compile("kernel k(X: bf16[4, 8]) -> bf16[4, 8] {\n  return X\n}\n", {{"M", "5"}});
  EXPECT_NE(c.diags.find("the file defines no constants"), std::string::npos) << c.diags;
}

TEST(SemaDefines, BadValues) {
  EXPECT_NE(compile(kSmall, {{"M", "abc"}}).diags.find("-D M=abc: 'abc' is not an integer"), std::string::npos);
  EXPECT_NE(compile(kSmall, {{"M", ""}}).diags.find("is not an integer"), std::string::npos);
  EXPECT_NE(compile(kSmall, {{"M", "4.5"}}).diags.find("is not an integer"), std::string::npos);
  EXPECT_NE(compile(kSmall, {{"M", "0"}}).diags.find("-D M=0: the value must be positive"), std::string::npos);
  EXPECT_NE(compile(kSmall, {{"M", "-3"}}).diags.find("-D M=-3: the value must be positive"), std::string::npos);
  EXPECT_NE(compile(kSmall, {{"M", "99999999999999999999999"}}).diags.find("the value is too large"),
            std::string::npos);
  EXPECT_NE(compile(kSmall, {{"M", "16777217"}}).diags.find("the value is too large"), std::string::npos);
  EXPECT_TRUE(compile(kSmall, {{"M", "16777216"}}).module);
}

TEST(SemaDefines, LastDefineWins) {
  Compiled c = compile(kSmall, {{"M", "5"}, {"M", "6"}});
  ASSERT_TRUE(c.module) << c.diags;
  EXPECT_EQ(c.module->kernels[0].resultType.rows, 6);
}

//===----------------------------------------------------------------------===//
// Type and name errors
//===----------------------------------------------------------------------===//

TEST(SemaErrors, InnerDimensionsDiffer) {
  Compiled c = compile("kernel k(X: bf16[4096, 7168], U: bf16[7186, 4096]) -> bf16[4096, 4096] {\n"
                       "  return X @ U\n}\n");
  EXPECT_EQ(c.diags, "t.tsl:2:12: error: inner dimensions differ: X is [4096 x 7168], U is [7186 x 4096]\n"
                     "  return X @ U\n"
                     "           ^\n");
}

TEST(SemaErrors, InnerDimensionsNameSubexpressionsAndSuggestTranspose) {
  Compiled c = compile("kernel k(X: bf16[4, 8], U: bf16[8, 16], V: bf16[32, 16]) -> bf16[4, 32] {\n"
                       "  return X @ U @ V\n}\n");
  EXPECT_NE(c.diags.find("t.tsl:2:16: error: inner dimensions differ: X @ U is [4 x 16], V is [32 x 16]; "
                         "did you mean 'X @ U @ V.T'?"),
            std::string::npos)
      << c.diags;
}

TEST(SemaErrors, ElementwiseShapeMismatch) {
  Compiled c = compile("kernel k(X: bf16[4, 8], Y: bf16[4, 9]) -> bf16[4, 8] {\n  return X + Y\n}\n");
  EXPECT_NE(c.diags.find("t.tsl:2:12: error: operands of elementwise '+' have shapes that do not broadcast: "
                         "X is [4 x 8], Y is [4 x 9]"),
            std::string::npos)
      << c.diags;
}

TEST(SemaErrors, MixedDTypes) {
  Compiled c = compile("kernel k(X: bf16[4, 8], Y: f32[4, 8]) -> bf16[4, 8] {\n  return X * Y\n}\n");
  EXPECT_NE(c.diags.find("t.tsl:2:12: error: operands of '*' have different element types: X is bf16[4 x 8], "
                         "Y is f32[4 x 8]"),
            std::string::npos)
      << c.diags;
}

TEST(SemaErrors, ReturnTypeMismatchNamesBoth) {
  Compiled c = compile("kernel k(X: bf16[4, 8]) -> bf16[4, 4] {\n  return X\n}\n");
  EXPECT_NE(c.diags.find("t.tsl:2:10: error: kernel 'k' returns bf16[4 x 8] but its declared result type is "
                         "bf16[4 x 4]"),
            std::string::npos)
      << c.diags;
  c = compile("kernel k(X: bf16[4, 8]) -> f32[4, 8] {\n  return X\n}\n");
  EXPECT_NE(c.diags.find("returns bf16[4 x 8] but its declared result type is f32[4 x 8]"), std::string::npos);
  c = compile("kernel k(X: bf16[4, 8], U: bf16[8, 2]) -> bf16[2, 4] {\n  return X @ U\n}\n");
  EXPECT_NE(c.diags.find("did you mean 'return (X @ U).T'?"), std::string::npos) << c.diags;
}

TEST(SemaErrors, UndeclaredNameSuggests) {
  Compiled c = compile("kernel k(Xa: bf16[4, 8]) -> bf16[4, 8] {\n  return Xb\n}\n");
  EXPECT_NE(c.diags.find("t.tsl:2:10: error: use of undeclared name 'Xb'; did you mean 'Xa'?"), std::string::npos)
      << c.diags;
}

TEST(SemaErrors, UseBeforeAssignment) {
  Compiled c = compile("kernel k(X: bf16[4, 8]) -> bf16[4, 8] {\n  g = h\n  h = X\n  return g\n}\n");
  EXPECT_NE(c.diags.find("t.tsl:2:7: error: 'h' is used before it is assigned"), std::string::npos) << c.diags;
  EXPECT_NE(c.diags.find("t.tsl:3:3: note: 'h' is assigned here"), std::string::npos) << c.diags;
  EXPECT_EQ(countErrors(c.diags), 1u) << c.diags; // `return g` is poisoned, not reported again
}

TEST(SemaErrors, ConstantUsedAsValue) {
  Compiled c = compile("const M = 4\nkernel k(X: bf16[M, 8]) -> bf16[4, 8] {\n  return M\n}\n");
  EXPECT_NE(c.diags.find("'M' is a constant: constants may only be used as dimensions"), std::string::npos);
}

TEST(SemaErrors, Redefinitions) {
  Compiled c = compile("const M = 4\nconst M = 8\nkernel k(X: bf16[M, 8]) -> bf16[M, 8] {\n  return X\n}\n");
  EXPECT_NE(c.diags.find("t.tsl:2:7: error: redefinition of constant 'M'"), std::string::npos) << c.diags;
  EXPECT_NE(c.diags.find("t.tsl:1:7: note: the previous definition of 'M' is here"), std::string::npos);

  c = compile("kernel k(X: bf16[4, 8], X: bf16[4, 8]) -> bf16[4, 8] {\n  return X\n}\n");
  EXPECT_NE(c.diags.find("t.tsl:1:25: error: redefinition of parameter 'X' of kernel 'k'"), std::string::npos);
  EXPECT_NE(c.diags.find("t.tsl:1:10: note: the previous definition of 'X' is here"), std::string::npos);

  c = compile("kernel k(X: bf16[4, 8]) -> bf16[4, 8] {\n  h = X\n  h = X\n  return h\n}\n");
  EXPECT_NE(c.diags.find("t.tsl:3:3: error: redefinition of 'h'"), std::string::npos) << c.diags;

  c = compile("kernel k(X: bf16[4, 8]) -> bf16[4, 8] {\n  X = X\n  return X\n}\n");
  EXPECT_NE(c.diags.find("t.tsl:2:3: error: redefinition of 'X'"), std::string::npos) << c.diags;

  c = compile("kernel k(X: bf16[4, 8]) -> bf16[4, 8] {\n  return X\n}\nkernel k(X: bf16[4, 8]) -> bf16[4, 8] {\n"
              "  return X\n}\n");
  EXPECT_NE(c.diags.find("t.tsl:4:8: error: redefinition of kernel 'k'"), std::string::npos) << c.diags;
  EXPECT_NE(c.diags.find("t.tsl:1:8: note: the previous definition of 'k' is here"), std::string::npos);
}

TEST(SemaErrors, DimensionsMustBePositiveAndBounded) {
  Compiled c = compile("kernel k(X: bf16[0, 8]) -> bf16[4, 8] {\n  return X\n}\n");
  EXPECT_NE(c.diags.find("t.tsl:1:18: error: dimension 0 must be positive"), std::string::npos) << c.diags;
  c = compile("const M = 0\nkernel k(X: bf16[M, 8]) -> bf16[M, 8] {\n  return X\n}\n");
  EXPECT_NE(c.diags.find("t.tsl:1:7: error: constant 'M' is 0: constants are dimensions and must be positive"),
            std::string::npos)
      << c.diags;
  EXPECT_EQ(countErrors(c.diags), 1u) << c.diags; // uses of M are not reported again
  c = compile("kernel k(X: bf16[99999999, 8]) -> bf16[4, 8] {\n  return X\n}\n");
  EXPECT_NE(c.diags.find("dimension 99999999 is too large: dimensions may be at most 16777216"), std::string::npos);
}

TEST(SemaErrors, UnknownConstantInShape) {
  Compiled c = compile("const MM = 4\nkernel k(X: bf16[M, 8]) -> bf16[4, 8] {\n  return X\n}\n");
  EXPECT_NE(c.diags.find("t.tsl:2:18: error: unknown constant 'M' in a shape; did you mean 'MM'?"), std::string::npos)
      << c.diags;
  c = compile("kernel k(X: bf16[N, 8]) -> bf16[4, 8] {\n  return X\n}\n");
  EXPECT_NE(c.diags.find("unknown constant 'N' in a shape; define it at the top level: 'const N = <positive integer>'"),
            std::string::npos)
      << c.diags;
}

TEST(SemaErrors, ErrorsDoNotCascade) {
  // One bad parameter shape: uses of the parameter are poisoned silently.
  Compiled c = compile("kernel k(X: bf16[Q, 8], W: bf16[8, 8]) -> bf16[4, 8] {\n  h = X @ W\n  g = h * h\n"
                       "  return g\n}\n");
  EXPECT_EQ(countErrors(c.diags), 1u) << c.diags;
}

TEST(SemaErrors, SeveralIndependentErrorsAreAllReported) {
  Compiled c = compile("kernel k(X: bf16[4, 8]) -> bf16[4, 8] {\n  a = X @ X\n  b = X + X.T\n  return X\n}\n");
  EXPECT_EQ(countErrors(c.diags), 2u) << c.diags;
}

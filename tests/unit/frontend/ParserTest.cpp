//===- tests/unit/frontend/ParserTest.cpp - structure, precedence, syntax errors -===//
#include "FrontendTestUtil.h"

#include "frontend/Parser.h"
#include "frontend/Sema.h"

#include <fmt/format.h>

using namespace tessel;
using namespace tessel::ast;
using namespace tessel::testutil;

namespace {

/// Parses `return EXPR` in a kernel whose params are all bf16[8, 8] and
/// renders the return expression with explicit structure.
std::string structure(const Expr &e) {
  switch (e.kind) {
  case ExprKind::Ref:
    return e.name;
  case ExprKind::MatMul:
    return "(" + structure(*e.lhs) + " @ " + structure(*e.rhs) + ")";
  case ExprKind::Binary:
    return "(" + structure(*e.lhs) + " " + binaryOpName(e.binOp) + " " + structure(*e.rhs) + ")";
  case ExprKind::Unary:
    return actFnName(e.unaryFn).str() + "(" + structure(*e.lhs) + ")";
  case ExprKind::Transpose:
    return "T(" + structure(*e.lhs) + ")";
  case ExprKind::Number:
    return fmt::format("{}", e.number);
  case ExprKind::Reduce:
    return std::string(reduceOpName(e.reduceOp)) + "(" + structure(*e.lhs) + ")";
  case ExprKind::Call:
    return e.name + "(...)";
  case ExprKind::Causal:
    return "causal(" + structure(*e.lhs) + ")";
  case ExprKind::MergeHeads:
    return "merge_heads(" + structure(*e.lhs) + ")";
  }
  return "?";
}

std::string parseReturn(const std::string &expr) {
  Compiled c = compile("kernel k(A: bf16[8, 8], B: bf16[8, 8], C: bf16[8, 8], D: bf16[8, 8]) -> bf16[8, 8] {\n"
                       "  return " + expr + "\n}\n");
  if (!c.module)
    return "ERROR: " + c.diags;
  return structure(*c.module->kernels[0].body.back().value);
}

} // namespace

TEST(Parser, MatMulIsLeftAssociative) { EXPECT_EQ(parseReturn("A @ B @ C"), "((A @ B) @ C)"); }

TEST(Parser, MatMulBindsTighterThanMul) {
  EXPECT_EQ(parseReturn("A * B @ C"), "(A * (B @ C))");
  EXPECT_EQ(parseReturn("A @ B * C"), "((A @ B) * C)");
}

TEST(Parser, MulBindsTighterThanAdd) {
  EXPECT_EQ(parseReturn("A + B * C"), "(A + (B * C))");
  EXPECT_EQ(parseReturn("A * B + C * D"), "((A * B) + (C * D))");
  EXPECT_EQ(parseReturn("A + B + C"), "((A + B) + C)");
}

TEST(Parser, ParenthesesOverridePrecedence) {
  EXPECT_EQ(parseReturn("A @ (B @ C)"), "(A @ (B @ C))");
  EXPECT_EQ(parseReturn("(A + B) * C"), "((A + B) * C)");
  EXPECT_EQ(parseReturn("((((A))))"), "A");
}

TEST(Parser, PostfixTransposeBindsTightest) {
  EXPECT_EQ(parseReturn("A @ B.T"), "(A @ T(B))");
  EXPECT_EQ(parseReturn("(A @ B).T"), "T((A @ B))");
  EXPECT_EQ(parseReturn("A.T.T"), "T(T(A))");
  EXPECT_EQ(parseReturn("silu(A).T"), "T(silu(A))");
}

TEST(Parser, FunctionCalls) {
  EXPECT_EQ(parseReturn("silu(A) * gelu(B) + relu(C) * exp(D)"),
            "((silu(A) * gelu(B)) + (relu(C) * exp(D)))");
  EXPECT_EQ(parseReturn("transpose(A @ B)"), "T((A @ B))");
  EXPECT_EQ(parseReturn("silu(silu(A))"), "silu(silu(A))");
}

TEST(Parser, NewlinesInsideParenthesesAndAfterOperators) {
  EXPECT_EQ(parseReturn("(A @\n B\n @ C)"), "((A @ B) @ C)");
  EXPECT_EQ(parseReturn("A +\n\n B"), "(A + B)");
  EXPECT_EQ(parseReturn("silu(\n A\n)"), "silu(A)");
}

TEST(Parser, SemicolonsSeparateStatements) {
  Compiled c = compile("kernel k(A: bf16[8, 8]) -> bf16[8, 8] { h = A; g = h @ h; return g }");
  ASSERT_TRUE(c.module) << c.diags;
  const Kernel &k = c.module->kernels[0];
  ASSERT_EQ(k.body.size(), 3u);
  EXPECT_EQ(k.body[0].name, "h");
  EXPECT_EQ(k.body[1].name, "g");
  EXPECT_TRUE(k.body[2].isReturn());
}

TEST(Parser, ParamsMaySpanLinesAndEndWithAComma) {
  Compiled c = compile("kernel k(\n  A: bf16[8,\n 8],\n  B: f32[8, 8],\n)\n -> bf16[8, 8]\n{\n  return A\n}\n");
  ASSERT_TRUE(c.module) << c.diags;
  const Kernel &k = c.module->kernels[0];
  ASSERT_EQ(k.params.size(), 2u);
  EXPECT_EQ(k.params[1].name, "B");
  EXPECT_EQ(k.params[1].dtype, DType::F32);
}

TEST(Parser, SeveralKernelsAndConsts) {
  Compiled c = compile(kDesignKernels);
  ASSERT_TRUE(c.module) << c.diags;
  ASSERT_EQ(c.module->kernels.size(), 2u);
  EXPECT_EQ(c.module->kernels[0].name, "up_proj");
  EXPECT_EQ(c.module->kernels[1].name, "mlp");
  ASSERT_EQ(c.module->consts.size(), 1u);
  EXPECT_EQ(c.module->consts[0].name, "M");
  EXPECT_EQ(c.module->consts[0].value, 4096);
  EXPECT_NE(c.module->findKernel("mlp"), nullptr);
  EXPECT_EQ(c.module->findKernel("nope"), nullptr);
}

TEST(Parser, DimsAreLiteralsOrConstNames) {
  Compiled c = compile("const M = 7\nkernel k(A: bf16[M, 128]) -> bf16[M, 128] {\n  return A\n}\n");
  ASSERT_TRUE(c.module) << c.diags;
  const Param &p = c.module->kernels[0].params[0];
  EXPECT_EQ(p.rows.constName, "M");
  EXPECT_EQ(p.cols.constName, "");
  EXPECT_EQ(p.cols.literal, 128);
}

TEST(Parser, LocationsPointAtFirstTokenAndOperator) {
  Compiled c = compile("kernel k(A: bf16[8, 8]) -> bf16[8, 8] {\n  return A @ A\n}\n");
  ASSERT_TRUE(c.module) << c.diags;
  const Expr &e = *c.module->kernels[0].body[0].value;
  auto lc = c.sm->getLineAndColumn(e.loc);
  EXPECT_EQ(lc, std::make_pair(2u, 10u));
  lc = c.sm->getLineAndColumn(e.opLoc);
  EXPECT_EQ(lc, std::make_pair(2u, 12u));
}

TEST(Parser, ExprTextRoundTripsPrecedence) {
  Compiled c = compile("kernel k(A: bf16[8, 8], B: bf16[8, 8]) -> bf16[8, 8] {\n"
                       "  return (A + B) * silu(A @ (B @ A)).T\n}\n");
  ASSERT_TRUE(c.module) << c.diags;
  EXPECT_EQ(frontend::exprText(*c.module->kernels[0].body[0].value), "(A + B) * silu(A @ (B @ A)).T");
}

//===----------------------------------------------------------------------===//
// Syntax errors: each located, with the caret line.
//===----------------------------------------------------------------------===//

TEST(ParserErrors, UnterminatedBodyPointsAtBrace) {
  Compiled c = compile("kernel k(A: bf16[8, 8]) -> bf16[8, 8] {\n  return A\n");
  EXPECT_FALSE(c.module);
  EXPECT_EQ(c.diags, "t.tsl:1:39: error: unterminated body of kernel 'k': missing '}' before the end of the file\n"
                     "kernel k(A: bf16[8, 8]) -> bf16[8, 8] {\n"
                     "                                      ^\n");
}

TEST(ParserErrors, UnterminatedParenPointsAtOpener) {
  Compiled c = compile("kernel k(A: bf16[8, 8]) -> bf16[8, 8] {\n  return silu(A");
  EXPECT_NE(c.diags.find("t.tsl:2:14: error: unterminated call to 'silu': missing ')' before the end of the file"),
            std::string::npos)
      << c.diags;
}

TEST(ParserErrors, UnterminatedParamListAndShape) {
  Compiled c = compile("kernel k(A: bf16[8, 8],\n");
  EXPECT_NE(c.diags.find("t.tsl:1:9: error: unterminated parameter list: missing ')'"), std::string::npos) << c.diags;
  c = compile("kernel k(A: bf16[8, 8");
  EXPECT_NE(c.diags.find("t.tsl:1:17: error: unterminated shape: missing ']'"), std::string::npos) << c.diags;
}

TEST(ParserErrors, WrongCloserNamesOpener) {
  Compiled c = compile("kernel k(A: bf16[8, 8]) -> bf16[8, 8] {\n  return (A\n}\n");
  EXPECT_NE(c.diags.find("t.tsl:3:1: error: expected ')' to close the parenthesised expression, found '}'"),
            std::string::npos)
      << c.diags;
  EXPECT_NE(c.diags.find("t.tsl:2:10: note: the '(' opened here"), std::string::npos) << c.diags;
}

TEST(ParserErrors, UnknownFunctionSuggestsClosest) {
  Compiled c = compile("kernel k(A: bf16[8, 8]) -> bf16[8, 8] {\n  return slu(A)\n}\n");
  EXPECT_NE(c.diags.find("t.tsl:2:10: error: unknown function 'slu'; did you mean 'silu'?"), std::string::npos)
      << c.diags;
  c = compile("kernel k(A: bf16[8, 8]) -> bf16[8, 8] {\n  return frobnicate(A)\n}\n");
  EXPECT_NE(c.diags.find("unknown function 'frobnicate'; the functions are 'silu', 'gelu', 'relu', 'exp', "),
            std::string::npos)
      << c.diags;
  EXPECT_NE(c.diags.find("'transpose', 'merge_heads', 'sum', 'max', 'min', 'mean', 'causal', 'neg', 'where', 'softmax', 'rmsnorm'"),
            std::string::npos)
      << c.diags;
}

TEST(ParserErrors, StatementAfterReturn) {
  Compiled c = compile("kernel k(A: bf16[8, 8]) -> bf16[8, 8] {\n  return A\n  h = A\n  return h\n}\n");
  EXPECT_EQ(countErrors(c.diags), 1u) << c.diags;
  EXPECT_NE(c.diags.find("t.tsl:3:3: error: statement after 'return'"), std::string::npos) << c.diags;
}

TEST(ParserErrors, MissingReturn) {
  Compiled c = compile("kernel k(A: bf16[8, 8]) -> bf16[8, 8] {\n  h = A\n}\n");
  EXPECT_NE(c.diags.find("t.tsl:3:1: error: kernel 'k' has no 'return'"), std::string::npos) << c.diags;
}

TEST(ParserErrors, EmptyFileAndCommentsOnly) {
  EXPECT_NE(compile("").diags.find("t.tsl:1:1: error: no kernel in file"), std::string::npos);
  Compiled c = compile("# nothing\nconst M = 3\n");
  EXPECT_NE(c.diags.find("error: no kernel in file"), std::string::npos) << c.diags;
  EXPECT_EQ(c.errors, 1u);
}

TEST(ParserErrors, ShapesAreTwoDimensionalWithOptionalHeads) {
  Compiled c = compile("kernel k(A: bf16[8]) -> bf16[1, 8] {\n  return A\n}\n");
  EXPECT_EQ(c.errors, 0u) << c.diags; // a row vector
  c = compile("kernel k(A: bf16[2, 8, 4]) -> bf16[2, 8, 4] {\n  return A\n}\n");
  EXPECT_EQ(c.errors, 0u) << c.diags; // two heads of [8, 4]
  c = compile("kernel k(A: bf16[8, 8, 8, 8]) -> bf16[8, 8] {\n  return A\n}\n");
  EXPECT_NE(c.diags.find("t.tsl:1:25: error: too many dimensions"), std::string::npos) << c.diags;
}

TEST(ParserErrors, UnknownDType) {
  Compiled c = compile("kernel k(A: f16[8, 8]) -> bf16[8, 8] {\n  return A\n}\n");
  EXPECT_NE(c.diags.find("t.tsl:1:13: error: unknown element type 'f16': expected 'bf16' or 'f32'"),
            std::string::npos)
      << c.diags;
}

TEST(ParserErrors, NumberAsValue) {
  Compiled c = compile("kernel k(A: bf16[8, 8]) -> bf16[8, 8] {\n  return 2\n}\n");
  EXPECT_NE(c.diags.find("t.tsl:2:10: error: a number is not a value of the kernel"), std::string::npos) << c.diags;
}

TEST(Parser, ArithmeticPrecedence) {
  EXPECT_EQ(parseReturn("A - B - C"), "((A - B) - C)");
  EXPECT_EQ(parseReturn("A / B * C"), "((A / B) * C)");
  EXPECT_EQ(parseReturn("A - B * 0.5"), "(A - (B * 0.5))");
  EXPECT_EQ(parseReturn("-A @ B"), "((A @ B) * -1)");
  EXPECT_EQ(parseReturn("A * -2"), "(A * -2)");
  EXPECT_EQ(parseReturn("A + B < C * D"), "((A + B) < (C * D))");
}

TEST(Parser, ReductionsAndFunctions) {
  EXPECT_EQ(parseReturn("A / sum(A, axis=1)"), "(A / sum(A))");
  EXPECT_EQ(parseReturn("A - max(A, axis=-1)"), "(A - max(A))");
  EXPECT_EQ(parseReturn("A - mean(A, axis=0)"), "(A - T(mean(T(A))))");
  EXPECT_EQ(parseReturn("where(A < B, A, B)"), "((where_mask_1 * A) + ((1 - where_mask_1) * B))");
  EXPECT_EQ(parseReturn("neg(A)"), "(A * -1)");
}

TEST(ParserErrors, ComparisonsDoNotChain) {
  Compiled c = compile("kernel k(A: bf16[8, 8]) -> bf16[8, 8] {\n  return A < A < A\n}\n");
  EXPECT_NE(c.diags.find("t.tsl:2:16: error: comparisons do not chain"), std::string::npos) << c.diags;
}

TEST(ParserErrors, RecoversAtStatementBoundaries) {
  Compiled c = compile("kernel k(A: bf16[8, 8]) -> bf16[8, 8] {\n  h = A @ @\n  g = ) \n  f = A A\n  return A\n}\n");
  EXPECT_EQ(countErrors(c.diags), 3u) << c.diags;
}

TEST(ParserErrors, RecoversAtNextKernel) {
  Compiled c = compile("kernel k(A: bf16[8 8]) -> bf16[8, 8] {\n  return A\n}\n"
                       "kernel j(A: bf16[8, 8]) -> bf16[8, 8] {\n  return $\n}\n");
  EXPECT_EQ(countErrors(c.diags), 2u) << c.diags;
  EXPECT_NE(c.diags.find("t.tsl:1:20: error: expected ',' between the two dimensions, found '8'"), std::string::npos)
      << c.diags;
  EXPECT_NE(c.diags.find("t.tsl:5:10: error: unexpected character '$'"), std::string::npos) << c.diags;
}

TEST(ParserErrors, MissingBraceBeforeNextKernel) {
  Compiled c = compile("kernel k(A: bf16[8, 8]) -> bf16[8, 8] {\n  return A\n"
                       "kernel j(A: bf16[8, 8]) -> bf16[8, 8] {\n  return A\n}\n");
  EXPECT_EQ(countErrors(c.diags), 1u) << c.diags;
  EXPECT_NE(c.diags.find("t.tsl:1:39: error: unterminated body of kernel 'k': missing '}' before the next declaration"),
            std::string::npos)
      << c.diags;
  EXPECT_NE(c.diags.find("t.tsl:3:1: note: the next declaration starts here"), std::string::npos);
}

//===- tests/unit/frontend/ASTPrinterTest.cpp - the --emit=ast format -----===//
#include "FrontendTestUtil.h"

using namespace tessel;
using namespace tessel::testutil;

TEST(ASTPrinter, UpProj) {
  Compiled c = compile("const M = 4096\n"
                       "kernel up_proj(X: bf16[M, 7168], U: bf16[7168, 4096], V: bf16[4096, 18432]) -> bf16[M, 18432] {\n"
                       "  return X @ U @ V\n}\n",
                       {{"M", "640"}});
  ASSERT_TRUE(c.module) << c.diags;
  EXPECT_EQ(c.ast(), "Module\n"
                     "  Const M = 640 (from -D) @1:7\n"
                     "  Kernel up_proj -> bf16[640 x 18432] @2:8\n"
                     "    Param X : bf16[640 x 7168] @2:16\n"
                     "    Param U : bf16[7168 x 4096] @2:34\n"
                     "    Param V : bf16[4096 x 18432] @2:55\n"
                     "    Return : bf16[640 x 18432] @3:3\n"
                     "      MatMul : bf16[640 x 18432] @3:10\n"
                     "        MatMul : bf16[640 x 4096] @3:10\n"
                     "          Ref X : bf16[640 x 7168] @3:10\n"
                     "          Ref U : bf16[7168 x 4096] @3:14\n"
                     "        Ref V : bf16[4096 x 18432] @3:18\n");
}

TEST(ASTPrinter, EveryExprKind) {
  Compiled c = compile("kernel k(A: f32[2, 3], B: f32[3, 2]) -> f32[2, 2] {\n"
                       "  h = gelu(A) + transpose(B); g = exp(h @ B)\n  return relu(g * g).T\n}\n");
  ASSERT_TRUE(c.module) << c.diags;
  EXPECT_EQ(c.ast(), "Module\n"
                     "  Kernel k -> f32[2 x 2] @1:8\n"
                     "    Param A : f32[2 x 3] @1:10\n"
                     "    Param B : f32[3 x 2] @1:24\n"
                     "    Assign h : f32[2 x 3] @2:3\n"
                     "      Binary + : f32[2 x 3] @2:7\n"
                     "        Unary gelu : f32[2 x 3] @2:7\n"
                     "          Ref A : f32[2 x 3] @2:12\n"
                     "        Transpose : f32[2 x 3] @2:17\n"
                     "          Ref B : f32[3 x 2] @2:27\n"
                     "    Assign g : f32[2 x 2] @2:31\n"
                     "      Unary exp : f32[2 x 2] @2:35\n"
                     "        MatMul : f32[2 x 2] @2:39\n"
                     "          Ref h : f32[2 x 3] @2:39\n"
                     "          Ref B : f32[3 x 2] @2:43\n"
                     "    Return : f32[2 x 2] @3:3\n"
                     "      Transpose : f32[2 x 2] @3:10\n"
                     "        Unary relu : f32[2 x 2] @3:10\n"
                     "          Binary * : f32[2 x 2] @3:15\n"
                     "            Ref g : f32[2 x 2] @3:15\n"
                     "            Ref g : f32[2 x 2] @3:19\n");
}

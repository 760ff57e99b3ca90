//===- tests/unit/frontend/PartitionTest.cpp ------------------------------===//
#include "frontend/Partition.h"

#include "FrontendTestUtil.h"

using namespace tessel;
using frontend::ShardAxis;

namespace {

ast::Kernel &kernelOf(testutil::Compiled &c, const std::string &name) {
  for (ast::Kernel &k : c.module->kernels)
    if (k.name == name)
      return k;
  ADD_FAILURE() << "no kernel " << name;
  return c.module->kernels.front();
}

std::string planError(const ast::Kernel &k, int cores) {
  auto plan = frontend::planTensorParallel(k, cores);
  return plan ? "no error" : llvm::toString(plan.takeError());
}

} // namespace

TEST(Partition, ChainSplitsTheRankBetweenTheFactors) {
  testutil::Compiled c = testutil::compile(testutil::kDesignKernels);
  ASSERT_EQ(c.errors, 0u) << c.diags;
  ast::Kernel &k = kernelOf(c, "up_proj");
  auto plan = frontend::planTensorParallel(k, 2);
  ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  EXPECT_EQ(plan->form, "chain");
  EXPECT_EQ(plan->params, (std::vector<ShardAxis>{ShardAxis::None, ShardAxis::Cols, ShardAxis::Rows}));
  EXPECT_EQ(plan->describe(k), "U column-wise, V row-wise (4096 = 2 x 2048); X replicated; "
                               "AllReduce of [4096, 18432]");
  frontend::shardKernel(k, *plan);
  EXPECT_EQ(k.params[1].type.cols, 2048);
  EXPECT_EQ(k.params[2].type.rows, 2048);
  EXPECT_EQ(k.returnStmt().value->type.rows, 4096);
  EXPECT_EQ(k.returnStmt().value->type.cols, 18432);
  EXPECT_EQ(k.returnStmt().value->lhs->type.cols, 2048); // X @ U on one core
}

TEST(Partition, MlpIsColumnThenRowParallel) {
  testutil::Compiled c = testutil::compile(testutil::kDesignKernels);
  ASSERT_EQ(c.errors, 0u) << c.diags;
  ast::Kernel &k = kernelOf(c, "mlp");
  auto plan = frontend::planTensorParallel(k, 8);
  ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  EXPECT_EQ(plan->form, "mlp");
  // X Ug Vg Uu Vu Ud Vd: gate/up's last factors by columns, down's first by rows.
  EXPECT_EQ(plan->params,
            (std::vector<ShardAxis>{ShardAxis::None, ShardAxis::None, ShardAxis::Cols, ShardAxis::None,
                                    ShardAxis::Cols, ShardAxis::Rows, ShardAxis::None}));
  frontend::shardKernel(k, *plan);
  EXPECT_EQ(k.body[0].value->type.cols, 8192 / 8); // h
  EXPECT_EQ(k.returnStmt().value->type.cols, 2048);
}

TEST(Partition, DenseProductSplitsItsContraction) {
  testutil::Compiled c = testutil::compile(
      "kernel d(X: bf16[256, 1024], W: bf16[1024, 512]) -> bf16[256, 512] { return X @ W }");
  ASSERT_EQ(c.errors, 0u) << c.diags;
  auto plan = frontend::planTensorParallel(kernelOf(c, "d"), 2);
  ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  EXPECT_EQ(plan->form, "matmul");
  EXPECT_EQ(plan->params, (std::vector<ShardAxis>{ShardAxis::Cols, ShardAxis::Rows}));
}

TEST(Partition, GeluMlpThroughAnAssignment) {
  testutil::Compiled c = testutil::compile(
      "kernel g(X: bf16[64, 256], W1: bf16[256, 1024], W2: bf16[1024, 256]) -> bf16[64, 256] {\n"
      "  a = X @ W1\n  h = gelu(a)\n  return h @ W2\n}");
  ASSERT_EQ(c.errors, 0u) << c.diags;
  auto plan = frontend::planTensorParallel(kernelOf(c, "g"), 4);
  ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  EXPECT_EQ(plan->form, "mlp");
  EXPECT_EQ(plan->params, (std::vector<ShardAxis>{ShardAxis::None, ShardAxis::Cols, ShardAxis::Rows}));
}

TEST(Partition, SaysWhatCannotSplit) {
  testutil::Compiled c = testutil::compile(
      "kernel a(X: bf16[64, 384], U: bf16[384, 384], V: bf16[384, 256]) -> bf16[64, 256] { return X @ U @ V }\n"
      "kernel b(X: bf16[64, 256], Y: bf16[64, 256]) -> bf16[64, 256] { return X + Y }\n"
      "kernel t(X: bf16[64, 256], W: bf16[256, 64]) -> bf16[64, 256] { return silu(X @ W).T @ X }\n");
  ASSERT_EQ(c.errors, 0u) << c.diags;
  EXPECT_NE(planError(kernelOf(c, "a"), 5).find("the columns of U = the rows of V is 384, which does "
                                                "not divide into 5 cores"),
            std::string::npos);
  EXPECT_NE(planError(kernelOf(c, "b"), 2).find("the kernel's result is not a matrix product"),
            std::string::npos);
  EXPECT_NE(planError(kernelOf(c, "t"), 2).find("transposed"), std::string::npos);
}

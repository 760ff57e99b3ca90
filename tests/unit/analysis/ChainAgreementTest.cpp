//===- tests/unit/analysis/ChainAgreementTest.cpp - KernelCost vs ChainModel ===//
//
// The -O2 kernel of a chain reads X once, writes Y once and re-reads every
// weight once per row strip, so its exact traffic (KernelCost) equals
// ChainModel's formula, partial strips included. A SwiGLU block is not fully
// fused yet (its gate/up products and h go through HBM scratch tensors), so
// there the formula is a lower bound.
//
//===----------------------------------------------------------------------===//
#include "CompileUtil.h"

#include "compiler/ChainModel.h"
#include "passes/analysis/KernelCost.h"

#include "llvm/Support/FormatVariadic.h"

using namespace tessel;
using namespace tessel::compiler;
using namespace tessel::passes::analysis;

namespace {

/// The -O2 kernel of `source` with row strip `blockM`, or null.
std::unique_ptr<ir::Kernel> compileO2(test::Source &source, int64_t blockM, const runtime::Target &target) {
  auto kernel = source.tileIR(blockM, target);
  auto passes = passes::buildPipeline("O2");
  if (!kernel || !passes || !source.run(*kernel, *passes, target))
    return nullptr;
  return kernel;
}

std::string chainText(int64_t rows, llvm::ArrayRef<int64_t> dims) {
  std::string params = llvm::formatv("X: bf16[{0}, {1}]", rows, dims[0]);
  std::string expr = "X";
  for (size_t i = 1; i < dims.size(); ++i) {
    params += llvm::formatv(", W{0}: bf16[{1}, {2}]", i, dims[i - 1], dims[i]).str();
    expr += llvm::formatv(" @ W{0}", i).str();
  }
  return llvm::formatv("kernel chain({0}) -> bf16[{1}, {2}] {{\n  return {3}\n}\n", params, rows, dims.back(), expr);
}

void expectFormulaTraffic(const ir::Kernel &kernel, const ChainModel &model, int64_t blockM) {
  const runtime::Target &target = runtime::trn1Target();
  KernelCost cost = analyzeKernel(kernel, target);
  EXPECT_EQ(cost.spillSaveBytes + cost.spillReloadBytes, 0u);
  EXPECT_EQ(cost.flops, model.flops());
  EXPECT_EQ(cost.hbmBytes(), model.trafficBytes(blockM));
  EXPECT_DOUBLE_EQ(cost.arithmeticIntensity(), model.arithmeticIntensity(blockM));
  EXPECT_DOUBLE_EQ(cost.rooflineUs(target), model.rooflineUs(blockM, target));
}

} // namespace

TEST(ChainAgreement, XUVExamplesAtO2) {
  const runtime::Target &target = runtime::trn1Target();
  struct Example {
    const char *file;
    std::vector<int64_t> dims;
  };
  for (const Example &e : {Example{"deepseek_v3_up_proj.tsl", {7168, 4096, 18432}},
                           Example{"paper_table1_chain.tsl", {2048, 2048, 8192}}})
    for (int64_t rows : {1, 7, 200, 647, 4096})
      for (int64_t blockM : {128, 256, 512}) {
        if (blockM > (rows + 127) / 128 * 128)
          continue;
        SCOPED_TRACE(llvm::formatv("{0} M={1} m={2}", e.file, rows, blockM).str());
        test::Source source(e.file, rows);
        ASSERT_TRUE(source.valid());
        auto kernel = compileO2(source, blockM, target);
        ASSERT_TRUE(kernel);
        expectFormulaTraffic(*kernel, ChainModel::chain(rows, e.dims, 2), blockM);
      }
}

TEST(ChainAgreement, LongerChainsAtO2) {
  const runtime::Target &target = runtime::trn1Target();
  for (std::vector<int64_t> dims : {std::vector<int64_t>{384, 256, 640, 512}, std::vector<int64_t>{256, 128},
                                    std::vector<int64_t>{128, 512, 128, 384, 256}})
    for (int64_t rows : {7, 200, 647})
      for (int64_t blockM : {128, 256}) {
        std::string text = chainText(rows, dims);
        SCOPED_TRACE(text + llvm::formatv("m={0}", blockM).str());
        test::Source source(text);
        ASSERT_TRUE(source.valid());
        auto kernel = compileO2(source, blockM, target);
        ASSERT_TRUE(kernel);
        expectFormulaTraffic(*kernel, ChainModel::chain(rows, dims, 2), blockM);
      }
}

TEST(ChainAgreement, FusedSwiGLUMovesWhatTheFormulaSays) {
  const runtime::Target &target = runtime::trn1Target();
  for (int64_t rows : {7, 200, 647})
    for (int64_t blockM : {128, 256}) {
      SCOPED_TRACE(llvm::formatv("M={0} m={1}", rows, blockM).str());
      test::Source source("llama32_1b_swiglu_mlp.tsl", rows);
      ASSERT_TRUE(source.valid());
      auto kernel = compileO2(source, blockM, target);
      ASSERT_TRUE(kernel);
      ChainModel ideal(rows, {2048}, {{2048, 512}, {512, 8192}, {2048, 512}, {512, 8192}, {8192, 512}, {512, 2048}},
                       {2048}, 2);
      KernelCost cost = analyzeKernel(*kernel, target);
      EXPECT_EQ(cost.flops, ideal.flops());
      // The fused MLP kernel (fuse-siblings, fuse-epilogue, the hand-off
      // fused into the down projection) moves what the model does: X read
      // once, the weights once per strip, the output once; no intermediate.
      EXPECT_EQ(cost.hbmBytes(), ideal.trafficBytes(blockM));
    }
}

TEST(ChainAgreement, LivenessPeakIsWhatAllocatePlacesAtFullSize) {
  // Shapes too big to simulate in a unit test but cheap to compile.
  const runtime::Target &target = runtime::trn1Target();
  for (const char *file : {"deepseek_v3_up_proj.tsl", "paper_table1_chain.tsl", "llama32_1b_swiglu_mlp.tsl",
                           "dense_xw.tsl"})
    for (int64_t rows : {4096, 32767})
      for (int64_t blockM : {128, 256, 512})
        for (const char *pipeline : {"O2", "naive-fused"}) {
          SCOPED_TRACE(llvm::formatv("{0} M={1} m={2} {3}", file, rows, blockM, pipeline).str());
          test::Source source(file, rows);
          ASSERT_TRUE(source.valid());
          auto kernel = source.tileIR(blockM, target);
          ASSERT_TRUE(kernel);
          test::SplitPipeline split = test::splitAtAllocate(pipeline);
          ASSERT_TRUE(source.run(*kernel, split.beforeAllocate, target));
          KernelCost live = analyzeKernel(*kernel, target);
          ASSERT_TRUE(source.run(*kernel, split.fromAllocate, target));
          KernelCost placed = analyzeKernel(*kernel, target);
          EXPECT_EQ(live.sbufPeakBytesPerPartition, placed.sbufPeakBytesPerPartition);
          EXPECT_EQ(live.psumPeakBytesPerPartition, placed.psumPeakBytesPerPartition);
        }
}

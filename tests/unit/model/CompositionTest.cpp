//===- tests/unit/model/CompositionTest.cpp - layers, collectives, launches ===//
#include "model/Composition.h"
#include "model/Model.h"
#include "model/ModelConfig.h"

#include "passes/Pipelines.h"
#include "runtime/Target.h"

#include "gtest/gtest.h"

using namespace tessel;
using namespace tessel::model;

namespace {

KernelTiming timing(double us, double launch, double allReduceUs, double flops, double bytes) {
  KernelTiming t;
  t.kernelUs = us;
  t.launchUs = launch;
  t.allReduce.transferNs = allReduceUs * 1e3;
  t.flops = flops;
  t.hbmBytes = bytes;
  t.peakFlopsPerSec = 1e12;
  t.hbmBytesPerSec = 1e9;
  return t;
}

TEST(Composition, OneLayerIsItsKernelsCollectivesAndLaunches) {
  PhaseKernels k{timing(10, 1, 0, 100, 10), timing(20, 1, 5, 200, 20), timing(40, 1, 7, 400, 40),
                 timing(3, 1, 0, 30, 3),    timing(6, 1, 0, 60, 6),    timing(2, 1, 0, 20, 2),
                 timing(1, 1, 0, 10, 1),    timing(0.5, 1, 0, 5, 0.5), timing(0.25, 1, 0, 0, 2.5), 4};
  PhaseTime one = composePhase(k, 64, 1);
  EXPECT_DOUBLE_EQ(one.projectionsUs, 30);
  EXPECT_DOUBLE_EQ(one.mlpUs, 40);
  EXPECT_DOUBLE_EQ(one.attentionUs, 4 * 6) << "the attention kernel runs once per group and sequence";
  EXPECT_DOUBLE_EQ(one.normsUs, 2 * 2 + 2 * 1) << "two norms and two residual adds per layer";
  EXPECT_DOUBLE_EQ(one.collectivesUs, 12);
  EXPECT_DOUBLE_EQ(one.launchUs, 3 + 1 + 4) << "attention's groups share one launch";
  EXPECT_DOUBLE_EQ(one.lmHeadUs, 3 + 1 + 0.5 + 1) << "the final norm and the LM head";
  EXPECT_DOUBLE_EQ(one.embeddingUs, 0.25 + 1) << "the embedding gather, once";
  const double total = 30 + 40 + 24 + 6 + 12 + 8 + 5.5 + 1.25;
  EXPECT_DOUBLE_EQ(one.totalUs, total);
  const double flops = 700 + 4 * 60 + 2 * 20 + 2 * 10 + 5 + 30;
  EXPECT_DOUBLE_EQ(one.flops, flops);
  EXPECT_DOUBLE_EQ(one.mfu, flops / (1e12 * total * 1e-6));
  EXPECT_DOUBLE_EQ(one.mbu, (flops / 10 + 2.5) / (1e9 * total * 1e-6));
  // L layers: L times the layer; the embedding, the final norm and the LM head once.
  PhaseTime many = composePhase(k, 64, 16);
  EXPECT_DOUBLE_EQ(many.totalUs, one.embeddingUs + 16 * one.layerUs() + one.lmHeadUs);
  EXPECT_DOUBLE_EQ(many.flops, 16 * (flops - 35) + 35);
}

/// The tiny config of tests/lit/model with `layers` layers.
ModelConfig tinyConfig(int64_t layers) {
  ModelConfig c;
  c.path = c.name = "tiny";
  c.hidden = 256;
  c.intermediate = 512;
  c.heads = 4;
  c.kvHeads = 2;
  c.headDim = 64;
  c.layers = layers;
  c.vocab = 1024;
  c.activation = "silu";
  return c;
}

ModelPrediction predict(const ModelConfig &c, const runtime::Target &target, KernelRunner &runner) {
  ModelSettings s;
  s.seq = 64;
  s.tp = 2;
  s.ranks = MlpRanks{128, 128, 128};
  llvm::Expected<ModelPrediction> p = predictModel(c, s, runner);
  EXPECT_TRUE(bool(p)) << (p ? "" : llvm::toString(p.takeError()));
  return p ? std::move(*p) : ModelPrediction{};
}

const KernelTiming &kernel(const ModelPrediction &p, llvm::StringRef file) {
  for (const TimedKernel &k : p.kernels)
    if (k.kernel.fileName == file)
      return k.timing;
  ADD_FAILURE() << "no kernel " << file.str();
  static KernelTiming none;
  return none;
}

// End to end through the compiler and the simulator: a one-layer model's
// prefill is its simulated kernels plus the two AllReduces plus the LM head,
// and every further layer adds exactly one layer.
TEST(Composition, ModelOfOneLayerIsThatLayersKernelsPlusCollectives) {
  llvm::Expected<runtime::Target> target = runtime::loadTarget("trn1");
  ASSERT_TRUE(bool(target));
  KernelRunner runner(*target, 2, [](compiler::Frontend &, compiler::CompileOptions &out) {
    llvm::Expected<std::vector<std::string>> passes = passes::buildPipeline("O2");
    if (!passes)
      return llvm::consumeError(passes.takeError()), false;
    out.passes = *passes;
    return true;
  });
  ModelPrediction one = predict(tinyConfig(1), *target, runner);
  const size_t simulated = runner.simulated();
  ModelPrediction three = predict(tinyConfig(3), *target, runner);
  ASSERT_EQ(one.variants.size(), 2u);
  EXPECT_EQ(runner.simulated(), simulated) << "the layer kernels do not depend on the layer count";

  const KernelTiming &qkv = kernel(one, "qkv_M64.tsl"), &o = kernel(one, "o_proj_M64.tsl"),
                     &mlp = kernel(one, "mlp_dense_M64.tsl"), &lm = kernel(one, "lm_head_M1.tsl"),
                     &att = kernel(one, "attention_Q64_C64.tsl"), &norm = kernel(one, "rmsnorm_M64.tsl"),
                     &res = kernel(one, "residual_M64.tsl"), &finalNorm = kernel(one, "rmsnorm_M1.tsl"),
                     &embed = kernel(one, "embedding_M64.tsl");
  EXPECT_EQ(qkv.allReduce.steps, 0) << "qkv is column-parallel: no collective";
  EXPECT_EQ(att.allReduce.steps, 0) << "the heads split with qkv's columns: no collective";
  EXPECT_EQ(o.allReduce.steps, 2);
  EXPECT_EQ(mlp.allReduce.steps, 2);
  EXPECT_GT(att.kernelUs, 0);
  EXPECT_GT(norm.kernelUs, 0);
  // tiny: 2 KV heads over 2 cores, batch 1: one group per core.
  const double layer = qkv.kernelUs + att.kernelUs + o.kernelUs + mlp.kernelUs + 2 * (norm.kernelUs + res.kernelUs) +
                       o.allReduce.totalUs() + mlp.allReduce.totalUs() + qkv.launchUs + att.launchUs + o.launchUs +
                       mlp.launchUs + 2 * (norm.launchUs + res.launchUs);
  const double lmHead = embed.kernelUs + embed.launchUs + finalNorm.kernelUs + finalNorm.launchUs + lm.kernelUs +
                        lm.launchUs; // and the embedding: the parts once per phase
  EXPECT_NEAR(one.variants[0].prefill.totalUs, layer + lmHead, 1e-9);
  EXPECT_NEAR(three.variants[0].prefill.totalUs - one.variants[0].prefill.totalUs, 2 * layer, 1e-9);
  // The factorised variant differs from the dense one in the MLP only.
  const KernelTiming &fmlp = kernel(one, "mlp_factorised_M64.tsl");
  EXPECT_NEAR(one.variants[1].prefill.totalUs - one.variants[0].prefill.totalUs,
              fmlp.kernelUs + fmlp.allReduce.totalUs() + fmlp.launchUs -
                  (mlp.kernelUs + mlp.allReduce.totalUs() + mlp.launchUs),
              1e-9);
}

} // namespace

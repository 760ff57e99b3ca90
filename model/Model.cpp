//===- model/Model.cpp - A whole model's prefill and decode latency -------===//
#include "model/Model.h"

#include "runtime/Collective.h"

#include "fmt/format.h"

#include <array>
#include <set>

namespace tessel::model {
namespace {

/// One phase's kernels: the layer's at the phase's rows, the final norm and
/// the LM head at one row per sequence.
struct PhaseSources {
  LayerKernel qkv, oProj, mlp, lmHead, attention, rmsnorm, residual, finalNorm, embedding;
  std::array<const LayerKernel *, 9> all() const {
    return {&embedding, &qkv, &oProj, &mlp, &lmHead, &attention, &rmsnorm, &residual, &finalNorm};
  }
};

PhaseSources phaseSources(const ModelConfig &c, const ModelSettings &s, bool prefill,
                          const std::optional<MlpRanks> &ranks) {
  const int64_t rows = prefill ? s.prefillRows() : s.decodeRows();
  LayerKernel attention = prefill ? attentionKernel(c, s.seq, s.seq, s.batch, s.tp)
                                  : attentionKernel(c, 1, s.decodeContext(), s.batch, s.tp);
  return {qkvKernel(c, rows, s.tp),         oProjKernel(c, rows, s.tp),
          mlpKernel(c, rows, s.tp, ranks),  lmHeadKernel(c, s.decodeRows(), s.tp),
          std::move(attention),             rmsnormKernel(c, rows),
          residualKernel(c, rows),          rmsnormKernel(c, s.decodeRows()),
          embeddingKernel(c, rows)};
}

} // namespace

llvm::ArrayRef<NotModelled> notModelled() {
  static const NotModelled parts[] = {
      {"rotary_embedding", "not modelled: the rotation pairs a head's two halves, and the DSL has no column "
                           "slices yet"},
      {"qk_norms", "not modelled: Qwen3's RMSNorm of each query and key head (a per-head norm over "
                   "head_dim; small next to attention)"},
      {"logits_gather", "not modelled: the LM head's columns stay split over the cores (no all-gather "
                        "in the collective model)"},
  };
  return parts;
}

std::vector<LayerKernel> modelKernels(const ModelConfig &c, const ModelSettings &s) {
  std::vector<LayerKernel> out;
  std::set<std::string> seen;
  auto add = [&](const PhaseSources &p) {
    for (const LayerKernel *k : p.all())
      if (seen.insert(k->fileName).second)
        out.push_back(*k);
  };
  for (bool prefill : {true, false}) {
    add(phaseSources(c, s, prefill, std::nullopt));
    if (s.ranks)
      add(phaseSources(c, s, prefill, s.ranks));
  }
  return out;
}

llvm::Error checkSettings(const ModelSettings &s, const runtime::Target &target) {
  return runtime::checkCoreCount(target, s.tp);
}

llvm::Expected<ModelPrediction> predictModel(const ModelConfig &c, const ModelSettings &s, KernelRunner &runner,
                                             const KernelProgress &progress) {
  ModelPrediction pred;
  pred.config = c;
  pred.settings = s;
  const std::vector<LayerKernel> all = modelKernels(c, s);
  for (size_t i = 0; i < all.size(); ++i) {
    if (progress)
      progress(all[i], i, all.size());
    llvm::Expected<KernelTiming> t = runner.time(all[i]);
    if (!t)
      return t.takeError();
    pred.kernels.push_back({all[i], *t});
  }
  auto timing = [&](const LayerKernel &k) -> const KernelTiming & {
    for (const TimedKernel &t : pred.kernels)
      if (t.kernel.fileName == k.fileName)
        return t.timing;
    llvm_unreachable("every kernel of the phases is in modelKernels");
  };
  auto phase = [&](bool prefill, const std::optional<MlpRanks> &ranks) {
    PhaseSources p = phaseSources(c, s, prefill, ranks);
    PhaseKernels k{timing(p.qkv),       timing(p.oProj),   timing(p.mlp),      timing(p.lmHead),
                   timing(p.attention), timing(p.rmsnorm), timing(p.residual), timing(p.finalNorm),
                   timing(p.embedding), p.attention.repeats};
    return composePhase(k, prefill ? s.prefillRows() : s.decodeRows(), c.layers);
  };
  std::vector<std::optional<MlpRanks>> forms{std::nullopt};
  if (s.ranks)
    forms.push_back(s.ranks);
  for (const std::optional<MlpRanks> &ranks : forms) {
    Variant v;
    v.name = ranks ? "factorised" : "dense";
    v.ranks = ranks;
    v.prefill = phase(true, ranks);
    v.decode = phase(false, ranks);
    v.endToEndUs = v.prefill.totalUs + double(s.decodeTokens) * v.decode.totalUs;
    pred.variants.push_back(v);
  }
  pred.simulated = runner.simulated();
  return pred;
}

} // namespace tessel::model

//===- model/Model.cpp - A whole model's prefill and decode latency -------===//
#include "model/Model.h"

#include "fmt/format.h"

#include <set>

namespace tessel::model {
namespace {

/// One phase's kernels at `rows` rows (the LM head at one row per sequence).
struct PhaseSources {
  LayerKernel qkv, oProj, mlp, lmHead;
};

PhaseSources phaseSources(const ModelConfig &c, const ModelSettings &s, int64_t rows,
                          const std::optional<MlpRanks> &ranks) {
  return {qkvKernel(c, rows, s.tp), oProjKernel(c, rows, s.tp), mlpKernel(c, rows, s.tp, ranks),
          lmHeadKernel(c, s.decodeRows(), s.tp)};
}

} // namespace

llvm::ArrayRef<NotModelled> notModelled() {
  static const NotModelled parts[] = {
      {"attention", "not modelled (needs issue 36): the scores, softmax and PV over the context have no "
                    "kernel in the DSL yet"},
      {"norms", "not modelled (needs issue 36): the RMS norms (before attention, before the MLP, the "
                "final one; Qwen3's q/k norms) have no kernel in the DSL yet"},
      {"rotary_embedding", "not modelled (needs issue 36): no elementwise rotation in the DSL yet"},
      {"residual_adds", "not modelled (needs issue 36): written with the norms"},
      {"embedding_gather", "not modelled: the DSL has no gather"},
      {"logits_gather", "not modelled: the LM head's columns stay split over the cores (no all-gather "
                        "in the collective model)"},
  };
  return parts;
}

std::vector<LayerKernel> modelKernels(const ModelConfig &c, const ModelSettings &s) {
  std::vector<LayerKernel> out;
  std::set<std::string> seen;
  auto add = [&](const PhaseSources &p) {
    for (const LayerKernel *k : {&p.qkv, &p.oProj, &p.mlp, &p.lmHead})
      if (seen.insert(k->fileName).second)
        out.push_back(*k);
  };
  for (int64_t rows : {s.prefillRows(), s.decodeRows()}) {
    add(phaseSources(c, s, rows, std::nullopt));
    if (s.ranks)
      add(phaseSources(c, s, rows, s.ranks));
  }
  return out;
}

llvm::Error checkSettings(const ModelSettings &s, const runtime::Target &target) {
  if (s.tp > target.neuron_cores_per_chip)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   fmt::format("--tp {}: target '{}' has {} NeuronCores per chip; give 1 to {} "
                                               "(collectives between chips are not modelled yet)",
                                               s.tp, target.name, target.neuron_cores_per_chip,
                                               target.neuron_cores_per_chip));
  return llvm::Error::success();
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
  auto phase = [&](int64_t rows, const std::optional<MlpRanks> &ranks) {
    PhaseSources p = phaseSources(c, s, rows, ranks);
    return composePhase({timing(p.qkv), timing(p.oProj), timing(p.mlp), timing(p.lmHead)}, rows, c.layers);
  };
  std::vector<std::optional<MlpRanks>> forms{std::nullopt};
  if (s.ranks)
    forms.push_back(s.ranks);
  for (const std::optional<MlpRanks> &ranks : forms) {
    Variant v;
    v.name = ranks ? "factorised" : "dense";
    v.ranks = ranks;
    v.prefill = phase(s.prefillRows(), ranks);
    v.decode = phase(s.decodeRows(), ranks);
    v.endToEndUs = v.prefill.totalUs + double(s.decodeTokens) * v.decode.totalUs;
    pred.variants.push_back(v);
  }
  pred.simulated = runner.simulated();
  return pred;
}

} // namespace tessel::model

//===- model/ModelReport.cpp - `tessel model`'s report, text and JSON -----===//
#include "model/ModelReport.h"

#include "fmt/format.h"

namespace tessel::model {
namespace {

llvm::json::Value ranksJSON(const std::optional<MlpRanks> &r) {
  if (!r)
    return nullptr;
  return llvm::json::Object{{"gate_proj", r->gate}, {"up_proj", r->up}, {"down_proj", r->down}};
}

llvm::json::Object phaseJSON(const PhaseTime &p) {
  llvm::json::Array excludes;
  for (const NotModelled &n : notModelled())
    excludes.push_back(n.part);
  return llvm::json::Object{
      {"rows", p.rows},
      {"layers", p.layers},
      {"per_layer", llvm::json::Object{{"projections_us", p.projectionsUs},
                                       {"mlp_us", p.mlpUs},
                                       {"collectives_us", p.collectivesUs},
                                       {"launch_us", p.launchUs},
                                       {"attention_us", p.attentionUs},
                                       {"norms_us", p.normsUs},
                                       {"total_us", p.layerUs()}}},
      {"lm_head_us", p.lmHeadUs},
      {"embedding_us", p.embeddingUs},
      {"total_us", p.totalUs},
      {"excludes", std::move(excludes)},
      {"mfu", p.mfu},
      {"mbu", p.mbu}};
}

double ratio(double a, double b) { return b > 0 ? a / b : 0; }

} // namespace

llvm::json::Object predictionToJSON(const ModelPrediction &p) {
  const ModelConfig &c = p.config;
  const ModelSettings &s = p.settings;
  llvm::json::Object notModelledObj;
  for (const NotModelled &n : notModelled())
    notModelledObj[n.part] = llvm::json::Object{{"us", nullptr}, {"reason", n.reason}};
  llvm::json::Array variants;
  for (const Variant &v : p.variants)
    variants.push_back(llvm::json::Object{{"name", v.name},
                                          {"ranks", ranksJSON(v.ranks)},
                                          {"prefill", phaseJSON(v.prefill)},
                                          {"decode", phaseJSON(v.decode)},
                                          {"end_to_end_us", v.endToEndUs}});
  llvm::json::Array kernels;
  for (const TimedKernel &k : p.kernels)
    kernels.push_back(llvm::json::Object{{"file", k.kernel.fileName},
                                         {"role", k.kernel.role},
                                         {"rows", k.kernel.m},
                                         {"latency_us", k.timing.kernelUs},
                                         {"launch_us", k.timing.launchUs},
                                         {"allreduce_us", k.timing.allReduce.totalUs()},
                                         {"flops", k.timing.flops},
                                         {"hbm_bytes", k.timing.hbmBytes},
                                         {"split", k.timing.split}});
  llvm::json::Object out{
      {"model", llvm::json::Object{{"name", c.name},
                                   {"config", c.path},
                                   {"hidden_size", c.hidden},
                                   {"intermediate_size", c.intermediate},
                                   {"num_attention_heads", c.heads},
                                   {"num_key_value_heads", c.kvHeads},
                                   {"head_dim", c.headDim},
                                   {"num_hidden_layers", c.layers},
                                   {"vocab_size", c.vocab},
                                   {"hidden_act", c.activation},
                                   {"tie_word_embeddings", c.tiedEmbeddings}}},
      {"settings", llvm::json::Object{{"target", s.target},
                                      {"tp", s.tp},
                                      {"seq", s.seq},
                                      {"batch", s.batch},
                                      {"decode_tokens", s.decodeTokens},
                                      {"compile", s.compile},
                                      {"ranks_from", s.ranksFrom.empty() ? llvm::json::Value(nullptr)
                                                                         : llvm::json::Value(s.ranksFrom)}}},
      {"not_modelled", std::move(notModelledObj)},
      {"variants", std::move(variants)},
      {"kernels", std::move(kernels)},
      {"kernels_simulated", int64_t(p.simulated)}};
  if (p.variants.size() == 2) {
    const Variant &d = p.variants[0], &f = p.variants[1];
    out["speedup"] = llvm::json::Object{{"prefill", ratio(d.prefill.totalUs, f.prefill.totalUs)},
                                        {"decode", ratio(d.decode.totalUs, f.decode.totalUs)},
                                        {"end_to_end", ratio(d.endToEndUs, f.endToEndUs)}};
  }
  return out;
}

void printPredictionText(const ModelPrediction &p, llvm::raw_ostream &os) {
  const ModelConfig &c = p.config;
  const ModelSettings &s = p.settings;
  const bool both = p.variants.size() == 2;
  os << fmt::format("tessel model: {} ({}) on {}, --tp {}, kernels {}\n", c.name, c.path, s.target, s.tp,
                    s.compile)
     << fmt::format("  {} layers; hidden {}, intermediate {} ({}); {} heads, {} KV heads of {}; vocabulary {}\n",
                    c.layers, c.hidden, c.intermediate, c.activation, c.heads, c.kvHeads, c.headDim, c.vocab)
     << fmt::format("  prefill: batch {} x seq {} = {} rows; decode: {} row(s) per step, {} steps\n", s.batch,
                    s.seq, s.prefillRows(), s.decodeRows(), s.decodeTokens);
  if (both) {
    const MlpRanks &r = *p.variants[1].ranks;
    os << fmt::format("  factorised MLP: ranks gate {}, up {}, down {} (from {})\n", r.gate, r.up, r.down,
                      s.ranksFrom);
  }
  auto row = [&](llvm::StringRef label, auto value, bool speedup = false) {
    os << fmt::format("  {:<28}", label.str());
    for (const Variant &v : p.variants)
      os << fmt::format("{:>14.2f}", value(v));
    if (both && speedup)
      os << fmt::format("{:>11.3f}x", ratio(value(p.variants[0]), value(p.variants[1])));
    os << "\n";
  };
  auto phase = [&](llvm::StringRef title, PhaseTime Variant::*which) {
    os << "\n" << fmt::format("{:<30}", title.str());
    for (const Variant &v : p.variants)
      os << fmt::format("{:>14}", v.name + " us");
    os << (both ? "    speedup\n" : "\n");
    row("per layer: projections", [&](const Variant &v) { return (v.*which).projectionsUs; });
    row("           mlp", [&](const Variant &v) { return (v.*which).mlpUs; }, true);
    row("           collectives", [&](const Variant &v) { return (v.*which).collectivesUs; });
    row("           launch", [&](const Variant &v) { return (v.*which).launchUs; });
    row("           attention", [&](const Variant &v) { return (v.*which).attentionUs; });
    row("           norms, residuals", [&](const Variant &v) { return (v.*which).normsUs; });
    row("  layer (modelled parts)", [&](const Variant &v) { return (v.*which).layerUs(); }, true);
    row("embedding gather", [&](const Variant &v) { return (v.*which).embeddingUs; });
    row(fmt::format("total: {} layers and the rest", c.layers),
        [&](const Variant &v) { return (v.*which).totalUs; }, true);
    os << fmt::format("  {:<28}", "MFU / MBU");
    for (const Variant &v : p.variants)
      os << fmt::format("{:>14}", fmt::format("{:.1f}% / {:.1f}%", 100 * (v.*which).mfu, 100 * (v.*which).mbu));
    os << "\n";
  };
  phase("prefill (time to first token)", &Variant::prefill);
  phase("decode (time per output token)", &Variant::decode);
  os << "\n";
  row(fmt::format("end to end (+{} steps)", s.decodeTokens), [&](const Variant &v) { return v.endToEndUs; },
      true);
  os << "\n  The totals exclude what is not modelled yet:\n";
  for (const NotModelled &n : notModelled())
    os << fmt::format("    {}: {}\n", n.part, n.reason);
  os << fmt::format("  {} distinct kernels compiled and simulated once each (timing-only, fast-forward); "
                    "collectives: ring AllReduce (runtime/Collective.h); launch: the target's launch term\n",
                    p.simulated);
}

} // namespace tessel::model

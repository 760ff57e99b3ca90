//===- model/LayerKernels.cpp - A decoder layer's kernels, in the DSL ----===//
#include "model/LayerKernels.h"

#include "fmt/format.h"

#include <cmath>

namespace tessel::model {
namespace {

/// The comment heading every kernel: where it comes from and how to run it alone.
std::string header(const ModelConfig &c, llvm::StringRef what, llvm::StringRef file, int tp, bool rowParallel) {
  const std::string tpFlag = rowParallel && tp > 1 ? fmt::format(" --tp {}", tp) : "";
  return fmt::format("# {}: {}{}.\n# Written by `tessel model {}`; run it alone with\n"
                     "#   tessel run {} -O2{} --timing-only --fast-forward\n",
                     c.name, what.str(),
                     !rowParallel && tp > 1 ? fmt::format(" (one core's share of {})", tp) : "",
                     c.path, file.str(), tpFlag);
}

std::string fileName(llvm::StringRef role, int64_t m) { return fmt::format("{}_M{}.tsl", role.str(), m); }

} // namespace

LayerKernel qkvKernel(const ModelConfig &c, int64_t m, int tp) {
  LayerKernel k{"qkv", fileName("qkv", m), "", m, false};
  const int64_t cols = c.qkvColumns() / tp;
  k.source = header(c, fmt::format("the Q, K and V projections ({} query and {} key/value heads of {})",
                                   c.heads, c.kvHeads, c.headDim),
                    k.fileName, tp, false) +
             fmt::format("const M = {}\n\nkernel qkv(X: bf16[M, {}], Wqkv: bf16[{}, {}]) -> bf16[M, {}] {{\n"
                         "  return X @ Wqkv\n}}\n",
                         m, c.hidden, c.hidden, cols, cols);
  return k;
}

LayerKernel oProjKernel(const ModelConfig &c, int64_t m, int tp) {
  LayerKernel k{"o_proj", fileName("o_proj", m), "", m, true};
  const int64_t a = c.attentionColumns();
  k.source = header(c, "the attention output projection", k.fileName, tp, true) +
             fmt::format("const M = {}\n\nkernel o_proj(A: bf16[M, {}], Wo: bf16[{}, {}]) -> bf16[M, {}] {{\n"
                         "  return A @ Wo\n}}\n",
                         m, a, a, c.hidden, c.hidden);
  return k;
}

LayerKernel mlpKernel(const ModelConfig &c, int64_t m, int tp, const std::optional<MlpRanks> &ranks) {
  const std::string role = ranks ? "mlp_factorised" : "mlp_dense";
  LayerKernel k{"mlp", fileName(role, m), "", m, true};
  const int64_t h = c.hidden, i = c.intermediate;
  const std::string act = c.activation;
  if (!ranks) {
    k.source = header(c, fmt::format("the gated MLP ({}), dense", act), k.fileName, tp, true) +
               fmt::format("const M = {}\n\nkernel mlp(X: bf16[M, {}], Wg: bf16[{}, {}], Wu: bf16[{}, {}], "
                           "Wd: bf16[{}, {}]) -> bf16[M, {}] {{\n"
                           "  h = {}(X @ Wg) * (X @ Wu)\n  return h @ Wd\n}}\n",
                           m, h, h, i, h, i, i, h, h, act);
    return k;
  }
  k.source =
      header(c, fmt::format("the gated MLP ({}), each weight factorised W ~ U V (ranks: gate {}, up {}, down {})",
                            act, ranks->gate, ranks->up, ranks->down),
             k.fileName, tp, true) +
      fmt::format("const M = {}\nconst RG = {}\nconst RU = {}\nconst RD = {}\n\n"
                  "kernel mlp(X: bf16[M, {}],\n"
                  "           Ug: bf16[{}, RG], Vg: bf16[RG, {}],\n"
                  "           Uu: bf16[{}, RU], Vu: bf16[RU, {}],\n"
                  "           Ud: bf16[{}, RD], Vd: bf16[RD, {}]) -> bf16[M, {}] {{\n"
                  "  h = {}(X @ Ug @ Vg) * (X @ Uu @ Vu)\n  return h @ Ud @ Vd\n}}\n",
                  m, ranks->gate, ranks->up, ranks->down, h, h, i, h, i, i, h, h, act);
  return k;
}

LayerKernel lmHeadKernel(const ModelConfig &c, int64_t m, int tp) {
  LayerKernel k{"lm_head", fileName("lm_head", m), "", m, false};
  const int64_t cols = c.vocab / tp;
  k.source = header(c, fmt::format("the LM head (vocabulary {}{})", c.vocab,
                                   c.tiedEmbeddings ? ", tied to the embedding" : ""),
                    k.fileName, tp, false) +
             fmt::format("const M = {}\n\nkernel lm_head(X: bf16[M, {}], W: bf16[{}, {}]) -> bf16[M, {}] {{\n"
                         "  return X @ W\n}}\n",
                         m, c.hidden, c.hidden, cols, cols);
  return k;
}

LayerKernel attentionKernel(const ModelConfig &c, int64_t queries, int64_t context, int64_t batch, int tp) {
  const bool prefill = queries > 1;
  LayerKernel k{"attention", fmt::format("attention_Q{}_C{}.tsl", queries, context), "", queries, false};
  const int64_t group = c.heads / c.kvHeads, d = c.headDim;
  k.repeats = c.kvHeads / tp * batch;
  const std::string what =
      fmt::format("attention of one group of {} query heads sharing a key/value head, {}; run {} times per layer "
                  "(the {} groups of a core x batch {})",
                  group, prefill ? "causal over the prompt" : "one token against the KV cache", k.repeats,
                  c.kvHeads / tp, batch);
  const std::string scaled = fmt::format("Q @ K.T * {}", 1.0 / std::sqrt(double(d)));
  const std::string scores = prefill ? "causal(" + scaled + ")" : scaled;
  k.source = header(c, what, k.fileName, tp, false) +
             fmt::format("const M = {}\nconst C = {}\n\n"
                         "kernel attention(Q: bf16[{}, M, {}], K: bf16[1, C, {}], V: bf16[1, C, {}]) -> "
                         "bf16[{}, M, {}] {{\n  return softmax({}) @ V\n}}\n",
                         queries, context, group, d, d, d, group, d, scores);
  return k;
}

/// A kernel over the whole [m, hidden] state, replicated on every core:
/// `params` after X: bf16[M, hidden] and the returned expression.
LayerKernel hiddenStateKernel(const ModelConfig &c, int64_t m, llvm::StringRef role, const std::string &what,
                              llvm::StringRef params, llvm::StringRef body) {
  LayerKernel k{role.str(), fileName(role, m), "", m, false};
  k.source = header(c, what, k.fileName, 1, false) +
             fmt::format("const M = {}\nconst H = {}\n\nkernel {}_rows(X: bf16[M, H]{}) -> bf16[M, H] {{\n  return {}\n}}\n",
                         m, c.hidden, role.str(), params.str(), body.str());
  return k;
}

LayerKernel rmsnormKernel(const ModelConfig &c, int64_t m) {
  return hiddenStateKernel(c, m, "rmsnorm", "RMSNorm of the hidden state (every core holds it whole)",
                           ", g: bf16[H]", fmt::format("rmsnorm(X, g, eps={})", c.rmsNormEps));
}

LayerKernel residualKernel(const ModelConfig &c, int64_t m) {
  return hiddenStateKernel(c, m, "residual", "the residual add (every core holds the hidden state whole)",
                           ", R: bf16[M, H]", "X + R");
}

LayerKernel embeddingKernel(const ModelConfig &c, int64_t m) {
  return hiddenStateKernel(c, m, "embedding",
                           fmt::format("the embedding gather of {} rows of the [{}, {}] table, as a copy of the rows "
                                       "(the DSL has no indexed load; each row is one contiguous transfer either way)",
                                       m, c.vocab, c.hidden),
                           "", "X");
}

} // namespace tessel::model

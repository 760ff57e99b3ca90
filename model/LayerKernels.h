//===- model/LayerKernels.h - A decoder layer's kernels, in the DSL -*- C++ -*-===//
//
// The kernels of one decoder layer and the LM head as .tsl source, for N
// cores (Megatron-style, as the paper's §4.2.2):
//  * qkv: X @ Wqkv, column-parallel -- each core projects its share of the
//    query and key/value heads, so no collective follows; the source is one
//    core's kernel (tessel's --tp splits a single product by its
//    contraction, which is the O projection's form, not this one);
//  * o_proj: A @ Wo and mlp: the gated MLP, dense or factorised, written
//    whole and split by compiler/TensorParallel (--tp): row-parallel, so an
//    AllReduce of [M, hidden] follows each;
//  * lm_head: X @ Wlm, column-parallel over the vocabulary, one core's
//    kernel, for the last position of each sequence only;
//  * attention: softmax(Q K^T / sqrt(D)) @ V for one group of query heads
//    sharing a key/value head (grouped-query attention), causal in prefill,
//    one query row against the KV cache in decode. The heads split over the
//    cores with their weights (the qkv columns), so no collective follows;
//    one group of one sequence is simulated and run `repeats` times (the
//    core's groups x the batch, back to back: their overlap is not counted);
//  * rmsnorm and residual: RMSNorm(X) * g and X + R over [M, hidden], twice
//    per layer each, replicated on every core (they follow the AllReduces).
//  * embedding: the gather of M rows of the embedding table, written as a
//    copy of M rows (the DSL has no indexed load; each row is one contiguous
//    transfer in both), replicated on every core, once per phase.
// Not written (nothing in the DSL expresses them yet): rotary embeddings,
// Qwen3's per-head q/k norms.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_MODEL_LAYERKERNELS_H
#define TESSEL_MODEL_LAYERKERNELS_H

#include "model/ModelConfig.h"
#include "model/RankFile.h"

#include <cstdint>
#include <optional>
#include <string>

namespace tessel::model {

struct LayerKernel {
  std::string role;     ///< "qkv", "o_proj", "mlp", "lm_head", "attention", "rmsnorm", "residual"
  std::string fileName; ///< e.g. "mlp_factorised_M640.tsl" (--emit-kernels)
  std::string source;   ///< the .tsl text
  int64_t m = 0;        ///< rows: batch x seq (prefill) or batch (decode, LM head)
  /// Split by compiler/TensorParallel and followed by an AllReduce of the
  /// whole [m, hidden] result; false: the source is one core's kernel already.
  bool rowParallel = false;
  /// Runs per use on one core (attention: the core's KV-head groups x the
  /// batch); each run is one simulation of `source`.
  int64_t repeats = 1;
};

LayerKernel qkvKernel(const ModelConfig &c, int64_t m, int tp);
LayerKernel oProjKernel(const ModelConfig &c, int64_t m, int tp);
/// Dense when `ranks` is empty, else each weight W ~ U V at its rank.
LayerKernel mlpKernel(const ModelConfig &c, int64_t m, int tp, const std::optional<MlpRanks> &ranks);
LayerKernel lmHeadKernel(const ModelConfig &c, int64_t m, int tp);
/// One KV-head group's attention for one sequence: `queries` rows of Q (the
/// prompt, causal, in prefill; 1 in decode) against `context` rows of K and V.
LayerKernel attentionKernel(const ModelConfig &c, int64_t queries, int64_t context, int64_t batch, int tp);
LayerKernel rmsnormKernel(const ModelConfig &c, int64_t m);
LayerKernel residualKernel(const ModelConfig &c, int64_t m);
LayerKernel embeddingKernel(const ModelConfig &c, int64_t m);

} // namespace tessel::model

#endif

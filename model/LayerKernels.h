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
//    kernel, for the last position of each sequence only.
// Not written (nothing in the DSL expresses them yet: issue 36): attention
// (scores, softmax, PV), the RMS norms, rotary embeddings, residual adds,
// the embedding gather.
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
  std::string role;     ///< "qkv", "o_proj", "mlp", "lm_head"
  std::string fileName; ///< e.g. "mlp_factorised_M640.tsl" (--emit-kernels)
  std::string source;   ///< the .tsl text
  int64_t m = 0;        ///< rows: batch x seq (prefill) or batch (decode, LM head)
  /// Split by compiler/TensorParallel and followed by an AllReduce of the
  /// whole [m, hidden] result; false: the source is one core's kernel already.
  bool rowParallel = false;
};

LayerKernel qkvKernel(const ModelConfig &c, int64_t m, int tp);
LayerKernel oProjKernel(const ModelConfig &c, int64_t m, int tp);
/// Dense when `ranks` is empty, else each weight W ~ U V at its rank.
LayerKernel mlpKernel(const ModelConfig &c, int64_t m, int tp, const std::optional<MlpRanks> &ranks);
LayerKernel lmHeadKernel(const ModelConfig &c, int64_t m, int tp);

} // namespace tessel::model

#endif

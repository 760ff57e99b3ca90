//===- model/Composition.h - Layers, collectives and launches, summed -*- C++ -*-===//
//
// One phase (prefill: batch x seq rows; decode: one token per sequence) of a
// model from its kernels' timings:
//
//   per layer = qkv + attention x repeats + o_proj + mlp
//             + 2 x rmsnorm + 2 x residual     (kernels, one core's timeline)
//             + AllReduce after o_proj and after mlp (under --tp)
//             + one launch per kernel          (the target's launch term;
//                                               attention's groups: one launch)
//   phase     = embedding + layers x per layer + final rmsnorm + lm_head
//               (the last two at the LM head's rows: the last position of
//               each sequence)
//
// The cores run in lockstep (each its shard, its own engines and HBM share),
// so a phase's time is one core's. Collectives do not overlap compute, nor
// one kernel the next. Rotary embeddings and Qwen3's q/k norms are not in
// it (model/Model.cpp, notModelled()).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_MODEL_COMPOSITION_H
#define TESSEL_MODEL_COMPOSITION_H

#include "model/KernelRunner.h"

#include <cstdint>

namespace tessel::model {

/// The timings of one phase's kernels.
struct PhaseKernels {
  KernelTiming qkv, oProj, mlp, lmHead;
  KernelTiming attention, rmsnorm, residual, finalNorm, embedding;
  int64_t attentionRepeats = 1; ///< runs of the attention kernel per layer
};

struct PhaseTime {
  int64_t rows = 0;   ///< M of the layer kernels
  int64_t layers = 0;
  // One layer's parts, in us.
  double projectionsUs = 0; ///< qkv + o_proj
  double mlpUs = 0;
  double attentionUs = 0;   ///< the attention kernel x its repeats
  double normsUs = 0;       ///< two RMSNorms and two residual adds
  double collectivesUs = 0; ///< the AllReduces after o_proj and mlp
  double launchUs = 0;      ///< one launch per kernel of the layer
  double layerUs() const { return projectionsUs + mlpUs + attentionUs + normsUs + collectivesUs + launchUs; }
  double lmHeadUs = 0;      ///< the final RMSNorm and the LM head, kernels + launches, once per phase
  double embeddingUs = 0;   ///< the embedding gather, kernel + launch, once per phase
  double totalUs = 0;       ///< embeddingUs + layers x layerUs() + lmHeadUs
  double flops = 0;         ///< one core's, whole phase
  double hbmBytes = 0;      ///< one core's, whole phase
  double mfu = 0;           ///< flops / (peak x total)
  double mbu = 0;           ///< HBM bytes / (bandwidth x total)
};

PhaseTime composePhase(const PhaseKernels &kernels, int64_t rows, int64_t layers);

} // namespace tessel::model

#endif

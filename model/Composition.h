//===- model/Composition.h - Layers, collectives and launches, summed -*- C++ -*-===//
//
// One phase (prefill: batch x seq rows; decode: one token per sequence) of a
// model from its kernels' timings:
//
//   per layer = qkv + o_proj + mlp            (kernels, one core's timeline)
//             + AllReduce after o_proj and after mlp (under --tp)
//             + one launch per kernel          (the target's launch term)
//   phase     = layers x per layer + lm_head (kernel + launch)
//
// The cores run in lockstep (each its shard, its own engines and HBM share),
// so a phase's time is one core's. Collectives do not overlap compute.
// Attention and the norms are not in it (issue 36): the totals exclude them.
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
};

struct PhaseTime {
  int64_t rows = 0;   ///< M of the layer kernels
  int64_t layers = 0;
  // One layer's parts, in us.
  double projectionsUs = 0; ///< qkv + o_proj
  double mlpUs = 0;
  double collectivesUs = 0; ///< the AllReduces after o_proj and mlp
  double launchUs = 0;      ///< one launch per kernel of the layer
  double layerUs() const { return projectionsUs + mlpUs + collectivesUs + launchUs; }
  double lmHeadUs = 0;      ///< kernel + its launch, once per phase
  double totalUs = 0;       ///< layers x layerUs() + lmHeadUs
  double flops = 0;         ///< one core's, whole phase
  double hbmBytes = 0;      ///< one core's, whole phase
  double mfu = 0;           ///< flops / (peak x total)
  double mbu = 0;           ///< HBM bytes / (bandwidth x total)
};

PhaseTime composePhase(const PhaseKernels &kernels, int64_t rows, int64_t layers);

} // namespace tessel::model

#endif

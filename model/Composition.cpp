//===- model/Composition.cpp - Layers, collectives and launches, summed ---===//
#include "model/Composition.h"

namespace tessel::model {

PhaseTime composePhase(const PhaseKernels &k, int64_t rows, int64_t layers) {
  PhaseTime p;
  p.rows = rows;
  p.layers = layers;
  const double reps = double(k.attentionRepeats);
  p.projectionsUs = k.qkv.kernelUs + k.oProj.kernelUs;
  p.mlpUs = k.mlp.kernelUs;
  p.attentionUs = reps * k.attention.kernelUs;
  p.normsUs = 2 * (k.rmsnorm.kernelUs + k.residual.kernelUs);
  p.collectivesUs = k.qkv.allReduce.totalUs() + k.oProj.allReduce.totalUs() + k.mlp.allReduce.totalUs();
  p.launchUs = k.qkv.launchUs + k.oProj.launchUs + k.mlp.launchUs + k.attention.launchUs +
               2 * (k.rmsnorm.launchUs + k.residual.launchUs);
  p.lmHeadUs = k.finalNorm.kernelUs + k.finalNorm.launchUs + k.lmHead.kernelUs + k.lmHead.launchUs +
               k.lmHead.allReduce.totalUs();
  p.embeddingUs = k.embedding.kernelUs + k.embedding.launchUs;
  p.totalUs = p.embeddingUs + double(layers) * p.layerUs() + p.lmHeadUs;
  auto layerSum = [&](double KernelTiming::*field) {
    return k.qkv.*field + k.oProj.*field + k.mlp.*field + reps * k.attention.*field +
           2 * (k.rmsnorm.*field + k.residual.*field);
  };
  auto once = [&](double KernelTiming::*field) {
    return k.embedding.*field + k.finalNorm.*field + k.lmHead.*field;
  };
  p.flops = double(layers) * layerSum(&KernelTiming::flops) + once(&KernelTiming::flops);
  p.hbmBytes = double(layers) * layerSum(&KernelTiming::hbmBytes) + once(&KernelTiming::hbmBytes);
  if (p.totalUs > 0 && k.mlp.peakFlopsPerSec > 0)
    p.mfu = p.flops / (k.mlp.peakFlopsPerSec * p.totalUs * 1e-6);
  if (p.totalUs > 0 && k.mlp.hbmBytesPerSec > 0)
    p.mbu = p.hbmBytes / (k.mlp.hbmBytesPerSec * p.totalUs * 1e-6);
  return p;
}

} // namespace tessel::model

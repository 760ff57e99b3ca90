//===- model/Composition.cpp - Layers, collectives and launches, summed ---===//
#include "model/Composition.h"

namespace tessel::model {

PhaseTime composePhase(const PhaseKernels &k, int64_t rows, int64_t layers) {
  PhaseTime p;
  p.rows = rows;
  p.layers = layers;
  p.projectionsUs = k.qkv.kernelUs + k.oProj.kernelUs;
  p.mlpUs = k.mlp.kernelUs;
  p.collectivesUs = k.qkv.allReduce.totalUs() + k.oProj.allReduce.totalUs() + k.mlp.allReduce.totalUs();
  p.launchUs = k.qkv.launchUs + k.oProj.launchUs + k.mlp.launchUs;
  p.lmHeadUs = k.lmHead.kernelUs + k.lmHead.launchUs + k.lmHead.allReduce.totalUs();
  p.totalUs = double(layers) * p.layerUs() + p.lmHeadUs;
  p.flops = double(layers) * (k.qkv.flops + k.oProj.flops + k.mlp.flops) + k.lmHead.flops;
  p.hbmBytes = double(layers) * (k.qkv.hbmBytes + k.oProj.hbmBytes + k.mlp.hbmBytes) + k.lmHead.hbmBytes;
  if (p.totalUs > 0 && k.mlp.peakFlopsPerSec > 0)
    p.mfu = p.flops / (k.mlp.peakFlopsPerSec * p.totalUs * 1e-6);
  if (p.totalUs > 0 && k.mlp.hbmBytesPerSec > 0)
    p.mbu = p.hbmBytes / (k.mlp.hbmBytesPerSec * p.totalUs * 1e-6);
  return p;
}

} // namespace tessel::model

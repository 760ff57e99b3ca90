//===- model/ModelPlot.h - --plot: a stacked-bar SVG ------------*- C++ -*-===//
//
// One panel per phase (prefill, decode: their scales differ by orders of
// magnitude), one bar per variant, stacked by part over all layers:
// projections, MLP, collectives, launch, LM head. Plain SVG text.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_MODEL_MODELPLOT_H
#define TESSEL_MODEL_MODELPLOT_H

#include "model/Model.h"

#include <string>

namespace tessel::model {

std::string predictionSvg(const ModelPrediction &p);

} // namespace tessel::model

#endif

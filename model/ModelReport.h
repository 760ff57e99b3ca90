//===- model/ModelReport.h - `tessel model`'s report, text and JSON -*- C++ -*-===//
//
// JSON keys (for scripts; docs/model.md): model, settings, not_modelled,
// variants (each: name, ranks, prefill, decode, end_to_end_us; a phase:
// rows, layers, per_layer {projections_us, mlp_us, collectives_us,
// launch_us, attention_us: null, norms_us: null, total_us}, lm_head_us,
// total_us, excludes, mfu, mbu), speedup {prefill, decode, end_to_end}
// (with a factorised variant), kernels (each: file, role, rows, latency_us,
// launch_us, allreduce_us, flops, hbm_bytes, split).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_MODEL_MODELREPORT_H
#define TESSEL_MODEL_MODELREPORT_H

#include "model/Model.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

namespace tessel::model {

llvm::json::Object predictionToJSON(const ModelPrediction &p);
void printPredictionText(const ModelPrediction &p, llvm::raw_ostream &os);

} // namespace tessel::model

#endif

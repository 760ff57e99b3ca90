//===- model/Model.h - A whole model's prefill and decode latency -*- C++ -*-===//
//
// `tessel model CONFIG.json`: the kernels of one decoder layer and the LM head
// (model/LayerKernels.h) at the prefill and decode row counts, each distinct
// kernel timed once (model/KernelRunner.h), composed per phase
// (model/Composition.h), dense and -- given ranks -- with the MLP factorised.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_MODEL_MODEL_H
#define TESSEL_MODEL_MODEL_H

#include "model/Composition.h"
#include "model/KernelRunner.h"
#include "model/LayerKernels.h"
#include "model/ModelConfig.h"
#include "model/RankFile.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tessel::model {

struct ModelSettings {
  int64_t seq = 640;
  int64_t batch = 1;
  int64_t decodeTokens = 128; ///< decode steps after the prompt
  int tp = 1;
  std::string target = "trn1";
  std::optional<MlpRanks> ranks; ///< the factorised variant's, if any
  std::string ranksFrom;         ///< "--ratio 0.1" or the rank file's path
  std::string compile = "-O2";   ///< "-O2" or "--tuned"
  int64_t prefillRows() const { return batch * seq; }
  int64_t decodeRows() const { return batch; }
  /// The KV cache a decode step attends over: the prompt and half the
  /// generated tokens, the mean over the steps (a step's attention time
  /// grows linearly with its context).
  int64_t decodeContext() const { return seq + decodeTokens / 2; }
};

/// A part of the model no kernel stands for yet, and why.
struct NotModelled {
  const char *part;
  const char *reason;
};
/// The parts of the layer no kernel stands for yet.
llvm::ArrayRef<NotModelled> notModelled();

struct Variant {
  std::string name; ///< "dense" or "factorised"
  std::optional<MlpRanks> ranks;
  PhaseTime prefill, decode;
  double endToEndUs = 0; ///< prefill + decodeTokens x decode
};

struct TimedKernel {
  LayerKernel kernel;
  KernelTiming timing;
};

struct ModelPrediction {
  ModelConfig config;
  ModelSettings settings;
  std::vector<Variant> variants;   ///< dense, then factorised if ranks were given
  std::vector<TimedKernel> kernels; ///< distinct, in the order first needed
  size_t simulated = 0;             ///< distinct kernels compiled and simulated
};

/// Every distinct kernel the prediction needs (--emit-kernels writes these).
std::vector<LayerKernel> modelKernels(const ModelConfig &config, const ModelSettings &settings);

/// An error for settings the target cannot run: more cores than its chip has.
llvm::Error checkSettings(const ModelSettings &settings, const runtime::Target &target);

/// Called before each kernel is compiled and simulated: (kernel, index, count).
using KernelProgress = std::function<void(const LayerKernel &, size_t, size_t)>;

llvm::Expected<ModelPrediction> predictModel(const ModelConfig &config, const ModelSettings &settings,
                                             KernelRunner &runner, const KernelProgress &progress = nullptr);

} // namespace tessel::model

#endif

//===- model/ModelConfig.h - A Hugging Face config.json, read -*- C++ -*-===//
//
// The fields of a Llama or Qwen3 `config.json` that shape a decoder layer's
// kernels. Every error names the field and, when the key is in the file, its
// line ("llama.json:7: error: ..."); a field that is missing is named with
// the file alone.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_MODEL_MODELCONFIG_H
#define TESSEL_MODEL_MODELCONFIG_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <memory>
#include <string>

namespace tessel::model {

struct ModelConfig {
  std::string path;      ///< the file it was read from
  std::string name;      ///< the file's stem, e.g. "llama-3.2-1b"
  int64_t hidden = 0;    ///< hidden_size
  int64_t intermediate = 0; ///< intermediate_size
  int64_t heads = 0;     ///< num_attention_heads
  int64_t kvHeads = 0;   ///< num_key_value_heads
  int64_t headDim = 0;   ///< head_dim (default hidden / heads)
  int64_t layers = 0;    ///< num_hidden_layers
  int64_t vocab = 0;     ///< vocab_size
  std::string activation; ///< hidden_act, as the DSL spells it
  double rmsNormEps = 0; ///< rms_norm_eps (kept for the norms: issue 36)
  bool tiedEmbeddings = false; ///< tie_word_embeddings

  int64_t qkvColumns() const { return (heads + 2 * kvHeads) * headDim; }
  int64_t attentionColumns() const { return heads * headDim; }
};

/// "FILE:LINE" of the first line where `"field"` is a JSON key in `text`,
/// else "FILE".
std::string locateKey(llvm::StringRef path, llvm::StringRef text, llvm::StringRef field);

/// `path`'s JSON: an error "FILE: error: ..." when `text` is not JSON.
llvm::Expected<llvm::json::Value> parseJsonFile(llvm::StringRef path, llvm::StringRef text);

/// The contents of the file `path`; `flag` names the option in the error.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> readTextFile(llvm::StringRef path, llvm::StringRef flag);

/// Reads `text` (the contents of `path`). Errors are located, as above.
llvm::Expected<ModelConfig> parseModelConfig(llvm::StringRef path, llvm::StringRef text);

/// Checks that the config splits over `tp` cores (heads, KV heads, the MLP's
/// intermediate columns and the vocabulary each divide by it); the error
/// names the field that does not.
llvm::Error checkSplits(const ModelConfig &config, llvm::StringRef text, int tp);

/// Reads the file `path`, parses it and checks its splits over `tp` cores.
llvm::Expected<ModelConfig> readModelConfig(llvm::StringRef path, int tp);

} // namespace tessel::model

#endif

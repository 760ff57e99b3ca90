//===- model/ModelConfig.cpp - A Hugging Face config.json, read -----------===//
#include "model/ModelConfig.h"

#include "support/Activation.h"
#include "support/JsonLimits.h"

#include "fmt/format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"

namespace tessel::model {

std::string locateKey(llvm::StringRef path, llvm::StringRef text, llvm::StringRef field) {
  const std::string key = "\"" + field.str() + "\"";
  for (size_t at = text.find(key); at != llvm::StringRef::npos; at = text.find(key, at + 1)) {
    llvm::StringRef rest = text.drop_front(at + key.size()).ltrim();
    if (rest.startswith(":"))
      return fmt::format("{}:{}", path.str(), 1 + text.take_front(at).count('\n'));
  }
  return path.str();
}

llvm::Expected<llvm::json::Value> parseJsonFile(llvm::StringRef path, llvm::StringRef text) {
  llvm::Expected<llvm::json::Value> json = parseJsonBounded(text, "");
  if (!json)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s: error: %s", path.str().c_str(),
                                   llvm::toString(json.takeError()).c_str());
  return json;
}

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> readTextFile(llvm::StringRef path, llvm::StringRef flag) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file = llvm::MemoryBuffer::getFile(path);
  if (!file)
    return llvm::createStringError(file.getError(), "%scannot read '%s': %s", flag.str().c_str(),
                                   path.str().c_str(), file.getError().message().c_str());
  return std::move(*file);
}

namespace {

class Reader {
public:
  Reader(llvm::StringRef path, llvm::StringRef text, const llvm::json::Object &obj)
      : path(path), text(text), obj(obj) {}

  llvm::Error error(llvm::StringRef field, const std::string &message) const {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s: error: %s",
                                   locateKey(path, text, field).c_str(), message.c_str());
  }

  /// A positive integer; `fallback` (when not 0) when the field is absent.
  llvm::Error count(llvm::StringRef field, int64_t &out, int64_t fallback = 0) const {
    const llvm::json::Value *v = obj.get(field);
    if (!v) {
      if (fallback > 0) {
        out = fallback;
        return llvm::Error::success();
      }
      return error(field, fmt::format("missing field '{}' (a positive integer)", field.str()));
    }
    llvm::Optional<int64_t> n = v->getAsInteger();
    if (!n || *n <= 0)
      return error(field, fmt::format("field '{}' must be a positive integer, found {}", field.str(),
                                      llvm::formatv("{0}", *v).str()));
    out = *n;
    return llvm::Error::success();
  }

  const llvm::json::Value *get(llvm::StringRef field) const { return obj.get(field); }

private:
  llvm::StringRef path, text;
  const llvm::json::Object &obj;
};

} // namespace

llvm::Expected<ModelConfig> parseModelConfig(llvm::StringRef path, llvm::StringRef text) {
  llvm::Expected<llvm::json::Value> json = parseJsonFile(path, text);
  if (!json)
    return json.takeError();
  const llvm::json::Object *obj = json->getAsObject();
  if (!obj)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "%s: error: a config.json is one JSON object", path.str().c_str());
  Reader r(path, text, *obj);
  ModelConfig c;
  c.path = path.str();
  c.name = llvm::sys::path::stem(path).str();
  if (const llvm::json::Value *type = r.get("model_type")) {
    llvm::Optional<llvm::StringRef> t = type->getAsString();
    if (!t || (*t != "llama" && *t != "qwen3"))
      return r.error("model_type", fmt::format("model_type {} is not supported: tessel model reads the "
                                               "llama and qwen3 families",
                                               llvm::formatv("{0}", *type).str()));
  }
  if (llvm::Error e = r.count("hidden_size", c.hidden))
    return e;
  if (llvm::Error e = r.count("intermediate_size", c.intermediate))
    return e;
  if (llvm::Error e = r.count("num_attention_heads", c.heads))
    return e;
  // Hugging Face's defaults: as many KV heads as heads (no grouping), and
  // head_dim = hidden_size / num_attention_heads.
  if (llvm::Error e = r.count("num_key_value_heads", c.kvHeads, c.heads))
    return e;
  if (!r.get("head_dim") && c.hidden % c.heads != 0)
    return r.error("num_attention_heads",
                   fmt::format("without head_dim, hidden_size {} must divide by num_attention_heads {}",
                               c.hidden, c.heads));
  if (llvm::Error e = r.count("head_dim", c.headDim, c.hidden / c.heads))
    return e;
  if (c.heads % c.kvHeads != 0)
    return r.error("num_key_value_heads",
                   fmt::format("num_attention_heads {} must be a multiple of num_key_value_heads {} "
                               "(grouped-query attention)",
                               c.heads, c.kvHeads));
  if (llvm::Error e = r.count("num_hidden_layers", c.layers))
    return e;
  if (llvm::Error e = r.count("vocab_size", c.vocab))
    return e;

  const llvm::json::Value *act = r.get("hidden_act");
  if (!act)
    return r.error("hidden_act", "missing field 'hidden_act' (the MLP's activation, e.g. \"silu\")");
  llvm::Optional<llvm::StringRef> actName = act->getAsString();
  std::optional<ActFn> fn = actName ? parseActFn(*actName) : std::nullopt;
  if (!fn || (*fn != ActFn::Silu && *fn != ActFn::Gelu && *fn != ActFn::Relu))
    return r.error("hidden_act", fmt::format("unknown activation {}: the gated MLP is written with "
                                             "silu, gelu or relu",
                                             llvm::formatv("{0}", *act).str()));
  c.activation = actName->str();

  if (const llvm::json::Value *eps = r.get("rms_norm_eps")) {
    llvm::Optional<double> e = eps->getAsNumber();
    if (!e || *e <= 0)
      return r.error("rms_norm_eps", fmt::format("field 'rms_norm_eps' must be a positive number, found {}",
                                                 llvm::formatv("{0}", *eps).str()));
    c.rmsNormEps = *e;
  }
  if (const llvm::json::Value *tie = r.get("tie_word_embeddings")) {
    llvm::Optional<bool> b = tie->getAsBoolean();
    if (!b)
      return r.error("tie_word_embeddings",
                     fmt::format("field 'tie_word_embeddings' must be true or false, found {}",
                                 llvm::formatv("{0}", *tie).str()));
    c.tiedEmbeddings = *b;
  }
  return c;
}

llvm::Error checkSplits(const ModelConfig &c, llvm::StringRef text, int tp) {
  struct Split {
    const char *field;
    int64_t value;
    const char *what;
  };
  const Split splits[] = {
      {"num_attention_heads", c.heads, "the query heads"},
      {"num_key_value_heads", c.kvHeads, "the key/value heads"},
      {"intermediate_size", c.intermediate, "the MLP's gate/up columns"},
      {"vocab_size", c.vocab, "the LM head's columns"},
  };
  for (const Split &s : splits)
    if (s.value % tp != 0)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(), "%s: error: %s",
          locateKey(c.path, text, s.field).c_str(),
          fmt::format("{} {} does not divide by --tp {}: {} are split over the cores", s.field, s.value,
                      tp, s.what)
              .c_str());
  return llvm::Error::success();
}

llvm::Expected<ModelConfig> readModelConfig(llvm::StringRef path, int tp) {
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> file = readTextFile(path, "");
  if (!file)
    return file.takeError();
  llvm::StringRef text = (*file)->getBuffer();
  llvm::Expected<ModelConfig> config = parseModelConfig(path, text);
  if (!config)
    return config.takeError();
  if (llvm::Error e = checkSplits(*config, text, tp))
    return e;
  return config;
}

} // namespace tessel::model

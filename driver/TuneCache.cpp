#include "driver/TuneCache.h"

#include "passes/PassRegistry.h"
#include "support/JsonLimits.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SHA1.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

namespace json = llvm::json;

namespace tessel::driver {
namespace {

constexpr llvm::StringLiteral kFormat = "tessel-tune-cache";
constexpr llvm::StringLiteral kVersion = TESSEL_VERSION_STRING;

llvm::Error invalid(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg.str());
}

json::Value entryToJSON(const CacheEntry &e) {
  json::Array configs;
  for (const auto &kv : e.configs)
    configs.push_back(resultToJSON(kv.second));
  json::Object obj{{"kernel", e.key.kernel},
                   {"shapes", e.key.shapes},
                   {"target", e.key.target},
                   {"pipeline", e.key.pipeline},
                   {"configs", std::move(configs)}};
  if (e.best)
    obj["best"] = blockToJSON(*e.best);
  return obj;
}

llvm::Expected<CacheEntry> entryFromJSON(llvm::StringRef hash, const json::Value &value) {
  const json::Object *obj = value.getAsObject();
  if (!obj)
    return invalid("entry " + hash + " is not an object");
  CacheEntry e;
  e.key.hash = hash.str();
  for (auto [field, out] : {std::pair{"kernel", &e.key.kernel}, std::pair{"shapes", &e.key.shapes},
                            std::pair{"target", &e.key.target},
                            std::pair{"pipeline", &e.key.pipeline}}) {
    auto s = obj->getString(field);
    if (!s)
      return invalid(llvm::formatv("entry {0} has no '{1}'", hash, field));
    *out = s->str();
  }
  const json::Array *configs = obj->getArray("configs");
  if (!configs)
    return invalid("entry " + hash + " has no 'configs' list");
  for (const json::Value &c : *configs) {
    llvm::Expected<ConfigResult> r = resultFromJSON(c);
    if (!r)
      return invalid("entry " + hash + ": " + llvm::toString(r.takeError()));
    std::string name = formatBlock(r->block);
    e.configs[name] = std::move(*r);
  }
  if (const json::Value *best = obj->get("best")) {
    llvm::Expected<BlockConfig> b = blockFromJSON(best);
    if (!b)
      return invalid("entry " + hash + ": 'best': " + llvm::toString(b.takeError()));
    e.best = std::move(*b);
  }
  return e;
}

/// Parses the cache text; any untrusted content is an error saying why.
llvm::Expected<std::map<std::string, CacheEntry>> parseCache(llvm::StringRef text) {
  if (llvm::Error deep = checkJsonDepth(text, ""))
    return invalid(llvm::toString(std::move(deep)));
  llvm::Expected<json::Value> root = json::parse(text);
  if (!root)
    return invalid("not valid JSON (" + llvm::toString(root.takeError()) + ")");
  const json::Object *obj = root->getAsObject();
  auto format = obj ? obj->getString("format") : llvm::None;
  if (!format || *format != kFormat)
    return invalid("not a tessel tune cache (no \"format\": \"" + kFormat + "\")");
  auto version = obj->getString("tessel_version");
  if (!version || *version != kVersion)
    return invalid("written by tessel " + (version ? *version : llvm::StringRef("(unknown)")) +
                   ", this is " + kVersion);
  const json::Object *list = obj->getObject("entries");
  if (!list)
    return invalid("no 'entries' object");
  std::map<std::string, CacheEntry> entries;
  for (const auto &kv : *list) {
    llvm::Expected<CacheEntry> e = entryFromJSON(kv.first, kv.second);
    if (!e)
      return e.takeError();
    entries[kv.first.str()] = std::move(*e);
  }
  return entries;
}

std::string describe(const TuneKey &key) {
  return llvm::formatv("kernel '{0}' ({1}) on target '{2}' with {3}", key.kernel, key.shapes,
                       key.target,
                       key.pipeline.empty() ? "no passes (-O0)" : "--passes=" + key.pipeline);
}

} // namespace

llvm::StringRef kernelSourceText(const ast::Kernel &kernel, llvm::StringRef sourceText) {
  const char *begin = kernel.loc.getPointer();
  if (!begin || begin < sourceText.begin() || begin >= sourceText.end())
    return kernel.name;
  llvm::StringRef rest = sourceText.drop_front(begin - sourceText.begin());
  int depth = 0;
  for (size_t i = 0; i < rest.size(); ++i) {
    char c = rest[i];
    if (c == '#') { // a comment runs to the end of its line
      i = rest.find('\n', i);
      if (i == llvm::StringRef::npos)
        break;
    } else if (c == '{') {
      ++depth;
    } else if (c == '}' && --depth == 0) {
      return rest.take_front(i + 1);
    }
  }
  return rest;
}

TuneKey makeTuneKey(const Frontend &fe, const runtime::Target &target,
                    llvm::ArrayRef<std::string> passNames) {
  const ast::Kernel &kernel = *fe.kernel;
  llvm::StringRef sourceText =
      fe.sourceMgr.getMemoryBuffer(fe.sourceMgr.getMainFileID())->getBuffer();
  TuneKey key;
  key.kernel = kernel.name;
  for (const ast::Param &p : kernel.params)
    key.shapes += (key.shapes.empty() ? "" : ", ") + p.name + ": " + formatType(p.type);
  key.shapes += " -> " + formatType(kernel.resultType);
  key.target = target.name;
  key.pipeline = passes::joinPassList(passNames);
  // Held here: a temporary inside the braced list below would be destroyed
  // before the loop body reads it.
  std::string targetText = runtime::targetToJSONText(target);
  llvm::SHA1 sha;
  for (llvm::StringRef part :
       {llvm::StringRef(kVersion), kernelSourceText(kernel, sourceText),
        llvm::StringRef(key.shapes), llvm::StringRef(targetText), llvm::StringRef(key.pipeline)}) {
    sha.update(part);
    sha.update(llvm::StringRef("\0", 1));
  }
  key.hash = llvm::toHex(sha.final(), /*LowerCase=*/true);
  return key;
}

void TuneCache::load() {
  entries.clear();
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer) {
    if (buffer.getError() != std::errc::no_such_file_or_directory)
      llvm::WithColor::warning(llvm::errs(), "tessel tune")
          << "ignoring the tune cache '" << path << "': " << buffer.getError().message() << "\n";
    return;
  }
  llvm::Expected<std::map<std::string, CacheEntry>> parsed = parseCache((*buffer)->getBuffer());
  if (!parsed) {
    llvm::WithColor::warning(llvm::errs(), "tessel tune")
        << "ignoring the tune cache '" << path << "': " << llvm::toString(parsed.takeError())
        << "; it will be rewritten\n";
    return;
  }
  entries = std::move(*parsed);
}

const CacheEntry *TuneCache::find(const std::string &hash) const {
  auto it = entries.find(hash);
  return it == entries.end() ? nullptr : &it->second;
}

CacheEntry &TuneCache::update(const TuneKey &key) {
  updated.insert(key.hash);
  CacheEntry &e = entries[key.hash];
  e.key = key;
  return e;
}

llvm::Error TuneCache::save() const {
  // Keep what other processes wrote meanwhile, when it can be trusted.
  std::map<std::string, CacheEntry> merged;
  if (auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true)) {
    llvm::Expected<std::map<std::string, CacheEntry>> onDisk = parseCache((*buffer)->getBuffer());
    if (onDisk)
      merged = std::move(*onDisk);
    else
      llvm::consumeError(onDisk.takeError());
  }
  for (const auto &[hash, entry] : entries)
    if (updated.count(hash) || !merged.count(hash))
      merged[hash] = entry;

  json::Object list;
  for (const auto &[hash, entry] : merged)
    list[hash] = entryToJSON(entry);
  json::Value root = json::Object{
      {"format", kFormat}, {"tessel_version", kVersion}, {"entries", std::move(list)}};

  llvm::StringRef dir = llvm::sys::path::parent_path(path);
  if (!dir.empty())
    if (std::error_code ec = llvm::sys::fs::create_directories(dir))
      return invalid("cannot create '" + dir + "': " + ec.message());
  llvm::SmallString<128> tmp;
  int fd = -1;
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(path + ".tmp-%%%%%%", fd, tmp))
    return invalid("cannot write the tune cache '" + path + "': " + ec.message());
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << llvm::formatv("{0:2}", root) << "\n";
    if (os.has_error()) {
      os.clear_error();
      llvm::sys::fs::remove(tmp);
      return invalid("cannot write the tune cache '" + path + "'");
    }
  }
  if (std::error_code ec = llvm::sys::fs::rename(tmp, path)) {
    llvm::sys::fs::remove(tmp);
    return invalid("cannot write the tune cache '" + path + "': " + ec.message());
  }
  return llvm::Error::success();
}

std::string defaultTuneCachePath() {
  llvm::SmallString<128> dir;
  if (!llvm::sys::path::cache_directory(dir))
    dir = ".";
  llvm::sys::path::append(dir, "tessel", "tune.json");
  return std::string(dir);
}

bool tunedBlocks(Frontend &fe, const PipelineOptions &options,
                 const runtime::Target &target, ir::BlockConfig &out) {
  auto fail = [&](const llvm::Twine &msg) {
    fe.diags->error(fe.kernel->loc, msg);
    return false;
  };
  if (!out.empty())
    return fail("give --tuned or --block, not both");
  std::vector<std::string> passNames;
  if (!options.resolvePasses(passNames))
    return false;
  std::string cachePath = options.tuneCache.empty() ? defaultTuneCachePath() : options.tuneCache.getValue();
  TuneKey key = makeTuneKey(fe, target, passNames);
  TuneCache cache(cachePath);
  cache.load();
  const CacheEntry *entry = cache.find(key.hash);
  if (!entry) {
    // The same kernel tuned with another pipeline is the likely mix-up.
    std::string hint;
    for (const auto &kv : cache.allEntries()) {
      const TuneKey &other = kv.second.key;
      if (other.kernel == key.kernel && other.shapes == key.shapes && other.target == key.target &&
          other.pipeline != key.pipeline)
        hint = " (it was tuned with --passes=" + other.pipeline + "; give the same pipeline)";
    }
    return fail("--tuned: no tuning of " + describe(key) + " in '" + cachePath + "'" + hint +
                "; run `tessel tune` on this kernel first, with the same -D, --target and "
                "pipeline flags");
  }
  if (!entry->best)
    return fail("--tuned: the tuning of " + describe(key) + " in '" + cachePath +
                "' did not finish (interrupted, or only shards of it ran); run `tessel tune` "
                "again to complete it, or `tessel tune merge` the shards' reports");
  out = *entry->best;
  return true;
}

} // namespace tessel::driver

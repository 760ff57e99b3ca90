#include "tune/TuneCache.h"
#include "support/AtomicFile.h"

#include "compiler/Compile.h"

#include "passes/BlockParams.h"
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

#include <chrono>
#include <optional>
#include <vector>

namespace json = llvm::json;

namespace tessel::tune {
using namespace compiler;
using namespace support;
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

void addEntries(const json::Object &list, ParsedCache &out) {
  for (const auto &kv : list) {
    llvm::Expected<CacheEntry> e = entryFromJSON(kv.first, kv.second);
    if (!e) {
      out.badEntries.push_back(llvm::toString(e.takeError()));
      continue;
    }
    out.entries[kv.first.str()] = std::move(*e);
  }
}

/// The end of the JSON value that starts at `text[i]` (an object or an array),
/// or npos when the text ends first (a truncated file) or it nests deeper than
/// an entry ever does.
size_t endOfValue(llvm::StringRef text, size_t i) {
  constexpr int kMaxDepth = 32;
  int depth = 0;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      if (i >= text.size())
        return llvm::StringRef::npos;
    } else if (c == '{' || c == '[') {
      if (++depth > kMaxDepth)
        return llvm::StringRef::npos;
    } else if (c == '}' || c == ']') {
      if (--depth == 0)
        return i + 1;
    }
  }
  return llvm::StringRef::npos;
}

/// The entries of a cache file that is not valid JSON, typically one cut off
/// mid-write: every complete `"<hash>": {...}` of its "entries" object.
void salvageEntries(llvm::StringRef text, ParsedCache &out) {
  size_t at = text.find("\"entries\"");
  if (at == llvm::StringRef::npos)
    return;
  llvm::StringRef rest = text.drop_front(at + 9).ltrim();
  if (!rest.consume_front(":"))
    return;
  rest = rest.ltrim();
  if (!rest.consume_front("{"))
    return;
  json::Object list;
  while (true) {
    rest = rest.ltrim(" \t\r\n,");
    if (!rest.consume_front("\""))
      break;
    size_t close = rest.find('"');
    if (close == llvm::StringRef::npos) {
      out.badEntries.push_back(
          ("entry " + rest.take_front(40) + "...: cut off (the file ends inside its name)").str());
      return addEntries(list, out);
    }
    llvm::StringRef hash = rest.take_front(close);
    if (!json::isUTF8(hash)) {
      out.badEntries.push_back("an entry whose name is not UTF-8 text (and the rest of the file)");
      return addEntries(list, out);
    }
    rest = rest.drop_front(close + 1).ltrim();
    if (!rest.consume_front(":"))
      break;
    rest = rest.ltrim();
    size_t end = rest.startswith("{") ? endOfValue(rest, 0) : llvm::StringRef::npos;
    if (end == llvm::StringRef::npos) {
      out.badEntries.push_back(("entry " + hash + ": cut off (the file ends inside it)").str());
      return addEntries(list, out);
    }
    // Bounded in depth by endOfValue.
    llvm::Expected<json::Value> value = json::parse(rest.take_front(end));
    if (value)
      list[hash] = std::move(*value);
    else
      out.badEntries.push_back(("entry " + hash + ": " + llvm::toString(value.takeError())).str());
    rest = rest.drop_front(end);
  }
  if (!rest.ltrim(" \t\r\n,").startswith("}"))
    out.badEntries.push_back("the text after the last complete entry (cut off or malformed)");
  addEntries(list, out);
}

} // namespace

ParsedCache parseCacheText(llvm::StringRef text) {
  ParsedCache out;
  auto untrusted = [&](const llvm::Twine &why) {
    out.fileError = why.str();
    return std::move(out);
  };
  if (llvm::Error deep = checkJsonDepth(text, ""))
    return untrusted(llvm::toString(std::move(deep)));
  llvm::Expected<json::Value> root = json::parse(text);
  if (!root) {
    std::string why = "not valid JSON (" + llvm::toString(root.takeError()) + ")";
    // Salvage unless the file names another version in full.
    llvm::StringRef version = text;
    size_t at = version.find("\"tessel_version\"");
    bool other = false;
    if (at != llvm::StringRef::npos) {
      version = version.drop_front(at + 16).ltrim();
      if (version.consume_front(":") && (version = version.ltrim()).consume_front("\"")) {
        size_t close = version.find('"');
        other = close != llvm::StringRef::npos && version.take_front(close) != kVersion;
      }
    }
    if (!other)
      salvageEntries(text, out);
    if (out.entries.empty())
      return untrusted(why);
    out.salvaged = why;
    return out;
  }
  const json::Object *obj = root->getAsObject();
  auto format = obj ? obj->getString("format") : llvm::None;
  if (!format || *format != kFormat)
    return untrusted("not a tessel tune cache (no \"format\": \"" + kFormat + "\")");
  auto version = obj->getString("tessel_version");
  if (!version || *version != kVersion)
    return untrusted("written by tessel " + (version ? *version : llvm::StringRef("(unknown)")) +
                   ", this is " + kVersion);
  const json::Object *list = obj->getObject("entries");
  if (!list)
    return untrusted("no 'entries' object");
  addEntries(*list, out);
  return out;
}

static std::string describe(const TuneKey &key) {
  return llvm::formatv("kernel '{0}' ({1}) on target '{2}' with {3}", key.kernel, key.shapes,
                       key.target,
                       key.pipeline.empty() ? "no passes (-O0)" : "--passes=" + key.pipeline);
}

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

namespace {

void warn(const llvm::Twine &msg) {
  llvm::WithColor::warning(llvm::errs(), "tessel") << msg << "\n";
}

const char *describeType(llvm::sys::fs::file_type type) {
  using llvm::sys::fs::file_type;
  switch (type) {
  case file_type::directory_file: return "a directory";
  case file_type::fifo_file: return "a named pipe";
  case file_type::character_file: return "a character device";
  case file_type::block_file: return "a block device";
  case file_type::socket_file: return "a socket";
  default: return "not a regular file";
  }
}

/// The file `path` names, through symlinks: written in place, so that a
/// symlinked (shared) cache stays shared. Missing is fine (a new cache);
/// anything that exists and is not a regular file is an error.
llvm::Expected<std::string> resolveCachePath(const std::string &path) {
  namespace fs = llvm::sys::fs;
  fs::file_status link;
  if (std::error_code ec = fs::status(path, link, /*follow=*/false)) {
    if (ec == std::errc::no_such_file_or_directory)
      return path;
    return invalid("cannot use the tune cache '" + path + "': " + ec.message());
  }
  std::string file = path;
  if (link.type() == fs::file_type::symlink_file) {
    llvm::SmallString<256> real;
    if (std::error_code ec = fs::real_path(path, real))
      return invalid("cannot use the tune cache '" + path + "': it is a symbolic link to " +
                     "nothing (" + ec.message() + "); remove it or create its target");
    file = std::string(real);
  }
  fs::file_status st;
  if (std::error_code ec = fs::status(file, st))
    return invalid("cannot use the tune cache '" + path + "': " + ec.message());
  if (st.type() != fs::file_type::regular_file)
    return invalid("cannot use '" + path + "' as the tune cache: it is " +
                   describeType(st.type()) + ", not a regular file; give --cache a file path");
  return file;
}

/// An advisory lock on FILE.lock beside the cache, held while the cache is
/// read, merged and rewritten. The lock file stays (removing it would race).
class CacheLock {
public:
  llvm::Error acquire(const std::string &file) {
    namespace fs = llvm::sys::fs;
    std::string lockPath = file + ".lock";
    if (std::error_code ec = fs::openFileForReadWrite(lockPath, fd, fs::CD_OpenAlways, fs::OF_None))
      return invalid("cannot lock the tune cache '" + file + "' (" + lockPath + "): " +
                     ec.message());
    if (fs::tryLockFile(fd, std::chrono::seconds(5))) {
      warn("waiting for another tessel to release the tune cache '" + file + "' (" + lockPath +
           ")");
      if (std::error_code ec = fs::lockFile(fd))
        return invalid("cannot lock the tune cache '" + file + "' (" + lockPath + "): " +
                       ec.message());
    }
    locked = true;
    return llvm::Error::success();
  }
  ~CacheLock() {
    if (locked)
      llvm::sys::fs::unlockFile(fd);
    if (fd >= 0)
      llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  }

private:
  int fd = -1;
  bool locked = false;
};

/// Copies the cache file that could not be read in full to FILE.bak, or
/// FILE.bak.1, .2, ... when that exists: an earlier backup is never
/// overwritten. Returns the backup's path.
llvm::Expected<std::string> backUp(const std::string &file) {
  std::string bak = file + ".bak";
  for (int n = 1; llvm::sys::fs::exists(bak); ++n)
    bak = file + ".bak." + std::to_string(n);
  if (std::error_code ec = llvm::sys::fs::copy_file(file, bak))
    return invalid("cannot back up the tune cache '" + file + "' to '" + bak +
                   "': " + ec.message());
  return bak;
}

} // namespace

llvm::Error TuneCache::check() const {
  llvm::Expected<std::string> file = resolveCachePath(path);
  if (!file)
    return file.takeError();
  // What save() will need, tried now: a run whose results cannot be kept
  // should not start (they were lost with a warning at the end).
  auto unusable = [&](const llvm::Twine &what, std::error_code ec) {
    return invalid("cannot write the tune cache '" + path + "': " + what + ": " + ec.message() +
                   "; give another --cache, or --no-cache");
  };
  llvm::StringRef dir = llvm::sys::path::parent_path(*file);
  if (!dir.empty())
    if (std::error_code ec = llvm::sys::fs::create_directories(dir))
      return unusable("cannot create '" + dir + "'", ec);
  int fd = -1;
  std::string lockPath = *file + ".lock";
  if (std::error_code ec = llvm::sys::fs::openFileForReadWrite(lockPath, fd, llvm::sys::fs::CD_OpenAlways,
                                                              llvm::sys::fs::OF_None))
    return unusable("cannot open its lock '" + lockPath + "'", ec);
  llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  // save() writes a temporary file beside the cache and renames it over it:
  // the directory must take new files (the cache file's own mode does not matter).
  llvm::SmallString<256> probe(dir.empty() ? llvm::StringRef(".") : dir);
  llvm::sys::path::append(probe, llvm::sys::path::filename(*file) + ".probe-%%%%%%");
  llvm::SmallString<256> probePath;
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(probe, fd, probePath))
    return unusable("cannot create files in its directory", ec);
  llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  llvm::sys::fs::remove(probePath);
  return llvm::Error::success();
}

void TuneCache::load(bool readOnly) {
  entries.clear();
  llvm::Expected<std::string> file = resolveCachePath(path);
  if (!file) {
    warn("ignoring the tune cache: " + llvm::toString(file.takeError()));
    return;
  }
  auto buffer = llvm::MemoryBuffer::getFile(*file, /*IsText=*/true);
  if (!buffer) {
    if (buffer.getError() != std::errc::no_such_file_or_directory)
      warn("ignoring the tune cache '" + path + "': " + buffer.getError().message());
    return;
  }
  ParsedCache parsed = parseCacheText((*buffer)->getBuffer());
  if (parsed.fileError)
    warn("ignoring the tune cache '" + path + "': " + *parsed.fileError +
         (readOnly ? "" : "; it will be rewritten"));
  else if (parsed.salvaged)
    warn(llvm::formatv("the tune cache '{0}' is {1}; kept the {2} complete entries", path,
                       *parsed.salvaged, parsed.entries.size()));
  for (const std::string &bad : parsed.badEntries)
    warn("the tune cache '" + path + "': ignoring " + bad);
  entries = std::move(parsed.entries);
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
  llvm::Expected<std::string> resolved = resolveCachePath(path);
  if (!resolved)
    return resolved.takeError();
  const std::string &file = *resolved;
  llvm::StringRef dir = llvm::sys::path::parent_path(file);
  if (!dir.empty())
    if (std::error_code ec = llvm::sys::fs::create_directories(dir))
      return invalid("cannot create '" + dir + "': " + ec.message());

  // Under the lock: re-read the file, merge this run's entries into it, write.
  CacheLock lock;
  if (llvm::Error err = lock.acquire(file))
    return err;
  std::map<std::string, CacheEntry> merged;
  if (auto buffer = llvm::MemoryBuffer::getFile(file, /*IsText=*/true)) {
    ParsedCache onDisk = parseCacheText((*buffer)->getBuffer());
    if (!onDisk.clean()) {
      llvm::Expected<std::string> bak = backUp(file);
      if (!bak)
        return bak.takeError();
      warn("kept a copy of the tune cache '" + path + "' as it was (not all of it could be " +
           "read) in '" + *bak + "'");
    }
    merged = std::move(onDisk.entries);
  }
  for (const auto &[hash, entry] : entries) {
    auto it = merged.find(hash);
    if (it == merged.end()) {
      merged[hash] = entry;
    } else if (updated.count(hash)) {
      // Both this run and another one tuned this key: keep every
      // configuration, this run's result where both have one.
      CacheEntry &disk = it->second;
      for (const auto &[name, result] : entry.configs)
        disk.configs[name] = result;
      if (entry.best)
        disk.best = entry.best;
      disk.key = entry.key;
    }
  }

  json::Object list;
  for (const auto &[hash, entry] : merged)
    list[hash] = entryToJSON(entry);
  json::Value root = json::Object{
      {"format", kFormat}, {"tessel_version", kVersion}, {"entries", std::move(list)}};

  if (llvm::Error e = writeFileAtomically(file, llvm::formatv("{0:2}\n", root).str()))
    return invalid("cannot write the tune cache '" + path + "': " + llvm::toString(std::move(e)));
  return llvm::Error::success();
}

std::string defaultTuneCachePath() {
  llvm::SmallString<128> dir;
  if (!llvm::sys::path::cache_directory(dir))
    dir = ".";
  llvm::sys::path::append(dir, "tessel", "tune.json");
  return std::string(dir);
}

bool tunedBlocks(compiler::Frontend &fe, llvm::StringRef cacheFile,
                 llvm::ArrayRef<std::string> passNames, const runtime::Target &target,
                 ir::BlockConfig &out) {
  auto fail = [&](const llvm::Twine &msg) {
    fe.diags->error(fe.kernel->loc, msg);
    return false;
  };
  if (!out.empty())
    return fail("give --tuned or --block, not both");
  std::string cachePath = cacheFile.str();
  TuneKey key = makeTuneKey(fe, target, passNames);
  TuneCache cache(cachePath);
  cache.load(/*readOnly=*/true);
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
  // The cache is a file users can edit: its best must be a configuration
  // it measured, and one this kernel can be built with.
  std::string best = formatBlock(*entry->best);
  auto measured = entry->configs.find(best);
  if (measured == entry->configs.end() || measured->second.status != ConfigStatus::Simulated)
    return fail("--tuned: the best recorded for " + describe(key) + " in '" + cachePath + "', " + best +
                ", has no simulated result there (was the cache edited?); run `tessel tune` again");
  if (llvm::Error err = passes::validateBlockConfig(*entry->best, tileGenBlockParams(fe, target),
                                                    resultRows(*fe.kernel), target)) {
    std::string why = llvm::toString(std::move(err));
    llvm::StringRef reason(why);
    reason.consume_front("--block ");
    return fail("--tuned: the best recorded for " + describe(key) + " in '" + cachePath + "' is not valid for " +
                "this kernel (" + reason + "); run `tessel tune` again");
  }
  size_t overBudget = llvm::count_if(entry->configs, [](const auto &kv) {
    return kv.second.status == ConfigStatus::OverBudget;
  });
  if (overBudget)
    warn(llvm::formatv("--tuned: the tuning of {0} left {1} of {2} configurations unsimulated (--budget); "
                       "its best, {3}, is the best of those it simulated",
                       describe(key), overBudget, entry->configs.size(), best));
  out = *entry->best;
  return true;
}

} // namespace tessel::tune

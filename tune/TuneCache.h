//===- tune/TuneCache.h - tessel tune's results on disk ------*- C++ -*-===//
//
// One JSON file (default: $XDG_CACHE_HOME/tessel/tune.json, else
// ~/.cache/tessel/tune.json) holds the results of every tuning, one entry per
// key. The key hashes what decides the answer: the selected kernel's source
// text, its tensor shapes (after -D), the target description, the pass
// pipeline and the tessel version. Results are stored per configuration, so
// an interrupted or sharded run is reused; `best` is written by a run that
// finished. A file that is not a tune cache or from another tessel version is
// never trusted: a warning, then it is ignored, backed up and rewritten. An
// entry that does not parse is dropped with a warning naming it; the others
// are kept (also from a file cut off mid-write). Writes lock FILE.lock,
// re-read and merge, and go through symlinks to their target; a path that
// exists and is not a regular file is refused.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_TUNE_TUNECACHE_H
#define TESSEL_TUNE_TUNECACHE_H

#include "compiler/Compile.h"
#include "tune/TuneResult.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tessel::tune {

/// What one tuning answers for, readable, and its hash.
struct TuneKey {
  std::string kernel;   ///< name
  std::string shapes;   ///< "X: bf16[640 x 7168], ... -> bf16[640 x 18432]"
  std::string target;   ///< name
  std::string pipeline; ///< as a --passes= value
  std::string hash;     ///< hex SHA-1 of the above, the kernel's text, the target's content, the version
};

/// The key of the frontend's selected kernel.
TuneKey makeTuneKey(const compiler::Frontend &fe, const runtime::Target &target,
                    llvm::ArrayRef<std::string> passes);

/// The text of `kernel` in `sourceText` (the buffer its locations point
/// into): from its name to its closing brace.
llvm::StringRef kernelSourceText(const ast::Kernel &kernel, llvm::StringRef sourceText);

struct CacheEntry {
  TuneKey key;
  std::map<std::string, ConfigResult> configs; ///< by formatBlock
  std::optional<BlockConfig> best;             ///< the winner of the last finished run
};

/// What a cache file holds: every entry that parses exactly, and why each of
/// the others (or the whole file) could not be trusted.
struct ParsedCache {
  std::map<std::string, CacheEntry> entries;
  std::vector<std::string> badEntries;  ///< "entry <hash>: <why>"
  std::optional<std::string> fileError; ///< the whole file is untrusted (no entry was kept)
  std::optional<std::string> salvaged;  ///< why it is not valid JSON, when entries were salvaged
  bool clean() const { return badEntries.empty() && !fileError && !salvaged; }
};

/// Parses a cache file's text, keeping every entry that can be trusted.
ParsedCache parseCacheText(llvm::StringRef text);

class TuneCache {
public:
  explicit TuneCache(std::string path) : path(std::move(path)) {}

  /// An error when the path cannot hold a cache: it exists and is not a
  /// regular file (after symlinks), is a symlink to nothing, or cannot be
  /// written (its directory or lock cannot be created, the file is
  /// read-only). save() refuses such a path too; check() lets a command stop
  /// before working.
  llvm::Error check() const;
  /// Reads the file (a missing one is an empty cache); untrusted content is
  /// reported as a warning on stderr and ignored, entry by entry. `readOnly`:
  /// the caller will not save (the warning does not promise a rewrite).
  void load(bool readOnly = false);
  const std::string &filePath() const { return path; }
  const CacheEntry *find(const std::string &hash) const;
  const std::map<std::string, CacheEntry> &allEntries() const { return entries; }
  /// The entry of `key`, created if absent; save() writes it back.
  CacheEntry &update(const TuneKey &key);
  /// Writes the file atomically under an advisory lock (FILE.lock), after
  /// re-reading it: entries other processes wrote are kept, and an entry both
  /// updated keeps every configuration (this process's result where both have
  /// one). A file that could not be read in full is first copied to FILE.bak
  /// (or FILE.bak.N: an existing backup is never overwritten).
  llvm::Error save() const;

private:
  std::string path;
  std::map<std::string, CacheEntry> entries;
  std::set<std::string> updated;
};

/// $XDG_CACHE_HOME/tessel/tune.json, else ~/.cache/tessel/tune.json.
std::string defaultTuneCachePath();

/// --tuned: the best block configuration `tessel tune` cached in `cacheFile`
/// for the frontend's kernel on `target` with the pipeline `passNames`.
/// Reports a clear error (--block given too, no tuning yet, an unfinished
/// one) and returns false.
bool tunedBlocks(compiler::Frontend &fe, llvm::StringRef cacheFile,
                 llvm::ArrayRef<std::string> passNames, const runtime::Target &target,
                 ir::BlockConfig &out);

} // namespace tessel::tune

#endif

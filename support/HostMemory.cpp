#include "support/HostMemory.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdlib>

namespace tessel {

std::optional<uint64_t> parseByteSize(llvm::StringRef text) {
  llvm::StringRef t = text.trim();
  uint64_t scale = 1;
  if (t.endswith_insensitive("ib"))
    t = t.drop_back(2);
  else if (t.endswith_insensitive("b"))
    t = t.drop_back();
  if (!t.empty()) {
    switch (llvm::toLower(t.back())) {
    case 'k': scale = uint64_t(1) << 10; break;
    case 'm': scale = uint64_t(1) << 20; break;
    case 'g': scale = uint64_t(1) << 30; break;
    case 't': scale = uint64_t(1) << 40; break;
    default: break;
    }
    if (scale != 1)
      t = t.drop_back();
  }
  uint64_t v = 0;
  if (t.empty() || t.getAsInteger(10, v) || v == 0 || v > UINT64_MAX / scale)
    return std::nullopt;
  return v * scale;
}

std::optional<uint64_t> parseMemAvailable(llvm::StringRef meminfo) {
  llvm::SmallVector<llvm::StringRef, 64> lines;
  meminfo.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    if (!line.consume_front("MemAvailable:"))
      continue;
    line = line.trim();
    uint64_t kb = 0;
    if (!line.consume_back_insensitive("kB") || line.trim().getAsInteger(10, kb))
      return std::nullopt;
    return kb * 1024;
  }
  return std::nullopt;
}

std::string formatBytes(double bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  return u == 0 ? llvm::formatv("{0} B", int64_t(bytes)).str() : llvm::formatv("{0:f2} {1}", bytes, units[u]).str();
}

static std::optional<uint64_t> readNumber(const char *path) {
  auto buf = llvm::MemoryBuffer::getFileAsStream(path);
  uint64_t v = 0;
  if (!buf || (*buf)->getBuffer().trim().getAsInteger(10, v))
    return std::nullopt; // absent, or "max"
  return v;
}

/// A cgroup's limit minus its usage (v2, then v1); nullopt without one.
static std::optional<uint64_t> cgroupRoom() {
  const char *paths[][2] = {{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"},
                            {"/sys/fs/cgroup/memory/memory.limit_in_bytes",
                             "/sys/fs/cgroup/memory/memory.usage_in_bytes"}};
  for (auto &p : paths) {
    std::optional<uint64_t> max = readNumber(p[0]), used = readNumber(p[1]);
    // v1 reports "no limit" as a huge page-rounded number.
    if (max && used && *max < (uint64_t(1) << 60))
      return *max > *used ? *max - *used : 0;
  }
  return std::nullopt;
}

llvm::Expected<std::optional<MemoryLimit>> hostMemoryLimit() {
  if (const char *env = std::getenv("TESSEL_MEMORY_LIMIT")) {
    if (std::optional<uint64_t> v = parseByteSize(env))
      return MemoryLimit{*v, "TESSEL_MEMORY_LIMIT"};
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "TESSEL_MEMORY_LIMIT='%s' is not a size: give bytes, or a count with K, M, G "
                                   "or T (e.g. 16G)",
                                   env);
  }
  std::optional<MemoryLimit> limit;
  if (auto buf = llvm::MemoryBuffer::getFileAsStream("/proc/meminfo"))
    if (std::optional<uint64_t> avail = parseMemAvailable((*buf)->getBuffer()))
      limit = MemoryLimit{*avail, "the memory this machine has available (MemAvailable in /proc/meminfo)"};
  if (std::optional<uint64_t> room = cgroupRoom(); room && (!limit || *room < limit->bytes))
    limit = MemoryLimit{*room, "the memory left under this cgroup's limit"};
  return limit;
}

} // namespace tessel

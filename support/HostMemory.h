//===- support/HostMemory.h - The memory a run may still take ---*- C++ -*-===//
//
// Work whose size is known before it starts (a functional simulation holds
// every HBM tensor's values) is refused up front when it cannot fit, with
// the figure and the limit, rather than dying half-way with "out of memory".
// The limit is $TESSEL_MEMORY_LIMIT when set (bytes, or with a K/M/G/T
// suffix: powers of 1024), else what the machine has available: the least of
// MemAvailable in /proc/meminfo and, in a cgroup (v2 memory.max or v1
// memory.limit_in_bytes), its limit minus its usage.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_SUPPORT_HOSTMEMORY_H
#define TESSEL_SUPPORT_HOSTMEMORY_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>

namespace tessel {

struct MemoryLimit {
  uint64_t bytes = 0;
  std::string source; ///< where the figure comes from, for messages
};

/// The limit described above; nullopt when the machine says nothing (then
/// nothing is refused). An unreadable $TESSEL_MEMORY_LIMIT is an error.
llvm::Expected<std::optional<MemoryLimit>> hostMemoryLimit();

/// "8G", "512M", "1048576": bytes, with an optional K, M, G or T suffix
/// (powers of 1024, case-insensitive, an optional trailing "B" or "iB").
std::optional<uint64_t> parseByteSize(llvm::StringRef text);

/// The MemAvailable figure of /proc/meminfo's text, in bytes.
std::optional<uint64_t> parseMemAvailable(llvm::StringRef meminfo);

/// "1.50 GiB", "12.00 MiB", "512 B".
std::string formatBytes(double bytes);

} // namespace tessel

#endif

//===- fuzz/FuzzUtil.h - What every libFuzzer target shares ----*- C++ -*-===//
//
// A fuzz target feeds bytes to one parser. Anything the parser returns is
// fine (a value or an error); a crash, a sanitizer report or a failed
// invariant below is a bug. Round trips that the parsers document
// (print(parse(print(x))) == print(x)) are checked as invariants.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_FUZZ_FUZZUTIL_H
#define TESSEL_FUZZ_FUZZUTIL_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

namespace tessel::fuzz {

inline llvm::StringRef asText(const uint8_t *data, size_t size) {
  return llvm::StringRef(reinterpret_cast<const char *>(data), size);
}

/// Stops the run with a message (libFuzzer saves the input as a crash).
[[noreturn]] inline void invariantFailed(llvm::StringRef what, llvm::StringRef a, llvm::StringRef b) {
  llvm::errs() << "fuzz invariant failed: " << what << "\n--- first:\n" << a << "\n--- second:\n"
               << b << "\n";
  std::abort();
}

/// The parsed value, or none: rejecting an input (with an error) is fine.
template <typename T> std::optional<T> accepted(llvm::Expected<T> parsed) {
  if (!parsed) {
    llvm::consumeError(parsed.takeError());
    return std::nullopt;
  }
  return std::move(*parsed);
}

/// Printing is a fixed point: `printed` (of an accepted input) parses back,
/// and `reprinted` (its print, or none when it did not parse) is the same.
inline void checkFixedPoint(const std::string &printed, const std::optional<std::string> &reprinted) {
  if (!reprinted)
    invariantFailed("the printed form is not accepted", printed, "");
  if (*reprinted != printed)
    invariantFailed("printing is not a fixed point", printed, *reprinted);
}

} // namespace tessel::fuzz

#endif

//===- support/Scan.h - What the three lexers share -------------*- C++ -*-===//
//
// The .tsl, tile IR and .tasm lexers each have their own tokens and grammar;
// these are the character classes and scanners they have in common. A
// scanner takes the current position and the end of the buffer and returns
// the position after what it scanned.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_SUPPORT_SCAN_H
#define TESSEL_SUPPORT_SCAN_H

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>

namespace tessel::scan {

/// A letter or '_': what starts an identifier in every tessel language.
inline bool isIdentStart(char c) { return llvm::isAlpha(c) || c == '_'; }
/// A letter, digit or '_'.
inline bool isIdentChar(char c) { return llvm::isAlnum(c) || c == '_'; }
/// An identifier character or '.': IR and .tasm names (`%x.T`, `activation.gelu`).
inline bool isNameChar(char c) { return isIdentChar(c) || c == '.'; }
/// Blank space other than a newline.
inline bool isBlank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

template <class Pred> const char *skipWhile(const char *p, const char *end, Pred pred) {
  while (p < end && pred(*p))
    ++p;
  return p;
}

/// The end of the line (the '\n' itself, or `end`): where a line comment stops.
inline const char *skipToEndOfLine(const char *p, const char *end) {
  return skipWhile(p, end, [](char c) { return c != '\n'; });
}

/// A decimal number at `p` (which must be a digit): digits, then optionally
/// `.` digits and an exponent `e[+-]digits`. Sets `isFloat` when either is
/// present. An `e` not followed by digits is not part of the number.
const char *scanNumber(const char *p, const char *end, bool &isFloat);

/// The value of a run of decimal digits, or nullopt when it exceeds `max`.
std::optional<uint64_t> parseDecimal(llvm::StringRef digits, uint64_t max = INT64_MAX);

} // namespace tessel::scan

#endif

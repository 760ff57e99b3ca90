//===- support/Scan.cpp - What the three lexers share ---------------------===//
#include "support/Scan.h"

namespace tessel::scan {

const char *scanNumber(const char *p, const char *end, bool &isFloat) {
  isFloat = false;
  p = skipWhile(p, end, llvm::isDigit);
  if (p < end && *p == '.') {
    isFloat = true;
    p = skipWhile(p + 1, end, llvm::isDigit);
  }
  if (p < end && (*p == 'e' || *p == 'E')) {
    const char *q = p + 1;
    if (q < end && (*q == '+' || *q == '-'))
      ++q;
    if (q < end && llvm::isDigit(*q)) {
      isFloat = true;
      p = skipWhile(q, end, llvm::isDigit);
    }
  }
  return p;
}

std::optional<uint64_t> parseDecimal(llvm::StringRef digits, uint64_t max) {
  if (digits.empty())
    return std::nullopt;
  uint64_t v = 0;
  for (char d : digits) {
    if (!llvm::isDigit(d))
      return std::nullopt;
    uint64_t digit = uint64_t(d - '0');
    if (v > (max - digit) / 10)
      return std::nullopt;
    v = v * 10 + digit;
  }
  return v;
}

} // namespace tessel::scan

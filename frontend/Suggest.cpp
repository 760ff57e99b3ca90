//===- frontend/Suggest.cpp - "did you mean" for misspelled names --------===//
#include "frontend/Suggest.h"

#include <algorithm>

namespace tessel::frontend {

std::string closestName(llvm::StringRef name, llvm::ArrayRef<std::string> candidates) {
  unsigned limit = std::max<unsigned>(2, unsigned(name.size() / 3));
  std::string best;
  unsigned bestDist = limit + 1;
  for (const std::string &c : candidates) {
    unsigned d = name.edit_distance(c, /*AllowReplacements=*/true, /*MaxEditDistance=*/limit + 1);
    // A distance as large as both names means nothing of either survives.
    if (d < bestDist && d < std::max(name.size(), c.size())) {
      best = c;
      bestDist = d;
    }
  }
  return best;
}

std::string quotedList(llvm::ArrayRef<std::string> names) {
  std::string out;
  for (const std::string &n : names) {
    if (!out.empty())
      out += ", ";
    out += "'" + n + "'";
  }
  return out;
}

} // namespace tessel::frontend

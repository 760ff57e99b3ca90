//===- support/Suggest.cpp - "did you mean" and name lists ----------------===//
#include "support/Suggest.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>

namespace tessel {

std::string closestName(llvm::StringRef name, llvm::ArrayRef<llvm::StringRef> candidates) {
  unsigned limit = std::max<unsigned>(2, unsigned(name.size() / 3));
  llvm::StringRef best;
  unsigned bestDist = limit + 1;
  for (llvm::StringRef c : candidates) {
    unsigned d = name.edit_distance(c, /*AllowReplacements=*/true, /*MaxEditDistance=*/limit + 1);
    // A distance as large as both names means nothing of either survives.
    if (d < bestDist && d < std::max(name.size(), c.size())) {
      best = c;
      bestDist = d;
    }
  }
  return best.str();
}

std::string closestName(llvm::StringRef name, llvm::ArrayRef<std::string> candidates) {
  std::vector<llvm::StringRef> refs(candidates.begin(), candidates.end());
  return closestName(name, refs);
}

std::string alternatives(llvm::ArrayRef<llvm::StringRef> names) {
  if (names.size() < 2)
    return llvm::join(names, "");
  return llvm::join(names.drop_back(), ", ") + " or " + names.back().str();
}

std::string quotedList(llvm::ArrayRef<std::string> names) {
  return names.empty() ? "" : "'" + llvm::join(names, "', '") + "'";
}

} // namespace tessel

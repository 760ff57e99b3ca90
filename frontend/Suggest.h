//===- frontend/Suggest.h - "did you mean" for misspelled names -*- C++ -*-===//
#ifndef TESSEL_FRONTEND_SUGGEST_H
#define TESSEL_FRONTEND_SUGGEST_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace tessel::frontend {

/// The candidate closest to `name` by edit distance, or "" when none is close
/// enough to be a plausible typo. Ties go to the earliest candidate.
std::string closestName(llvm::StringRef name, llvm::ArrayRef<std::string> candidates);

/// `'a', 'b', 'c'` (quoted, comma-separated, in the given order).
std::string quotedList(llvm::ArrayRef<std::string> names);

} // namespace tessel::frontend

#endif

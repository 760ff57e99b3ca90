//===- support/Suggest.h - "did you mean" and name lists --------*- C++ -*-===//
//
// Every "did you mean" in tessel (DSL names, IR ops and values, .tasm
// statements, pass names) picks its candidate with closestName, so one rule
// decides what counts as a plausible typo.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_SUPPORT_SUGGEST_H
#define TESSEL_SUPPORT_SUGGEST_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace tessel {

/// The candidate closest to `name` by edit distance, or "" when none is a
/// plausible typo: at most max(2, |name| / 3) edits, and fewer edits than the
/// longer of the two names has characters. Ties go to the earliest candidate.
std::string closestName(llvm::StringRef name, llvm::ArrayRef<llvm::StringRef> candidates);
std::string closestName(llvm::StringRef name, llvm::ArrayRef<std::string> candidates);

/// "a, b or c" (unquoted), for "expected a, b or c" messages.
std::string alternatives(llvm::ArrayRef<llvm::StringRef> names);

/// `'a', 'b', 'c'` (quoted, comma-separated, in the given order).
std::string quotedList(llvm::ArrayRef<std::string> names);

} // namespace tessel

#endif

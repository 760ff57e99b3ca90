//===- support/JsonLimits.h - JSON parsing with a nesting limit -*- C++ -*-===//
//
// llvm::json::parse recurses once per nested array or object, so a file of
// 100,000 '[' overflows the stack. Every JSON tessel reads (target
// descriptions, the tune cache, tune reports) goes through checkJsonDepth
// first: a linear scan that needs no stack.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_SUPPORT_JSONLIMITS_H
#define TESSEL_SUPPORT_JSONLIMITS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

namespace tessel {

/// Nesting of arrays and objects allowed in any JSON tessel reads. Its own
/// files nest at most 6 levels.
constexpr unsigned kMaxJsonDepth = 64;

/// Success if no '[' or '{' outside a string of `text` opens a level deeper
/// than `maxDepth`; otherwise "WHAT: JSON nested deeper than N levels (line
/// L, column C)" at the first bracket past the limit ("WHAT: " left out when
/// `what` is empty). Does not otherwise validate the text.
llvm::Error checkJsonDepth(llvm::StringRef text, llvm::StringRef what,
                           unsigned maxDepth = kMaxJsonDepth);

/// checkJsonDepth, then llvm::json::parse. A syntax error reads
/// "WHAT: invalid JSON: <the parser's message>".
llvm::Expected<llvm::json::Value> parseJsonBounded(llvm::StringRef text, llvm::StringRef what,
                                                   unsigned maxDepth = kMaxJsonDepth);

} // namespace tessel

#endif // TESSEL_SUPPORT_JSONLIMITS_H

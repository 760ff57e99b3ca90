//===- frontend/Parser.h - .tsl tokens to an untyped AST -------*- C++ -*-===//
//
// A recursive-descent parser for the grammar in docs/language.md. Precedence,
// tightest first: postfix `.T`, then `@` (left-assoc), then `*`, then `+`.
// Errors are reported through the DiagnosticEngine; the parser recovers at
// statement and declaration boundaries and stops at kMaxErrors. Expressions
// deeper than kMaxExprDepth are rejected, so later recursive walks over the
// AST are bounded.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_FRONTEND_PARSER_H
#define TESSEL_FRONTEND_PARSER_H

#include "frontend/AST.h"
#include "ir/Diagnostics.h"

#include "llvm/ADT/StringRef.h"

#include <memory>

namespace tessel::frontend {

/// The deepest expression tree the parser accepts (nesting and operator chains).
constexpr unsigned kMaxExprDepth = 200;

/// Parses `buffer` (which must live in diags.sourceMgr()). Returns the module
/// even after errors (what could be parsed); check diags.hadError().
/// `requireKernel`: a file without a kernel is an error (not for the prelude).
std::unique_ptr<ast::Module> parseModule(llvm::StringRef buffer, DiagnosticEngine &diags,
                                         bool requireKernel = true);

} // namespace tessel::frontend

#endif

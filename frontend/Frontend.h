//===- frontend/Frontend.h - .tsl source to a typed AST --------*- C++ -*-===//
#ifndef TESSEL_FRONTEND_FRONTEND_H
#define TESSEL_FRONTEND_FRONTEND_H

#include "frontend/AST.h"
#include "ir/Diagnostics.h"

#include "llvm/Support/raw_ostream.h"

#include <map>
#include <memory>
#include <string>

namespace tessel {

/// A `-D NAME=VALUE` override as given on the command line (the value is
/// validated by Sema, so a non-integer gets a proper diagnostic).
struct Define {
  std::string name;
  std::string value;
};

/// Parses the main buffer of `diags.sourceMgr()` and type-checks it with the
/// given constant overrides. Returns null after reporting errors.
std::unique_ptr<ast::Module> parseAndCheck(DiagnosticEngine &diags,
                                           const std::vector<Define> &defines);

/// The prelude's source (frontend/prelude.tsl, compiled in).
llvm::StringRef preludeText();

/// Prints the typed AST (`tessel compile --emit=ast`), with each node's type
/// and location (`line:col`).
void printAST(const ast::Module &module, llvm::SourceMgr &sm, llvm::raw_ostream &os);

} // namespace tessel

#endif

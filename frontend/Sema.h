//===- frontend/Sema.h - Constants, names and shapes of a .tsl module -*- C++ -*-===//
//
// Runs on a module the parser built without errors:
//   1. binds every `const` (checking redefinitions and values), then applies
//      the `-D NAME=INT` overrides (unknown names and bad values are errors);
//   2. resolves every shape dimension to a positive integer <= ast::kMaxDim;
//   3. per kernel: checks parameter and local names are unique, resolves each
//      Ref to a parameter or an earlier assignment, and types every Expr
//      (inner dimensions of `@`, equal shapes for `*` `+`, equal dtypes);
//   4. checks the return value's type equals the declared result type.
// Sema is about the language only: it does not require multiples of 128
// (TileGen reports what the hardware mapping needs).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_FRONTEND_SEMA_H
#define TESSEL_FRONTEND_SEMA_H

#include "frontend/AST.h"
#include "frontend/Frontend.h"
#include "ir/Diagnostics.h"

#include <vector>

namespace tessel::frontend {

/// Fills in every `type` of the module. Returns false after reporting errors.
bool checkModule(ast::Module &module, const std::vector<Define> &defines, DiagnosticEngine &diags);

/// A compact rendering of an expression for messages: `X @ U`, `silu(A).T`.
/// Long renderings are shortened with "...".
std::string exprText(const ast::Expr &e);

} // namespace tessel::frontend

#endif

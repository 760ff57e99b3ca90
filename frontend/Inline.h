//===- frontend/Inline.h - Calls to reductions and functions, resolved -*- C++ -*-===//
//
// Runs after parsing, before Sema. Every Call node of a kernel becomes plain
// expressions:
//   - `sum|max|min|mean(x, axis=A)`: a Reduce node over the columns (A = 1 or
//     -1); A = 0 or -2 reduces the rows as `reduce(x.T, axis=1).T`;
//   - a call of a function (`fn`, from the prelude or the file): its body
//     inlined. Each argument that is not a name or a number is first assigned
//     to a fresh local, each local of the body becomes a fresh local of the
//     kernel (`softmax1_m`), and the call is replaced by the body's return
//     expression. Nodes from a body remember the call (Expr::callLoc) so that
//     errors inside it get a note at the call.
// Errors: unknown functions (with "did you mean"), argument mismatches, axis
// out of range, recursion, names a body does not define.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_FRONTEND_INLINE_H
#define TESSEL_FRONTEND_INLINE_H

#include "frontend/AST.h"
#include "ir/Diagnostics.h"

namespace tessel::frontend {

/// Resolves every call in `module`'s kernels. Returns false after errors.
bool expandCalls(ast::Module &module, DiagnosticEngine &diags);

/// The names `sum`, `max`, `min`, `mean`: the reductions a call may name.
const std::vector<std::string> &reductionNames();

} // namespace tessel::frontend

#endif

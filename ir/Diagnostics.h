//===- ir/Diagnostics.h - Located, clang-style diagnostics -----*- C++ -*-===//
//
// One place every compiler stage reports errors through: llvm::SourceMgr
// prints `file:line:col: error: message`, the source line and a caret.
// Errors are counted so callers can stop after the first failing stage.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_IR_DIAGNOSTICS_H
#define TESSEL_IR_DIAGNOSTICS_H

#include "llvm/ADT/Twine.h"
#include "llvm/Support/SMLoc.h"
#include "llvm/Support/SourceMgr.h"

namespace tessel {

class DiagnosticEngine {
public:
  explicit DiagnosticEngine(llvm::SourceMgr &sm) : sm(sm) {}
  /// A quiet engine counts errors without printing them: for trial
  /// compilations (select-blocks' candidates) whose failures are expected.
  static DiagnosticEngine quiet(llvm::SourceMgr &sm) {
    DiagnosticEngine d(sm);
    d.silent = true;
    return d;
  }

  /// Reports an error at `loc` (an invalid loc prints `tessel: error: ...`).
  void error(llvm::SMLoc loc, const llvm::Twine &msg);
  void warning(llvm::SMLoc loc, const llvm::Twine &msg);
  void note(llvm::SMLoc loc, const llvm::Twine &msg);

  unsigned errorCount() const { return numErrors; }
  bool hadError() const { return numErrors != 0; }
  llvm::SourceMgr &sourceMgr() { return sm; }

private:
  void report(llvm::SMLoc loc, llvm::SourceMgr::DiagKind kind, const llvm::Twine &msg);
  llvm::SourceMgr &sm;
  unsigned numErrors = 0;
  bool silent = false;
};

} // namespace tessel

#endif

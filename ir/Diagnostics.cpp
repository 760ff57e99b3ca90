#include "ir/Diagnostics.h"

#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

namespace tessel {

void DiagnosticEngine::report(llvm::SMLoc loc, llvm::SourceMgr::DiagKind kind,
                              const llvm::Twine &msg) {
  if (kind == llvm::SourceMgr::DK_Error)
    ++numErrors;
  if (silent)
    return;
  if (loc.isValid() && sm.FindBufferContainingLoc(loc) != 0) {
    sm.PrintMessage(llvm::errs(), loc, kind, msg);
    return;
  }
  const char *label = kind == llvm::SourceMgr::DK_Error     ? "error"
                      : kind == llvm::SourceMgr::DK_Warning ? "warning"
                                                            : "note";
  llvm::errs() << "tessel: " << label << ": " << msg << "\n";
}

void DiagnosticEngine::error(llvm::SMLoc loc, const llvm::Twine &msg) {
  report(loc, llvm::SourceMgr::DK_Error, msg);
}
void DiagnosticEngine::warning(llvm::SMLoc loc, const llvm::Twine &msg) {
  report(loc, llvm::SourceMgr::DK_Warning, msg);
}
void DiagnosticEngine::note(llvm::SMLoc loc, const llvm::Twine &msg) {
  report(loc, llvm::SourceMgr::DK_Note, msg);
}

} // namespace tessel

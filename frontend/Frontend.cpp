//===- frontend/Frontend.cpp - .tsl source to a typed AST ----------------===//
//
// Rejects input that is not text up front (one error, not one per byte),
// then parses, then runs Sema only when parsing succeeded (so Sema never sees
// a half-built kernel and never cascades errors from a syntax error).
//
//===----------------------------------------------------------------------===//
#include "frontend/Frontend.h"

#include "frontend/Inline.h"
#include "frontend/Parser.h"
#include "frontend/Sema.h"

#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/MemoryBuffer.h"

#include <fmt/format.h>

namespace tessel {

static const char kPreludeText[] =
#include "PreludeText.inc"
    ;

llvm::StringRef preludeText() { return kPreludeText; }

/// Parses the prelude (a buffer of its own, so errors inside inlined
/// functions point into it) and returns its functions.
static std::vector<ast::Function> parsePrelude(DiagnosticEngine &diags) {
  llvm::SourceMgr &sm = diags.sourceMgr();
  unsigned id = sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBuffer(preludeText(), "<prelude>"),
                                      llvm::SMLoc());
  std::unique_ptr<ast::Module> m =
      frontend::parseModule(sm.getMemoryBuffer(id)->getBuffer(), diags, /*requireKernel=*/false);
  for (ast::Function &f : m->functions)
    f.fromPrelude = true;
  return std::move(m->functions);
}

/// Reports a file that is not UTF-8 text (NUL bytes or invalid UTF-8) at a
/// position given in the message: printing the "source line" of a binary file
/// would dump garbage.
static bool checkIsText(llvm::StringRef buf, llvm::StringRef file, DiagnosticEngine &diags) {
  size_t bad = buf.find('\0');
  const char *what = "a NUL byte";
  if (bad == llvm::StringRef::npos) {
    const llvm::UTF8 *p = reinterpret_cast<const llvm::UTF8 *>(buf.begin());
    const llvm::UTF8 *end = reinterpret_cast<const llvm::UTF8 *>(buf.end());
    if (llvm::isLegalUTF8String(&p, end))
      return true;
    bad = size_t(reinterpret_cast<const char *>(p) - buf.begin());
    what = "invalid UTF-8";
  }
  llvm::StringRef before = buf.substr(0, bad);
  size_t line = before.count('\n') + 1;
  size_t lineStart = before.rfind('\n');
  size_t col = lineStart == llvm::StringRef::npos ? bad + 1 : bad - lineStart;
  diags.error(llvm::SMLoc(), fmt::format("{}:{}:{}: the file is not text ({}); is it a binary file? "
                                         "expected .tsl source",
                                         file.str(), line, col, what));
  return false;
}

std::unique_ptr<ast::Module> parseAndCheck(DiagnosticEngine &diags, const std::vector<Define> &defines) {
  llvm::SourceMgr &sm = diags.sourceMgr();
  if (sm.getNumBuffers() == 0) {
    diags.error(llvm::SMLoc(), "no input file");
    return nullptr;
  }
  const llvm::MemoryBuffer *mb = sm.getMemoryBuffer(sm.getMainFileID());
  llvm::StringRef buf = mb->getBuffer();
  if (!checkIsText(buf, mb->getBufferIdentifier(), diags))
    return nullptr;
  buf.consume_front("\xEF\xBB\xBF"); // a UTF-8 byte order mark
  std::unique_ptr<ast::Module> module = frontend::parseModule(buf, diags);
  if (diags.hadError())
    return nullptr;
  std::vector<ast::Function> prelude = parsePrelude(diags);
  if (diags.hadError())
    return nullptr;
  module->functions.insert(module->functions.begin(), std::make_move_iterator(prelude.begin()),
                           std::make_move_iterator(prelude.end()));
  if (!frontend::expandCalls(*module, diags))
    return nullptr;
  if (!frontend::checkModule(*module, defines, diags))
    return nullptr;
  return module;
}

} // namespace tessel

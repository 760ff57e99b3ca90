//===- support/AtomicFile.h - Write a file so no reader sees half of it -*- C++ -*-===//
//
// The files tessel writes for later runs (factors, fitted targets, the tune
// cache) go to a temporary file in the same folder, then are renamed over
// the destination: a failed or interrupted write leaves the old file whole.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_SUPPORT_ATOMICFILE_H
#define TESSEL_SUPPORT_ATOMICFILE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <utility>

namespace tessel::support {

/// Writes `bytes` to `path` through `path.tmp-XXXXXX` and a rename. The
/// error's message is the reason only (the caller names what it wrote).
llvm::Error writeFileAtomically(llvm::StringRef path, llvm::StringRef bytes);

/// Writes several files that belong together (a path and its bytes each):
/// every file goes to its temporary first, and only when all are written are
/// they renamed, so a failure leaves every destination as it was. The
/// error names the file that failed.
llvm::Error writeFilesAtomically(llvm::ArrayRef<std::pair<std::string, std::string>> files);

} // namespace tessel::support

#endif

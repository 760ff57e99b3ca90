//===- driver/AtomicFile.cpp - Write a file so no reader sees half of it --===//
#include "driver/AtomicFile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

namespace tessel::driver {

llvm::Error writeFileAtomically(llvm::StringRef path, llvm::StringRef bytes) {
  llvm::SmallString<256> tmp;
  int fd = -1;
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(path + ".tmp-%%%%%%", fd, tmp))
    return llvm::errorCodeToError(ec);
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << bytes;
    os.close();
    if (std::error_code ec = os.error()) {
      os.clear_error();
      llvm::sys::fs::remove(tmp);
      return llvm::errorCodeToError(ec);
    }
  }
  if (std::error_code ec = llvm::sys::fs::rename(tmp, path)) {
    llvm::sys::fs::remove(tmp);
    return llvm::errorCodeToError(ec);
  }
  return llvm::Error::success();
}

} // namespace tessel::driver

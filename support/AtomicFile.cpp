//===- support/AtomicFile.cpp - Write a file so no reader sees half of it --===//
#include "support/AtomicFile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <vector>

namespace tessel::support {

namespace {

/// Writes `bytes` to a new temporary beside `path`; its name goes to `tmp`.
llvm::Error writeTemporary(llvm::StringRef path, llvm::StringRef bytes, llvm::SmallString<256> &tmp) {
  int fd = -1;
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(path + ".tmp-%%%%%%", fd, tmp))
    return llvm::errorCodeToError(ec);
  llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
  os << bytes;
  os.close();
  if (std::error_code ec = os.error()) {
    os.clear_error();
    llvm::sys::fs::remove(tmp);
    return llvm::errorCodeToError(ec);
  }
  return llvm::Error::success();
}

} // namespace

llvm::Error writeFileAtomically(llvm::StringRef path, llvm::StringRef bytes) {
  llvm::SmallString<256> tmp;
  if (llvm::Error e = writeTemporary(path, bytes, tmp))
    return e;
  if (std::error_code ec = llvm::sys::fs::rename(tmp, path)) {
    llvm::sys::fs::remove(tmp);
    return llvm::errorCodeToError(ec);
  }
  return llvm::Error::success();
}

llvm::Error writeFilesAtomically(llvm::ArrayRef<std::pair<std::string, std::string>> files) {
  std::vector<llvm::SmallString<256>> tmps(files.size());
  auto removeFrom = [&](size_t first) {
    for (size_t i = first; i < files.size(); ++i)
      if (!tmps[i].empty())
        llvm::sys::fs::remove(tmps[i]);
  };
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string &path = files[i].first;
    // A directory in the way would fail only at the rename, after others.
    if (llvm::sys::fs::is_directory(path)) {
      removeFrom(0);
      return llvm::createStringError(std::errc::is_a_directory, "cannot write '%s': it is a directory",
                                     path.c_str());
    }
    if (llvm::Error e = writeTemporary(path, files[i].second, tmps[i])) {
      removeFrom(0);
      return llvm::createStringError(std::errc::io_error, "cannot write '%s': %s", path.c_str(),
                                     llvm::toString(std::move(e)).c_str());
    }
  }
  for (size_t i = 0; i < files.size(); ++i)
    if (std::error_code ec = llvm::sys::fs::rename(tmps[i], files[i].first)) {
      removeFrom(i);
      return llvm::createStringError(ec, "cannot write '%s': %s", files[i].first.c_str(),
                                     ec.message().c_str());
    }
  return llvm::Error::success();
}

} // namespace tessel::support

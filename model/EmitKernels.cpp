//===- model/EmitKernels.cpp - --emit-kernels DIR -------------------------===//
#include "model/EmitKernels.h"

#include "support/AtomicFile.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

namespace tessel::model {
namespace {

std::string pathIn(llvm::StringRef dir, const LayerKernel &k) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, k.fileName);
  return std::string(path);
}

} // namespace

llvm::Error checkKernelFiles(llvm::StringRef dir, llvm::ArrayRef<LayerKernel> kernels) {
  if (llvm::sys::fs::exists(dir) && !llvm::sys::fs::is_directory(dir))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "--emit-kernels %s: not a directory", dir.str().c_str());
  for (const LayerKernel &k : kernels) {
    const std::string path = pathIn(dir, k);
    if (!llvm::sys::fs::exists(path))
      continue;
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> old = llvm::MemoryBuffer::getFile(path);
    if (!old || (*old)->getBuffer() != k.source)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "--emit-kernels: '%s' exists and holds something else; it is not "
                                     "replaced (remove it or choose another directory)",
                                     path.c_str());
  }
  return llvm::Error::success();
}

llvm::Error emitKernelFiles(llvm::StringRef dir, llvm::ArrayRef<LayerKernel> kernels) {
  if (llvm::Error e = checkKernelFiles(dir, kernels))
    return e;
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return llvm::createStringError(ec, "--emit-kernels: cannot create '%s': %s", dir.str().c_str(),
                                   ec.message().c_str());
  std::vector<std::pair<std::string, std::string>> files;
  for (const LayerKernel &k : kernels)
    files.push_back({pathIn(dir, k), k.source});
  return support::writeFilesAtomically(files);
}

} // namespace tessel::model

#include "driver/Compile.h"

#include "backend/Backend.h"
#include "ir/Verifier.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/WithColor.h"

namespace tessel::driver {

bool loadSourceFile(llvm::SourceMgr &sm, const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/true);
  if (!buffer) {
    llvm::WithColor::error(llvm::errs(), "tessel")
        << "cannot read '" << path << "': " << buffer.getError().message() << "\n";
    return false;
  }
  sm.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  return true;
}

bool runFrontend(Frontend &fe, const std::string &path, const std::vector<Define> &defines,
                 const std::string &kernelName) {
  if (!loadSourceFile(fe.sourceMgr, path))
    return false;
  fe.diags = std::make_unique<DiagnosticEngine>(fe.sourceMgr);
  fe.module = parseAndCheck(*fe.diags, defines);
  if (!fe.module || fe.diags->hadError())
    return false;
  if (kernelName.empty()) {
    if (fe.module->kernels.size() != 1) {
      std::string names;
      for (const ast::Kernel &k : fe.module->kernels)
        names += (names.empty() ? "" : ", ") + k.name;
      fe.diags->error(llvm::SMLoc(), "'" + path + "' holds " +
                                         std::to_string(fe.module->kernels.size()) +
                                         " kernels (" + names + "); choose one with -k KERNEL");
      return false;
    }
    fe.kernel = &fe.module->kernels.front();
    return true;
  }
  for (const ast::Kernel &k : fe.module->kernels)
    if (k.name == kernelName)
      fe.kernel = &k;
  if (!fe.kernel) {
    std::string names;
    for (const ast::Kernel &k : fe.module->kernels)
      names += (names.empty() ? "" : ", ") + k.name;
    fe.diags->error(llvm::SMLoc(), "no kernel named '" + kernelName + "' in '" + path +
                                       "'; it defines: " + names);
    return false;
  }
  return true;
}

std::unique_ptr<ir::Kernel> lowerToTileIR(Frontend &fe, const TileGenOptions &options) {
  auto kernel = generateTileIR(*fe.kernel, options, *fe.diags);
  if (!kernel)
    return nullptr;
  if (!ir::verifyKernel(*kernel, *fe.diags)) {
    fe.diags->error(llvm::SMLoc(), "internal error: TileGen produced invalid tile IR for kernel '" +
                                       kernel->name + "' (please report this)");
    return nullptr;
  }
  return kernel;
}

TileGenOptions tileGenOptionsFor(const runtime::Target &target) {
  TileGenOptions options;
  options.stripBudgetBytes = target.sbuf_bytes_per_partition / 2;
  return options;
}

llvm::Expected<runtime::Program> emitProgram(ir::Kernel &kernel, const runtime::Target &target) {
  if (auto err = backend::assignStackAddresses(kernel, target))
    return std::move(err);
  return backend::lowerToProgram(kernel, target);
}

} // namespace tessel::driver

//===- compiler/Compile.cpp - The one compile path --------------------------===//
#include "compiler/Compile.h"

#include "backend/Backend.h"
#include "compiler/CompileSession.h"
#include "passes/BlockParams.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"

namespace tessel::compiler {

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
  // A caller that read the input already (stdin, to tell its format) loaded it.
  if (fe.sourceMgr.getNumBuffers() == 0 && !loadSourceFile(fe.sourceMgr, path))
    return false;
  fe.diags = std::make_unique<DiagnosticEngine>(fe.sourceMgr);
  fe.module = parseAndCheck(*fe.diags, defines);
  if (!fe.module || fe.diags->hadError())
    return false;
  auto names = [&] {
    return llvm::join(llvm::map_range(fe.module->kernels, [](const ast::Kernel &k) { return k.name; }),
                      ", ");
  };
  if (kernelName.empty()) {
    if (fe.module->kernels.size() != 1) {
      fe.diags->error(llvm::SMLoc(), "'" + path + "' holds " +
                                         std::to_string(fe.module->kernels.size()) + " kernels (" +
                                         names() + "); choose one with -k KERNEL");
      return false;
    }
    fe.kernel = &fe.module->kernels.front();
    return true;
  }
  fe.kernel = fe.module->findKernel(kernelName);
  if (!fe.kernel) {
    fe.diags->error(llvm::SMLoc(), "no kernel named '" + kernelName + "' in '" + path +
                                       "'; it defines: " + names());
    return false;
  }
  return true;
}

std::unique_ptr<ir::Kernel> compileKernel(Frontend &fe, const CompileOptions &options,
                                          const runtime::Target &target) {
  return CompileSession(fe, target, options).compile();
}

std::unique_ptr<ir::Kernel> buildKernel(Frontend &fe, const ir::BlockConfig &blocks,
                                        llvm::ArrayRef<std::string> passes,
                                        const runtime::Target &target, DiagnosticEngine &diags,
                                        const passes::InstrumentationOptions &instrumentation) {
  auto kernel = CompileSession(fe, target).generate(blocks, diags);
  if (!kernel || !runPasses(*kernel, passes, target, diags, instrumentation))
    return nullptr;
  return kernel;
}

ir::BlockConfig tileGenBlockParams(Frontend &fe, const runtime::Target &target,
                                   std::map<std::string, int64_t> *projectionColumns,
                                   int64_t *contraction) {
  const BlockNames &names = CompileSession(fe, target).blockNames();
  if (projectionColumns)
    *projectionColumns = names.projectionColumns;
  if (contraction)
    *contraction = names.contraction;
  return names.params;
}

bool runPipeline(ir::Kernel &kernel, const CompileOptions &options,
                 const runtime::Target &target, DiagnosticEngine &diags,
                 llvm::StringRef dumpSubdir) {
  if (llvm::Error err =
          passes::validateBlockConfig(options.blocks, kernel.blockParams, /*rows=*/0, target)) {
    diags.error(kernel.loc, llvm::toString(std::move(err)));
    return false;
  }
  for (const auto &[name, value] : options.blocks)
    if (kernel.blockParams.lookup(name) != value) {
      diags.error(kernel.loc, "--block " + name + "=" + std::to_string(value) +
                                  ": tile IR cannot be re-tiled (kernel @" + kernel.name +
                                  "'s loop nests are built for " + kernel.blockParams.str() +
                                  "); give --block to tessel compile or tessel run with the "
                                  "kernel's .tsl source");
      return false;
    }
  passes::InstrumentationOptions instr = options.instrumentation;
  if (!instr.dumpDir.empty() && !dumpSubdir.empty()) {
    llvm::SmallString<128> dir(instr.dumpDir);
    llvm::sys::path::append(dir, dumpSubdir);
    instr.dumpDir = std::string(dir);
  }
  return runPasses(kernel, options.passes, target, diags, instr, options.params);
}

bool runPasses(ir::Kernel &kernel, llvm::ArrayRef<std::string> names,
               const runtime::Target &target, DiagnosticEngine &diags,
               const passes::InstrumentationOptions &instrumentation,
               const passes::PipelineParams &params) {
  passes::PassManager pm(instrumentation);
  for (const std::string &name : names)
    pm.addPass(name); // the command line's names were checked against the registry
  passes::PassContext ctx{target, diags, params};
  bool ok = pm.run(kernel, ctx);
  if (instrumentation.timePasses)
    pm.printTimings(llvm::errs());
  if (instrumentation.stats)
    pm.statistics().print(llvm::errs());
  return ok;
}

llvm::Expected<runtime::Program> emitProgram(ir::Kernel &kernel, const runtime::Target &target,
                                             const llvm::SourceMgr *sources) {
  if (auto err = backend::assignStackAddresses(kernel, target, sources))
    return err;
  return backend::lowerToProgram(kernel, target, sources);
}

} // namespace tessel::compiler

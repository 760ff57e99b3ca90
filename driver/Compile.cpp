#include "driver/Compile.h"
#include "driver/TuneCache.h"

#include "backend/Backend.h"
#include "ir/Verifier.h"
#include "passes/PassManager.h"

#include "llvm/Support/Path.h"

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
  options.psumBytes = target.psum_bytes_per_partition;
  return options;
}

bool runPipeline(ir::Kernel &kernel, const PipelineOptions &options,
                 const runtime::Target &target, DiagnosticEngine &diags,
                 llvm::StringRef dumpSubdir, const passes::BlockOverrides *blocks,
                 passes::RetileFn retile) {
  std::vector<std::string> names;
  passes::InstrumentationOptions instr;
  passes::BlockOverrides overrides;
  if (!options.resolvePasses(names) || !options.instrumentation(instr) ||
      !options.blockOverrides(overrides))
    return false;
  if (blocks) {
    overrides = *blocks;
  } else if (options.tuned) {
    diags.error(kernel.loc, "--tuned needs the kernel's .tsl source (tessel compile or tessel "
                            "run): tile IR has no tuning of its own");
    return false;
  }
  if (!overrides.empty()) {
    if (llvm::Error err = passes::validateBlockOverrides(overrides, kernel.blockParams,
                                                        /*rows=*/0, target)) {
      diags.error(kernel.loc, llvm::toString(std::move(err)));
      return false;
    }
  }
  if (!instr.dumpDir.empty() && !dumpSubdir.empty()) {
    llvm::SmallString<128> dir(instr.dumpDir);
    llvm::sys::path::append(dir, dumpSubdir);
    instr.dumpDir = std::string(dir);
  }
  bool timings = instr.timePasses, stats = instr.stats;
  passes::PassManager pm(instr);
  for (const std::string &name : names)
    pm.addPass(name); // resolvePasses checked every name
  passes::PassContext ctx{target, diags, overrides, names, std::move(retile)};
  bool ok = pm.run(kernel, ctx);
  if (timings)
    pm.printTimings(llvm::errs());
  if (stats)
    pm.statistics().print(llvm::errs());
  return ok;
}

int64_t stripRows(const ast::Kernel &kernel) {
  const ast::Expr *e = kernel.returnStmt().value.get();
  while (e->kind == ast::ExprKind::Transpose)
    e = e->lhs.get();
  return e->type.rows;
}

std::unique_ptr<ir::Kernel> compileToTileIR(Frontend &fe, const PipelineOptions &options,
                                            const runtime::Target &target) {
  passes::BlockOverrides overrides;
  if (!options.blockOverrides(overrides))
    return nullptr;
  if (options.tuned && !tunedBlockOverrides(fe, options, target, overrides))
    return nullptr;
  TileGenOptions tg = tileGenOptionsFor(target);
  auto kernel = lowerToTileIR(fe, tg);
  if (!kernel)
    return nullptr;
  if (!overrides.empty()) {
    // The kernel's own parameters name what may be overridden.
    if (llvm::Error err = passes::validateBlockOverrides(overrides, kernel->blockParams,
                                                        stripRows(*fe.kernel), target)) {
      fe.diags->error(fe.kernel->loc, llvm::toString(std::move(err)));
      return nullptr;
    }
    if (overrides.count("m"))
      tg.blockM = overrides["m"];
    if (overrides.count("n"))
      tg.blockN = overrides["n"];
    kernel = lowerToTileIR(fe, tg);
    if (!kernel)
      return nullptr;
  }
  // select-blocks re-tiles from the source; its trial builds report nothing.
  passes::RetileFn retile = [&fe, tg](const std::map<std::string, int64_t> &blocks) {
    TileGenOptions options = tg;
    if (auto m = blocks.find("m"); m != blocks.end())
      options.blockM = m->second;
    if (auto n = blocks.find("n"); n != blocks.end())
      options.blockN = n->second;
    DiagnosticEngine quiet = DiagnosticEngine::quiet(fe.sourceMgr);
    auto kernel = generateTileIR(*fe.kernel, options, quiet);
    return kernel && ir::verifyKernel(*kernel, quiet) ? std::move(kernel) : nullptr;
  };
  if (!runPipeline(*kernel, options, target, *fe.diags, "", &overrides, std::move(retile)))
    return nullptr;
  return kernel;
}

llvm::Expected<runtime::Program> emitProgram(ir::Kernel &kernel, const runtime::Target &target) {
  if (auto err = backend::assignStackAddresses(kernel, target))
    return std::move(err);
  return backend::lowerToProgram(kernel, target);
}

} // namespace tessel::driver

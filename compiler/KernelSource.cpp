//===- compiler/KernelSource.cpp - A kernel file to a simulator program ------===//
#include "compiler/KernelSource.h"

#include "compiler/Compile.h"
#include "compiler/NkiInput.h"

#include "passes/Pipelines.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

using namespace llvm;

namespace tessel::compiler {

static Error fail(const Twine &msg) { return createStringError(inconvertibleErrorCode(), msg.str()); }

bool isKernelFile(StringRef path) {
  StringRef ext = sys::path::extension(path);
  return ext == ".tsl" || ext == ".tasm" || ext == ".py";
}

static Expected<runtime::Program> compileTsl(const KernelSpec &spec, const runtime::Target &target) {
  Frontend fe;
  if (!runFrontend(fe, spec.path, spec.defines, spec.kernel))
    return fail(formatv("kernel '{0}'{1} did not compile (see the message above)", spec.path,
                        spec.kernel.empty() ? std::string() : " " + spec.kernel));
  Expected<std::vector<std::string>> passes = passes::buildPipeline(spec.pipeline);
  if (!passes)
    return passes.takeError();
  CompileOptions options;
  options.passes = std::move(*passes);
  std::unique_ptr<ir::Kernel> kernel = compileKernel(fe, options, target);
  if (!kernel)
    return fail(formatv("kernel '{0}' did not compile (see the message above)", spec.path));
  return emitProgram(*kernel, target);
}

Expected<runtime::Program> loadKernelProgram(const KernelSpec &spec, const runtime::Target &target) {
  if (!sys::fs::exists(spec.path))
    return fail(formatv("kernel file '{0}' not found", spec.path));
  StringRef ext = sys::path::extension(spec.path);
  if (ext == ".tsl")
    return compileTsl(spec, target);
  if (ext != ".tasm" && ext != ".py")
    return fail(formatv("unknown kernel type '{0}' (expected .tsl, .tasm or .py)", spec.path));
  // A .py kernel's "defines" are its argument specs (NAME=bf16[D0,D1], as
  // `tessel run --arg`), for the NKI tracer.
  if (ext == ".py") {
    NkiSource src{spec.path, spec.kernel, {}, {}, {}, {}};
    for (const Define &d : spec.defines)
      src.args.push_back(d.name + "=" + d.value);
    llvm::SourceMgr sm;
    std::unique_ptr<ir::Kernel> kernel = traceNkiKernel(src, target, sm);
    if (!kernel)
      return fail(formatv("kernel '{0}' did not trace (see the message above)", spec.path));
    return emitNkiProgram(*kernel, target);
  }
  if (!spec.defines.empty())
    return fail(formatv("'{0}': defines apply to .tsl sources only", spec.path));
  Expected<runtime::Program> prog = runtime::parseProgramFile(spec.path);
  if (prog && !spec.kernel.empty() && prog->kernel != spec.kernel)
    return fail(formatv("unknown kernel '{0}': '{1}' holds kernel '{2}'", spec.kernel, spec.path, prog->kernel));
  return prog;
}

} // namespace tessel::compiler

//===- compiler/TirInput.cpp - Tile IR as the input of run and compile ------===//
#include "compiler/TirInput.h"

#include "compiler/Compile.h"
#include "ir/Parser.h"
#include "ir/Verifier.h"
#include "passes/TargetGeometry.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

namespace tessel::compiler {

bool loadTirKernel(TirInput &in, std::unique_ptr<llvm::MemoryBuffer> buffer,
                   const std::string &kernelName, const CompileOptions &options,
                   const runtime::Target &target) {
  std::string name = buffer->getBufferIdentifier().str();
  unsigned id = in.sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  in.diags = std::make_unique<DiagnosticEngine>(in.sourceMgr);
  // The text does not carry the target: its geometry is the target's.
  in.module = ir::parseBuffer(id, *in.diags, passes::geometryFor(target));
  if (!in.module)
    return false;
  auto &kernels = in.module->kernels;
  if (kernelName.empty()) {
    if (kernels.size() != 1) {
      in.diags->error(llvm::SMLoc(),
                      "'" + name + "' holds " + std::to_string(kernels.size()) +
                          " kernels; select one with -k (" +
                          llvm::join(llvm::map_range(kernels, [](const auto &k) { return k->name; }), ", ") +
                          ")");
      return false;
    }
    in.kernel = kernels.front().get();
  } else {
    auto it = llvm::find_if(kernels, [&](const auto &k) { return k->name == kernelName; });
    if (it == kernels.end()) {
      in.diags->error(llvm::SMLoc(), "no kernel @" + kernelName + " in '" + name + "'");
      return false;
    }
    in.kernel = it->get();
  }
  return ir::verifyKernel(*in.kernel, *in.diags) &&
         runPipeline(*in.kernel, options, target, *in.diags);
}

} // namespace tessel::compiler

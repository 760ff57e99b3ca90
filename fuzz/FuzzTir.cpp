//===- fuzz/FuzzTir.cpp - tile IR text: parser, verifier, printer ---------===//
#include "fuzz/FuzzUtil.h"

#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "passes/TargetGeometry.h"
#include "runtime/Target.h"

using namespace tessel;

static std::string print(const ir::Module &module) {
  std::string s;
  llvm::raw_string_ostream os(s);
  ir::printModule(module, os);
  return os.str();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const ir::TileGeometry geometry = passes::geometryFor(runtime::trn1Target());
  llvm::SourceMgr sm;
  DiagnosticEngine diags = DiagnosticEngine::quiet(sm);
  auto module = ir::parseModuleString(fuzz::asText(data, size), "fuzz.tir", diags, geometry);
  if (!module || !ir::verifyModule(*module, diags))
    return 0;
  std::string printed = print(*module);
  auto again = ir::parseModuleString(printed, "printed.tir", diags, geometry);
  fuzz::checkFixedPoint(printed, again ? std::optional<std::string>(print(*again)) : std::nullopt);
  return 0;
}

//===- support/Ops.cpp - Engines and instructions, from Ops.def -----------===//
#include "support/Ops.h"
#include "support/Registry.h"

namespace tessel {

llvm::StringRef engineName(Engine e) {
  switch (e) {
  case Engine::Tensor: return "tensor";
  case Engine::Vector: return "vector";
  case Engine::Scalar: return "scalar";
  case Engine::GpSimd: return "gpsimd";
  case Engine::Dma: return "dma";
  }
  return "?";
}

llvm::ArrayRef<Engine> allEngines() {
  static const Engine all[] = {Engine::Tensor, Engine::Vector, Engine::Scalar, Engine::GpSimd, Engine::Dma};
  return all;
}

std::optional<Engine> parseEngine(llvm::StringRef name) { return lookupName(allEngines(), engineName, name); }

#define TESSEL_UNPAREN(...) __VA_ARGS__
#define ENGINE_BIT(E) (1u << unsigned(Engine::E))

static const OpInfo kOps[] = {
#define TESSEL_OP(ENUM, MNEMONIC, ENGINE, OTHER_ENGINES, SRC_ROLES, FUNC)                          \
  {MNEMONIC, Engine::ENGINE, OTHER_ENGINES, TESSEL_UNPAREN SRC_ROLES, FuncKind::FUNC},
#include "support/Ops.def"
};

static const Opcode kOpcodes[] = {
#define TESSEL_OP(ENUM, MNEMONIC, ENGINE, OTHER_ENGINES, SRC_ROLES, FUNC) Opcode::ENUM,
#include "support/Ops.def"
};

#undef ENGINE_BIT
#undef TESSEL_UNPAREN

const OpInfo &opInfo(Opcode op) { return kOps[unsigned(op)]; }

llvm::ArrayRef<Opcode> allOpcodes() { return kOpcodes; }

llvm::StringRef opcodeName(Opcode op) { return opInfo(op).mnemonic; }

std::optional<Opcode> parseOpcode(llvm::StringRef mnemonic) {
  return lookupName(allOpcodes(), opcodeName, mnemonic);
}

Engine defaultEngine(Opcode op) { return opInfo(op).engine; }

bool engineAllowed(Opcode op, Engine e) {
  const OpInfo &info = opInfo(op);
  return e == info.engine || (info.otherEngines & (1u << unsigned(e)));
}

} // namespace tessel

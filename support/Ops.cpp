//===- support/Ops.cpp - Engines and instructions, from Ops.def -----------===//
#include "support/Ops.h"

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

std::optional<Engine> parseEngine(llvm::StringRef name) {
  for (unsigned i = 0; i < NumEngines; ++i)
    if (engineName(Engine(i)) == name)
      return Engine(i);
  return std::nullopt;
}

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
  for (Opcode op : allOpcodes())
    if (opcodeName(op) == mnemonic)
      return op;
  return std::nullopt;
}

Engine defaultEngine(Opcode op) { return opInfo(op).engine; }

bool engineAllowed(Opcode op, Engine e) {
  const OpInfo &info = opInfo(op);
  return e == info.engine || (info.otherEngines & (1u << unsigned(e)));
}

} // namespace tessel

//===- support/Ops.h - Engines and instructions, from Ops.def ---*- C++ -*-===//
#ifndef TESSEL_SUPPORT_OPS_H
#define TESSEL_SUPPORT_OPS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace tessel {

/// Execution units of a NeuronCore. DMA instructions additionally name a queue.
enum class Engine : uint8_t { Tensor, Vector, Scalar, GpSimd, Dma };
constexpr unsigned NumEngines = 5;
llvm::ArrayRef<Engine> allEngines();
llvm::StringRef engineName(Engine e); ///< "tensor", "vector", "scalar", "gpsimd", "dma"
std::optional<Engine> parseEngine(llvm::StringRef name);

enum class Opcode : uint8_t {
#define TESSEL_OP(ENUM, MNEMONIC, ENGINE, OTHER_ENGINES, SRC_ROLES, FUNC) ENUM,
#include "support/Ops.def"
};

/// What selects the operation an instruction performs: AluPair is two ALU
/// operations (a scan's op0 and op1).
enum class FuncKind : uint8_t { None, Activation, Alu, AluPair };

struct OpInfo {
  llvm::StringRef mnemonic;
  Engine engine;         ///< the default engine
  unsigned otherEngines; ///< mask of 1 << Engine that `engine=` may choose
  std::vector<llvm::StringRef> srcRoles;
  FuncKind func;
};

const OpInfo &opInfo(Opcode op);
llvm::ArrayRef<Opcode> allOpcodes();
llvm::StringRef opcodeName(Opcode op);
std::optional<Opcode> parseOpcode(llvm::StringRef mnemonic);
Engine defaultEngine(Opcode op);
bool engineAllowed(Opcode op, Engine e);

} // namespace tessel

#endif

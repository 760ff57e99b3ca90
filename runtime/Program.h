//===- runtime/Program.h - The simulator's program (.tasm) ------*- C++ -*-===//
//
// A program is what the NeuronCore simulator executes, like a compiled binary
// for a real runtime: HBM tensors, on-chip buffers with addresses, and one
// structured body (nested loops, `alloc` statements, instructions) in program
// order. Each instruction belongs to one engine (by opcode, or `engine=` for
// ops several engines can run, or a DMA queue); dependencies between engines
// are recovered by the simulator from the buffer regions instructions touch.
// Text form and semantics: docs/tasm.md. Parser: ProgramParser.cpp, printer:
// ProgramPrinter.cpp (round-trippable).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_PROGRAM_H
#define TESSEL_RUNTIME_PROGRAM_H

#include "support/Activation.h"
#include "support/DType.h"
#include "support/Ops.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace tessel::runtime {

// The registries the compiler shares (support/*.def): plain data, no compiler code.
using tessel::ActFn;
using tessel::AluOp;
using tessel::DType;
using tessel::Engine;
using tessel::NumEngines;
using tessel::Opcode;

enum class TensorRole : uint8_t { Input, Output, Scratch, Spill };
llvm::StringRef roleName(TensorRole r);

enum class MemSpace : uint8_t { SBUF, PSUM };
llvm::StringRef spaceName(MemSpace s);

/// 1-based line and column in the .tasm text (0 = unknown, e.g. built in memory).
struct SrcLoc {
  unsigned line = 0, col = 0;
};

/// Where an instruction came from in the kernel's source: the .tsl line and
/// column of the DSL expression, the .py line of an NKI kernel's API call, or
/// the .tir line of a tile IR op (`loc("FILE":LINE[:COL])` in the text form).
/// line 0 = none; col 0 = the source gives lines only.
struct SourceLoc {
  uint32_t file = 0; ///< index into Program::sourceFiles
  uint32_t line = 0, col = 0;
  bool known() const { return line != 0; }
  bool operator==(const SourceLoc &o) const { return file == o.file && line == o.line && col == o.col; }
};

/// An HBM tensor: row-major N-D array.
struct TensorDecl {
  std::string name; ///< without the leading '%'
  DType dtype = DType::BF16;
  std::vector<int64_t> shape;
  TensorRole role = TensorRole::Input;
  SrcLoc loc;
  int64_t numElements() const;
};

/// An on-chip buffer in SBUF or PSUM. shape[0] is the partition count, the
/// rest the free shape per partition. `bufs` rotating copies ("slots") are laid
/// out back to back from `address` (bytes within each partition):
/// slot s occupies [address + s*slotBytes(), address + (s+1)*slotBytes()).
struct BufferDecl {
  std::string name;
  MemSpace space = MemSpace::SBUF;
  DType dtype = DType::BF16;
  std::vector<int64_t> shape; ///< [partitions, free dims...]
  int64_t bufs = 1;
  int64_t address = 0;
  SrcLoc loc;
  int64_t partitions() const { return shape.empty() ? 0 : shape[0]; }
  int64_t freeElems() const; ///< product of shape[1..] (1 if none)
  int64_t slotBytes() const { return freeElems() * dtypeBytes(dtype); }
  int64_t endAddress() const { return address + slotBytes() * bufs; }
};

/// c + sum(coeff_i * var_i) over loop variables (ids into Program::vars).
struct AffineExpr {
  llvm::SmallVector<std::pair<uint32_t, int64_t>, 2> terms; ///< unique vars, nonzero coeffs
  int64_t constant = 0;

  static AffineExpr constantExpr(int64_t c) {
    AffineExpr e;
    e.constant = c;
    return e;
  }
  static AffineExpr varExpr(uint32_t var, int64_t coeff = 1) {
    AffineExpr e;
    e.addTerm(var, coeff);
    return e;
  }
  bool isConstant() const { return terms.empty(); }
  void addTerm(uint32_t var, int64_t coeff);
  /// this += scale * other
  void add(const AffineExpr &other, int64_t scale = 1);
  void scale(int64_t s);
  int64_t eval(const int64_t *vars) const {
    // Wrapping arithmetic: never undefined; out-of-range results fail the bounds checks.
    uint64_t v = uint64_t(constant);
    for (const auto &t : terms)
      v += uint64_t(t.second) * uint64_t(vars[t.first]);
    return int64_t(v);
  }
  bool operator==(const AffineExpr &o) const { return constant == o.constant && terms == o.terms; }
};

/// An extent: `size`, or `min(size, bound)` for partial edge tiles.
struct Extent {
  AffineExpr size;
  bool hasMin = false;
  AffineExpr bound;
  int64_t eval(const int64_t *vars) const {
    int64_t s = size.eval(vars);
    if (hasMin) {
      int64_t b = bound.eval(vars);
      return b < s ? b : s;
    }
    return s;
  }
};

/// One dimension of an access: a range `start : extent`, or an index `start`
/// that selects one element and drops the dimension.
struct DimAccess {
  AffineExpr start;
  Extent extent;
  bool isIndex = false;
};

/// One dimension of an access pattern's tile: `extent` indices of the
/// object's dimension `dim`, `step` apart.
struct PatternDim {
  uint32_t dim = 0;
  int64_t extent = 1;
  int64_t step = 1;
};

/// A tensor or buffer sliced per dimension. The first kept (non-index)
/// dimension is the tile's partition dimension, the remaining kept ones are
/// flattened into its free dimension. (For buffers, dimension 0 is the
/// partition dimension and must be a range.) An access pattern (strided or
/// split dimensions, permuted: the tile IR's `step` and `order`) lists the
/// tile's dimensions in `pattern` instead; its `dims` then cover, per
/// dimension, the elements from the first to the last index.
struct Access {
  enum class Kind : uint8_t { Tensor, Buffer };
  Kind kind = Kind::Buffer;
  uint32_t id = 0; ///< index into Program::tensors or Program::buffers
  llvm::SmallVector<DimAccess, 4> dims;
  llvm::SmallVector<PatternDim, 0> pattern;
  SrcLoc loc;
  bool isTensor() const { return kind == Kind::Tensor; }
  bool isBuffer() const { return kind == Kind::Buffer; }
};

/// Matmul accumulation: overwrite, accumulate, or overwrite exactly when the
/// listed loop variables are all at their first iteration.
enum class AccMode : uint8_t { Reset, Accumulate, ResetIfFirst };
enum class DmaTag : uint8_t { None, SpillSave, SpillReload };

/// The optional [P, 1] tile operands (Instr::tiles).
enum TileOperand : uint8_t { ScalarTile = 1, BiasTile = 2, ScaleTile = 4, Accumulator = 8 };

struct Instr {
  Opcode op = Opcode::Copy;
  Engine engine = Engine::Vector;
  uint8_t func = 0; ///< ActFn for activation, AluOp for tensor_tensor / tensor_scalar, a scan's op0
  uint8_t func1 = 0; ///< a scan's op1 (AluOp)
  // dma
  uint32_t queue = 0;
  /// Executions rotate over queues [queue, queue + queueSpan): the k-th
  /// execution uses queue + k mod queueSpan, so one DMA statement in a loop
  /// can keep several transfers in flight (`queues=N` in the text form).
  uint32_t queueSpan = 1;
  bool transpose = false;
  DmaTag tag = DmaTag::None;
  // matmul
  AccMode acc = AccMode::Reset;
  llvm::SmallVector<uint32_t, 2> accVars;
  // activation: out = f(in * scale + bias)
  double scale = 1.0, bias = 0.0;
  // tensor_scalar operand, memset value, affine_select fill, tensor_tensor_scan initial value
  double imm = 0.0;
  /// Optional [P, 1] tiles (TileOperand bits), in `srcs` after the required
  /// sources in this order: a tensor_scalar's scalar (a scan's initial value); an activation's bias,
  /// scale, then its accumulator (written, not read).
  uint8_t tiles = 0;
  /// tensor_scalar: dst = scalar op src.
  bool reverse = false;
  // iota, affine_select: the value at tile element [p, f] is
  // offset + partitionStep * p + freeStep * f.
  AffineExpr offset;
  int64_t partitionStep = 0, freeStep = 0;
  Access dst;
  llvm::SmallVector<Access, 2> srcs;
  SrcLoc loc;       ///< in the .tasm text
  SourceLoc source; ///< in the kernel's source (the compiler's `loc(...)`)

  ActFn actFn() const { return ActFn(func); }
  AluOp aluOp() const { return AluOp(func); }
  AluOp aluOp1() const { return AluOp(func1); }
  bool has(uint8_t tile) const { return (tiles & tile) != 0; }
  /// The sources it reads: all of `srcs` but an accumulator.
  unsigned numReads() const { return unsigned(srcs.size()) - (has(Accumulator) ? 1 : 0); }
  /// Where each optional tile sits in `srcs`.
  unsigned tileIndex(uint8_t tile) const {
    unsigned i = unsigned(opInfo(op).srcRoles.size());
    for (uint8_t t : {ScalarTile, BiasTile, ScaleTile})
      if (t < tile && has(t))
        ++i;
    return i;
  }
};

/// `activation.gelu`, `tensor_scalar.mul`, `tensor_tensor_scan.mul.add`, `matmul`: the opcode and the
/// function it applies, as in .tasm text, traces and messages.
std::string instrName(const Instr &in);

struct Stmt {
  enum class Kind : uint8_t { For, Alloc, Instr };
  Kind kind;
  uint32_t id; ///< loop id, buffer id or instruction id
};

/// for %var = lo to hi step step { body }   (iterates lo, lo+step, ... < hi)
struct Loop {
  uint32_t var = 0;
  int64_t lo = 0, hi = 0, step = 1;
  std::vector<Stmt> body;
  SrcLoc loc;
  int64_t tripCount() const { return hi > lo ? int64_t(llvm::divideCeil(hi - lo, step)) : 0; }
};

/// When a buffer slot's new occupant (an `alloc`) may be accessed.
enum class SlotReuse {
  /// Region by region: an access waits only for the accesses to the
  /// previous occupant that overlap it (a program whose synchronisation is
  /// per tile, as tessel's backend emits).
  Region,
  /// Slot by slot: the new occupant waits for every access to the previous
  /// one, as an allocator that frees a tensor only when its live range ends
  /// (`reuse whole` in the text form; NKI kernels, docs/nki.md).
  Whole,
};

struct Program {
  std::string kernel = "kernel";
  std::string target = "trn1";
  SlotReuse slotReuse = SlotReuse::Region;
  std::string fileName; ///< for messages; empty when built in memory
  std::vector<TensorDecl> tensors;
  std::vector<BufferDecl> buffers;
  std::vector<std::string> vars; ///< loop variable names (no '%'), by id
  std::vector<uint32_t> varLoop; ///< the loop that defines each variable
  std::vector<Loop> loops;
  std::vector<Instr> instrs;
  std::vector<Stmt> body;
  /// The files SourceLoc::file indexes, each once.
  std::vector<std::string> sourceFiles;

  int findTensor(llvm::StringRef name) const;
  int findBuffer(llvm::StringRef name) const;
  /// Name of the accessed tensor/buffer (without '%').
  const std::string &accessName(const Access &a) const {
    return a.isTensor() ? tensors[a.id].name : buffers[a.id].name;
  }
  /// "file.tasm:12:3" or "line 12" for messages.
  std::string locString(SrcLoc loc) const;
  /// The index of `file` in sourceFiles, added if new.
  uint32_t sourceFileId(llvm::StringRef file);
  /// "kernel.tsl:5:12" ("kernel.py:23" without a column); "" when unknown.
  /// `withColumn` false: "kernel.tsl:5", the source line.
  std::string sourceString(SourceLoc loc, bool withColumn = true) const;
  /// Where `in` came from, for profiles: its source location when it has
  /// one, else its place in the .tasm file the program was read from
  /// ("prog.tasm:12:3"); "" for a program built in memory without locations.
  std::string instrSource(const Instr &in, bool withColumn = true) const;
  /// The value `in` involves, for profiles: the HBM tensor a DMA moves, else
  /// the buffer it writes (names as in the program, without '%').
  const std::string &instrValue(const Instr &in) const;
};

/// Structural checks that do not depend on a target (names, ranks, memory
/// spaces per opcode, operand counts, engine choices, constant extents).
/// Calls `report(loc, message)` for each problem; returns the problem count.
unsigned verifyProgram(const Program &p, const std::function<void(SrcLoc, const llvm::Twine &)> &report);
/// Same, as an llvm::Error holding "file:line:col: error: ..." lines.
llvm::Error verifyProgram(const Program &p);

/// Parses .tasm text. Errors are formatted like a compiler's:
/// "file:line:col: error: message" plus the source line and a caret.
llvm::Expected<Program> parseProgram(llvm::StringRef text, llvm::StringRef fileName);
llvm::Expected<Program> parseProgramFile(llvm::StringRef path);

/// Prints the canonical text form (print(parse(print(p))) == print(p)).
void printProgram(const Program &p, llvm::raw_ostream &os);
std::string printProgramToString(const Program &p);
/// Prints the per-engine instruction streams: the projection of the body onto
/// each engine and each used DMA queue (loops kept, other engines' work removed).
void printEngineStreams(const Program &p, llvm::raw_ostream &os);
/// Text of one access / expression, as printed in programs.
std::string printAccess(const Program &p, const Access &a);
std::string printAffine(const Program &p, const AffineExpr &e);
std::string printInstruction(const Program &p, const Instr &in);

} // namespace tessel::runtime

#endif

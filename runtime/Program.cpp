//===- runtime/Program.cpp - Program helpers and the verifier -------------===//
#include "runtime/Program.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace tessel::runtime {

std::string instrName(const Instr &in) {
  std::string name(opcodeName(in.op));
  switch (opInfo(in.op).func) {
  case FuncKind::None: break;
  case FuncKind::Activation: name += "." + actFnName(in.actFn()).str(); break;
  case FuncKind::Alu: name += "." + aluOpName(in.aluOp()).str(); break;
  case FuncKind::AluPair: name += "." + aluOpName(in.aluOp()).str() + "." + aluOpName(in.aluOp1()).str(); break;
  }
  return name;
}

StringRef roleName(TensorRole r) {
  switch (r) {
  case TensorRole::Input: return "input";
  case TensorRole::Output: return "output";
  case TensorRole::Scratch: return "scratch";
  case TensorRole::Spill: return "spill";
  }
  return "?";
}

StringRef spaceName(MemSpace s) { return s == MemSpace::SBUF ? "sbuf" : "psum"; }

int64_t TensorDecl::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

int64_t BufferDecl::freeElems() const {
  int64_t n = 1;
  for (size_t i = 1; i < shape.size(); ++i)
    n *= shape[i];
  return n;
}

void AffineExpr::addTerm(uint32_t var, int64_t coeff) {
  for (auto it = terms.begin(); it != terms.end(); ++it) {
    if (it->first == var) {
      it->second += coeff;
      if (it->second == 0)
        terms.erase(it);
      return;
    }
  }
  if (coeff != 0)
    terms.push_back({var, coeff});
}

void AffineExpr::add(const AffineExpr &other, int64_t s) {
  constant += s * other.constant;
  for (const auto &t : other.terms)
    addTerm(t.first, s * t.second);
}

void AffineExpr::scale(int64_t s) {
  constant *= s;
  if (s == 0) {
    terms.clear();
    return;
  }
  for (auto &t : terms)
    t.second *= s;
}

int Program::findTensor(StringRef name) const {
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].name == name)
      return int(i);
  return -1;
}

int Program::findBuffer(StringRef name) const {
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].name == name)
      return int(i);
  return -1;
}

std::string Program::locString(SrcLoc loc) const {
  std::string file = fileName.empty() ? std::string("<program>") : fileName;
  if (!loc.line)
    return file;
  return formatv("{0}:{1}:{2}", file, loc.line, loc.col).str();
}

uint32_t Program::sourceFileId(StringRef file) {
  for (size_t i = 0; i < sourceFiles.size(); ++i)
    if (sourceFiles[i] == file)
      return uint32_t(i);
  sourceFiles.push_back(file.str());
  return uint32_t(sourceFiles.size() - 1);
}

std::string Program::sourceString(SourceLoc loc, bool withColumn) const {
  if (!loc.known() || loc.file >= sourceFiles.size())
    return "";
  if (withColumn && loc.col)
    return formatv("{0}:{1}:{2}", sourceFiles[loc.file], loc.line, loc.col).str();
  return formatv("{0}:{1}", sourceFiles[loc.file], loc.line).str();
}

std::string Program::instrSource(const Instr &in, bool withColumn) const {
  if (in.source.known())
    return sourceString(in.source, withColumn);
  if (!in.loc.line || fileName.empty())
    return "";
  if (withColumn && in.loc.col)
    return formatv("{0}:{1}:{2}", fileName, in.loc.line, in.loc.col).str();
  return formatv("{0}:{1}", fileName, in.loc.line).str();
}

const std::string &Program::instrValue(const Instr &in) const {
  static const std::string none;
  const Access &a = in.op == Opcode::Dma && !in.srcs.empty() && in.srcs[0].isTensor() ? in.srcs[0] : in.dst;
  if (a.id >= (a.isTensor() ? tensors.size() : buffers.size()))
    return none;
  return accessName(a);
}

namespace {
struct Verifier {
  const Program &p;
  const std::function<void(SrcLoc, const Twine &)> &report;
  unsigned errors = 0;

  void error(SrcLoc loc, const Twine &msg) {
    ++errors;
    report(loc, msg);
  }

  void checkAccess(const Access &a, const Instr &in, StringRef role) {
    size_t rank;
    std::string name;
    if (a.isTensor()) {
      if (a.id >= p.tensors.size())
        return error(a.loc, "access to an undeclared tensor");
      rank = p.tensors[a.id].shape.size();
      name = p.tensors[a.id].name;
    } else {
      if (a.id >= p.buffers.size())
        return error(a.loc, "access to an undeclared buffer");
      rank = p.buffers[a.id].shape.size();
      name = p.buffers[a.id].name;
    }
    if (a.dims.size() != rank)
      return error(a.loc, formatv("%{0} has {1} dimension(s) but the access gives {2}", name, rank,
                                  a.dims.size()));
    bool anyRange = false;
    for (size_t d = 0; d < a.dims.size(); ++d) {
      const DimAccess &da = a.dims[d];
      if (!da.isIndex) {
        anyRange = true;
        if (da.extent.size.isConstant() && !da.extent.hasMin && da.extent.size.constant <= 0)
          error(a.loc, formatv("extent of dimension {0} of %{1} must be positive", d, name));
      }
      if (da.start.isConstant() && da.start.constant < 0)
        error(a.loc, formatv("start of dimension {0} of %{1} is negative", d, name));
      for (const auto &t : da.start.terms)
        if (t.first >= p.vars.size())
          error(a.loc, "reference to an unknown loop variable");
    }
    if (a.isBuffer() && !a.dims.empty() && a.dims[0].isIndex)
      error(a.loc, formatv("dimension 0 of buffer %{0} is its partition dimension and must be a range "
                           "`start : extent`",
                           name));
    if (!anyRange)
      error(a.loc, formatv("access to %{0} selects a single element; at least one dimension must be a range",
                           name));
    checkPattern(a, name, rank);
    (void)in;
    (void)role;
  }

  /// An access pattern's tile dimensions: at most MaxDims, each of a
  /// dimension with a constant range holding every index it reaches.
  void checkPattern(const Access &a, const std::string &name, size_t rank) {
    if (a.pattern.empty())
      return;
    if (a.pattern.size() > 8)
      return error(a.loc, formatv("the pattern of %{0} has {1} dimensions; at most 8 are supported", name,
                                  a.pattern.size()));
    if (a.isBuffer() && (a.pattern[0].dim != 0 || a.pattern[0].step != 1))
      return error(a.loc, formatv("the pattern of buffer %{0} must start with its partitions (0:P:1)", name));
    std::vector<int64_t> last(rank, 0);
    for (const PatternDim &d : a.pattern) {
      if (d.dim >= rank || a.dims[d.dim].isIndex || !a.dims[d.dim].extent.size.isConstant() ||
          a.dims[d.dim].extent.hasMin)
        return error(a.loc, formatv("pattern dimension {0} of %{1} is not a range of constant extent", d.dim, name));
      if (d.extent < 1 || d.step < 1 || d.extent > (int64_t(1) << 40) || d.step > (int64_t(1) << 40))
        return error(a.loc, formatv("pattern dimension {0}:{1}:{2} of %{3} needs a positive extent and step", d.dim,
                                    d.extent, d.step, name));
      last[d.dim] += (d.extent - 1) * d.step;
      if (last[d.dim] >= a.dims[d.dim].extent.size.constant)
        return error(a.loc, formatv("the pattern of %{0} leaves the range of its dimension {1} (extent {2})", name,
                                    d.dim, a.dims[d.dim].extent.size.constant));
    }
  }

  bool isSpace(const Access &a, MemSpace s) {
    return a.isBuffer() && a.id < p.buffers.size() && p.buffers[a.id].space == s;
  }

  void checkInstr(const Instr &in) {
    StringRef op = opcodeName(in.op);
    checkAccess(in.dst, in, "destination");
    for (const Access &s : in.srcs)
      checkAccess(s, in, "source");
    if (in.source.known() && in.source.file >= p.sourceFiles.size())
      error(in.loc, "source location names an undeclared source file");
    if (!engineAllowed(in.op, in.engine))
      error(in.loc, formatv("`{0}` cannot run on the {1} engine", op, engineName(in.engine)));
    if (in.op != Opcode::Dma && (in.transpose || in.tag != DmaTag::None))
      error(in.loc, formatv("`transpose` and spill tags apply to `dma` only, not `{0}`", op));
    if (in.op != Opcode::Matmul && in.acc != AccMode::Reset)
      error(in.loc, formatv("accumulation flags apply to `matmul` only, not `{0}`", op));
    if (in.op != Opcode::Dma) {
      if (in.dst.isTensor())
        error(in.dst.loc, formatv("`{0}` cannot write an HBM tensor; only `dma` accesses HBM", op));
      for (const Access &s : in.srcs)
        if (s.isTensor())
          error(s.loc, formatv("`{0}` cannot read an HBM tensor; only `dma` accesses HBM", op));
    }
    const uint8_t allowedTiles = in.op == Opcode::TensorScalar || in.op == Opcode::TensorTensorScan ? ScalarTile
                                 : in.op == Opcode::Activation ? BiasTile | ScaleTile | Accumulator
                                                               : 0;
    if (in.tiles & ~allowedTiles)
      error(in.loc, formatv("`{0}` takes no such per-partition tile operand", op));
    if (in.reverse && in.op != Opcode::TensorScalar)
      error(in.loc, formatv("`reverse` applies to `tensor_scalar` only, not `{0}`", op));
    const bool affineIndex = in.op == Opcode::Iota || in.op == Opcode::AffineSelect;
    if (!affineIndex && (!in.offset.isConstant() || in.offset.constant || in.partitionStep || in.freeStep))
      error(in.loc, formatv("an affine index (offset, partition, free) applies to `iota` and "
                            "`affine_select` only, not `{0}`", op));
    for (const auto &t : in.offset.terms)
      if (t.first >= p.vars.size())
        error(in.loc, "the offset names an unknown loop variable");
    size_t wantSrcs = opInfo(in.op).srcRoles.size() + llvm::countPopulation(unsigned(in.tiles));
    if (in.srcs.size() != wantSrcs)
      error(in.loc, formatv("`{0}` takes {1} source operand(s), got {2}", op, wantSrcs, in.srcs.size()));
    checkOperands(in);
  }

  /// A dma with its one source: a tensor on exactly one side, no PSUM, a
  /// 2-D access to transpose, spill tags in their direction.
  void checkDma(const Instr &in) {
    const Access &s = in.srcs[0];
    if (in.dst.isTensor() == s.isTensor())
      error(in.loc, "`dma` moves data between an HBM tensor and an SBUF buffer: exactly one side "
                    "must be a tensor");
    else if (isSpace(in.dst, MemSpace::PSUM) || isSpace(s, MemSpace::PSUM))
      error(in.loc, "`dma` cannot access PSUM; evict to SBUF first");
    if (in.transpose) {
      const Access &t = in.dst.isTensor() ? in.dst : s;
      unsigned kept = 0;
      for (const DimAccess &d : t.dims)
        kept += !d.isIndex;
      if (kept != 2)
        error(in.loc, "a transposing `dma` needs a 2-D tensor access");
    }
    if (in.tag == DmaTag::SpillSave && !in.dst.isTensor())
      error(in.loc, "`spill_save` must store to an HBM tensor");
    if (in.tag == DmaTag::SpillReload && !in.dst.isBuffer())
      error(in.loc, "`spill_reload` must load into an SBUF buffer");
  }

  /// Each opcode's rules for its operands' memory spaces and its function.
  void checkOperands(const Instr &in) {
    switch (in.op) {
    case Opcode::Dma:
      if (in.srcs.size() == 1)
        checkDma(in);
      break;
    case Opcode::Matmul:
      if (!isSpace(in.dst, MemSpace::PSUM))
        error(in.dst.loc, "`matmul` writes PSUM: the destination must be a psum buffer");
      for (const Access &s : in.srcs)
        if (!isSpace(s, MemSpace::SBUF))
          error(s.loc, "`matmul` operands (stationary, moving) must be sbuf buffers");
      break;
    case Opcode::Transpose:
      if (!isSpace(in.dst, MemSpace::PSUM))
        error(in.dst.loc, "`transpose` (TensorE) writes PSUM: the destination must be a psum buffer");
      for (const Access &s : in.srcs)
        if (!isSpace(s, MemSpace::SBUF))
          error(s.loc, "`transpose` reads an sbuf buffer");
      break;
    case Opcode::Activation:
    case Opcode::TensorScalar:
    case Opcode::Copy:
    case Opcode::Memset:
    case Opcode::Iota:
    case Opcode::BnStats:
    case Opcode::BnAggr:
      break;
    case Opcode::TensorPartitionReduce:
      if (in.aluOp() != AluOp::Add && in.aluOp() != AluOp::Max)
        error(in.loc, formatv("`tensor_partition_reduce` folds with add or max, not {0}", aluOpName(in.aluOp())));
      break;
    case Opcode::TensorReduce:
      if (!isReduction(in.aluOp()))
        error(in.loc, formatv("`tensor_reduce` folds with add, max or min, not {0}", aluOpName(in.aluOp())));
      break;
    case Opcode::AffineSelect:
      if (!isComparison(in.aluOp()))
        error(in.loc, formatv("`affine_select` compares with is_equal, not_equal, is_gt, is_ge, is_lt or "
                              "is_le, not {0}",
                              aluOpName(in.aluOp())));
      break;
    case Opcode::TensorTensor:
    case Opcode::TensorTensorScan:
      if (in.srcs.size() >= 2 && isSpace(in.srcs[0], MemSpace::PSUM) && isSpace(in.srcs[1], MemSpace::PSUM))
        error(in.loc, formatv("`{0}` inputs cannot both be in PSUM", opcodeName(in.op)));
      break;
    }
    if (in.engine == Engine::GpSimd) {
      if (isSpace(in.dst, MemSpace::PSUM))
        error(in.dst.loc, "the gpsimd engine cannot access PSUM");
      for (const Access &s : in.srcs)
        if (isSpace(s, MemSpace::PSUM))
          error(s.loc, "the gpsimd engine cannot access PSUM");
    }
  }

  void checkBody(const std::vector<Stmt> &body) {
    for (const Stmt &s : body) {
      switch (s.kind) {
      case Stmt::Kind::For: {
        const Loop &l = p.loops[s.id];
        if (l.step <= 0)
          error(l.loc, "loop step must be positive");
        checkBody(l.body);
        break;
      }
      case Stmt::Kind::Alloc:
        if (s.id >= p.buffers.size())
          error({}, "alloc of an undeclared buffer");
        break;
      case Stmt::Kind::Instr:
        checkInstr(p.instrs[s.id]);
        break;
      }
    }
  }

  void run() {
    for (const TensorDecl &t : p.tensors) {
      if (t.shape.empty())
        error(t.loc, formatv("tensor %{0} needs at least one dimension", t.name));
      for (int64_t d : t.shape)
        if (d <= 0)
          error(t.loc, formatv("tensor %{0} has a non-positive dimension", t.name));
    }
    for (const BufferDecl &b : p.buffers) {
      if (b.shape.empty())
        error(b.loc, formatv("buffer %{0} needs a partition dimension", b.name));
      for (int64_t d : b.shape)
        if (d <= 0)
          error(b.loc, formatv("buffer %{0} has a non-positive dimension", b.name));
      if (b.bufs < 1)
        error(b.loc, formatv("buffer %{0}: bufs must be >= 1", b.name));
      if (b.address < 0)
        error(b.loc, formatv("buffer %{0}: addr must be >= 0", b.name));
    }
    checkBody(p.body);
  }
};
} // namespace

unsigned verifyProgram(const Program &p, const std::function<void(SrcLoc, const Twine &)> &report) {
  Verifier v{p, report};
  v.run();
  return v.errors;
}

Error verifyProgram(const Program &p) {
  std::string msgs;
  unsigned n = verifyProgram(p, [&](SrcLoc loc, const Twine &msg) {
    msgs += p.locString(loc) + ": error: " + msg.str() + "\n";
  });
  if (!n)
    return Error::success();
  if (!msgs.empty() && msgs.back() == '\n')
    msgs.pop_back();
  return createStringError(inconvertibleErrorCode(), msgs);
}

} // namespace tessel::runtime

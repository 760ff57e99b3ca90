//===- runtime/ProgramPrinter.cpp - Program -> canonical .tasm text -------===//
#include "runtime/Program.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

#include <set>

using namespace llvm;

namespace tessel::runtime {

static std::string num(double v) { return fmt::format("{}", v); }

static std::string term(const Program &p, uint32_t var, int64_t absCoeff) {
  std::string s = "%" + p.vars[var];
  if (absCoeff != 1)
    s += "*" + std::to_string(absCoeff);
  return s;
}

std::string printAffine(const Program &p, const AffineExpr &e) {
  if (e.terms.empty())
    return std::to_string(e.constant);
  std::string s;
  bool constFirst = e.terms[0].second < 0 && e.constant > 0;
  if (constFirst)
    s = std::to_string(e.constant);
  for (size_t i = 0; i < e.terms.size(); ++i) {
    int64_t c = e.terms[i].second;
    int64_t a = c < 0 ? -c : c;
    if (s.empty())
      s = (c < 0 ? "-" : "") + term(p, e.terms[i].first, a);
    else
      s += (c < 0 ? " - " : " + ") + term(p, e.terms[i].first, a);
  }
  if (!constFirst && e.constant != 0)
    s += (e.constant < 0 ? " - " : " + ") + std::to_string(e.constant < 0 ? -e.constant : e.constant);
  return s;
}

static std::string printExtent(const Program &p, const Extent &x) {
  if (x.hasMin)
    return "min(" + printAffine(p, x.size) + ", " + printAffine(p, x.bound) + ")";
  return printAffine(p, x.size);
}

std::string printAccess(const Program &p, const Access &a) {
  std::string s = "%" + p.accessName(a) + "[";
  for (size_t i = 0; i < a.dims.size(); ++i) {
    const DimAccess &d = a.dims[i];
    if (i)
      s += ", ";
    if (d.isIndex) {
      s += printAffine(p, d.start);
      continue;
    }
    bool compact = d.start.isConstant() && !d.extent.hasMin && d.extent.size.isConstant();
    s += printAffine(p, d.start) + (compact ? ":" : " : ") + printExtent(p, d.extent);
  }
  s += "]";
  if (!a.pattern.empty()) {
    // The tile's dimensions, DIM:EXTENT:STEP each (docs/tasm.md).
    s += " pattern(";
    for (size_t i = 0; i < a.pattern.size(); ++i)
      s += (i ? ", " : "") + std::to_string(a.pattern[i].dim) + ":" + std::to_string(a.pattern[i].extent) + ":" +
           std::to_string(a.pattern[i].step);
    s += ")";
  }
  return s;
}

std::string printInstruction(const Program &p, const Instr &in) {
  // The required sources; the optional [P, 1] tiles follow as attributes
  // (a tensor_scalar's scalar in the scalar's place).
  const auto required = ArrayRef<Access>(in.srcs).take_front(opInfo(in.op).srcRoles.size());
  std::string s = instrName(in) + " " + printAccess(p, in.dst) + " <-" + (required.empty() ? "" : " ") +
                  join(map_range(required, [&](const Access &a) { return printAccess(p, a); }), ", ");
  auto tile = [&](uint8_t t) { return printAccess(p, in.srcs[in.tileIndex(t)]); };
  if (in.op == Opcode::TensorScalar || in.op == Opcode::TensorTensorScan) {
    s += ", " + (in.has(ScalarTile) ? tile(ScalarTile) : num(in.imm));
    if (in.reverse)
      s += " reverse";
  }
  if (in.op == Opcode::Memset)
    s += " " + num(in.imm);
  if (in.op == Opcode::Iota || in.op == Opcode::AffineSelect) {
    s += " offset=" + printAffine(p, in.offset) + " partition=" + std::to_string(in.partitionStep) +
         " free=" + std::to_string(in.freeStep);
    if (in.op == Opcode::AffineSelect)
      s += " fill=" + num(in.imm);
  }
  switch (in.op) {
  case Opcode::Dma:
    s += " queue=" + std::to_string(in.queue);
    if (in.queueSpan > 1)
      s += " queues=" + std::to_string(in.queueSpan);
    if (in.transpose)
      s += " transpose";
    if (in.tag == DmaTag::SpillSave)
      s += " spill_save";
    else if (in.tag == DmaTag::SpillReload)
      s += " spill_reload";
    break;
  case Opcode::Matmul:
    if (in.acc == AccMode::Reset)
      s += " reset";
    else if (in.acc == AccMode::Accumulate)
      s += " accumulate";
    else {
      s += " reset_if_first(" +
           join(map_range(in.accVars, [&](uint32_t v) { return "%" + p.vars[v]; }), ", ") + ")";
    }
    break;
  case Opcode::Activation:
    if (in.has(ScaleTile))
      s += " scale=" + tile(ScaleTile);
    else if (in.scale != 1.0)
      s += " scale=" + num(in.scale);
    if (in.has(BiasTile))
      s += " bias=" + tile(BiasTile);
    else if (in.bias != 0.0 || std::signbit(in.bias))
      s += " bias=" + num(in.bias);
    if (in.has(Accumulator))
      s += " accumulate=" + tile(Accumulator);
    break;
  default:
    if (in.engine != defaultEngine(in.op))
      s += " engine=" + engineName(in.engine).str();
    break;
  }
  if (in.source.known() && in.source.file < p.sourceFiles.size()) {
    // loc("FILE":LINE[:COL]), FILE escaped as LLVM IR strings are: a '\\'
    // doubled, '"' and unprintable bytes as '\\' and two hex digits.
    std::string file;
    raw_string_ostream fs(file);
    printEscapedString(p.sourceFiles[in.source.file], fs);
    s += " loc(\"" + fs.str() + "\":" + std::to_string(in.source.line);
    if (in.source.col)
      s += ":" + std::to_string(in.source.col);
    s += ")";
  }
  return s;
}

static std::string shapeList(const std::vector<int64_t> &shape) {
  return join(map_range(shape, [](int64_t d) { return std::to_string(d); }), ", ");
}

static void printDecls(const Program &p, raw_ostream &os) {
  os << "kernel " << p.kernel << "\n";
  os << "target " << p.target << "\n";
  if (p.slotReuse == SlotReuse::Whole)
    os << "reuse whole\n";
  if (!p.tensors.empty())
    os << "\n";
  for (const TensorDecl &t : p.tensors) {
    os << "tensor %" << t.name << " : " << dtypeName(t.dtype) << "[" << shapeList(t.shape) << "] "
       << roleName(t.role) << "\n";
  }
  if (!p.buffers.empty())
    os << "\n";
  for (const BufferDecl &b : p.buffers) {
    os << "buffer %" << b.name << " : " << spaceName(b.space) << " " << dtypeName(b.dtype) << "["
       << shapeList(b.shape) << "] bufs=" << b.bufs << " addr=" << b.address << "\n";
  }
}

// Prints `body`, keeping only instructions accepted by `keep`; loops left
// empty by the filter are dropped. Returns whether anything was printed.
static bool printBody(const Program &p, const std::vector<Stmt> &body, unsigned indent,
                      const std::function<bool(const Instr &)> &keep, bool keepAllocs, raw_ostream &os) {
  bool any = false;
  std::string pad(indent * 2, ' ');
  for (const Stmt &s : body) {
    switch (s.kind) {
    case Stmt::Kind::For: {
      const Loop &l = p.loops[s.id];
      std::string inner;
      raw_string_ostream is(inner);
      if (!printBody(p, l.body, indent + 1, keep, keepAllocs, is))
        break;
      os << pad << "for %" << p.vars[l.var] << " = " << l.lo << " to " << l.hi;
      if (l.step != 1)
        os << " step " << l.step;
      os << " {\n" << is.str() << pad << "}\n";
      any = true;
      break;
    }
    case Stmt::Kind::Alloc:
      if (keepAllocs) {
        os << pad << "alloc %" << p.buffers[s.id].name << "\n";
        any = true;
      }
      break;
    case Stmt::Kind::Instr:
      if (keep(p.instrs[s.id])) {
        os << pad << printInstruction(p, p.instrs[s.id]) << "\n";
        any = true;
      }
      break;
    }
  }
  return any;
}

void printProgram(const Program &p, raw_ostream &os) {
  printDecls(p, os);
  // A body of empty loops prints as nothing, and then no separator either.
  std::string body;
  raw_string_ostream bs(body);
  if (printBody(p, p.body, 0, [](const Instr &) { return true; }, true, bs))
    os << "\n" << bs.str();
}

std::string printProgramToString(const Program &p) {
  std::string s;
  raw_string_ostream os(s);
  printProgram(p, os);
  return os.str();
}

void printEngineStreams(const Program &p, raw_ostream &os) {
  os << "# per-engine instruction streams of kernel " << p.kernel
     << " (each engine runs its stream in order; cross-engine waits come from buffer regions)\n";
  for (Engine e : {Engine::Tensor, Engine::Vector, Engine::Scalar, Engine::GpSimd}) {
    std::string body;
    raw_string_ostream bs(body);
    if (!printBody(p, p.body, 1, [e](const Instr &in) { return in.engine == e; }, false, bs))
      continue;
    os << "\nstream " << engineName(e) << " {\n" << bs.str() << "}\n";
  }
  std::set<uint32_t> queues;
  for (const Instr &in : p.instrs)
    if (in.op == Opcode::Dma)
      queues.insert(in.queue);
  for (uint32_t q : queues) {
    std::string body;
    raw_string_ostream bs(body);
    printBody(p, p.body, 1, [q](const Instr &in) { return in.op == Opcode::Dma && in.queue == q; }, false, bs);
    os << "\nstream dma.q" << q << " {\n" << bs.str() << "}\n";
  }
}

} // namespace tessel::runtime

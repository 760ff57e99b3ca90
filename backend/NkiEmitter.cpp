//===- backend/NkiEmitter.cpp - Tile IR to NKI Python ---------------------===//
#include "backend/NkiEmitter.h"
#include "backend/Backend.h"
#include "support/FloatText.h"

#include "runtime/Simulator.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Casting.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>

namespace tessel::backend {
namespace {

using namespace ir;

llvm::Error fail(const llvm::Twine &msg) { return llvm::createStringError(llvm::inconvertibleErrorCode(), msg); }

/// `constant + sum(coeff * python name)` over the emitted loops' trip indices.
struct Linear {
  int64_t constant = 0;
  std::vector<std::pair<std::string, int64_t>> terms;

  void add(const std::string &name, int64_t coeff) {
    for (auto &t : terms)
      if (t.first == name) {
        t.second += coeff;
        return;
      }
    terms.push_back({name, coeff});
  }
  bool divisibleBy(int64_t d) const {
    return llvm::all_of(terms, [&](const auto &t) { return t.second % d == 0; });
  }
  /// The partition group of a folded index: every coefficient divided by the
  /// partitions `P` (the caller has checked they divide), and `constant`.
  Linear group(int64_t P, int64_t groupConstant) const {
    Linear g;
    g.constant = groupConstant;
    for (const auto &[n, c] : terms)
      g.add(n, c / P);
    return g;
  }
  std::string str() const {
    // `135 - m * 256` rather than `-m * 256 + 135`.
    bool leadingConstant = constant > 0 && !terms.empty() && terms.front().second < 0;
    std::string out = leadingConstant ? std::to_string(constant) : "";
    for (const auto &[name, coeff] : terms) {
      if (coeff == 0)
        continue;
      int64_t mag = coeff < 0 ? -coeff : coeff;
      std::string term = mag == 1 ? name : name + " * " + std::to_string(mag);
      if (out.empty())
        out = coeff < 0 ? "-" + term : term;
      else
        out += (coeff < 0 ? " - " : " + ") + term;
    }
    if (out.empty())
      return std::to_string(constant);
    if (leadingConstant)
      return out;
    if (constant > 0)
      out += " + " + std::to_string(constant);
    else if (constant < 0)
      out += " - " + std::to_string(-constant);
    return out;
  }
};

const char *dtypeText(DType t) { return t == DType::F32 ? "nl.float32" : "nl.bfloat16"; }

const char *aluText(AluOp op) {
  switch (op) {
  case AluOp::Add: return "nl.add";
  case AluOp::Sub: return "nl.subtract";
  case AluOp::Mul: return "nl.multiply";
  case AluOp::Max: return "nl.maximum";
  case AluOp::Min: return "nl.minimum";
  case AluOp::Divide: return "nl.divide";
  case AluOp::Pow: return "nl.power";
  case AluOp::IsEqual: return "nl.equal";
  case AluOp::NotEqual: return "nl.not_equal";
  case AluOp::IsGt: return "nl.greater";
  case AluOp::IsGe: return "nl.greater_equal";
  case AluOp::IsLt: return "nl.less";
  case AluOp::IsLe: return "nl.less_equal";
  }
  return "";
}

/// A float literal for Python: shortestFloatText, and inf as Python spells it
/// (an affine_select's fill).
std::string pythonFloat(double v) {
  if (std::isinf(v))
    return v > 0 ? "float('inf')" : "-float('inf')";
  return shortestFloatText(v);
}

std::string actText(ActFn fn) { return ("nl." + actFnName(fn)).str(); }

class Emitter {
public:
  Emitter(const Kernel &kernel, const runtime::Target &target, const llvm::SourceMgr *sources,
          const NkiEmitOptions &options)
      : kernel(kernel), sources(sources), options(options), legacy(options.api == NkiApi::Legacy),
        P(kernel.geometry.partitions ? kernel.geometry.partitions : target.sbuf_partitions) {}

  llvm::Expected<std::string> run() {
    for (llvm::StringRef reserved : {"nki", "nl", "nisa", "min", "range", "print", "len", "int", "float",
                                     "and", "or", "not", "in", "is", "if", "else", "for", "def", "return",
                                     "lambda", "from", "import", "as", "with", "pass", "del", "class", "try",
                                     "while", "yield", "global", "None", "True", "False"})
      used.insert(reserved);
    for (const Value *arg : kernel.args)
      nameOf(arg);
    placedSbuf = everySbufBufferPlaced(kernel.body);
    header();
    iotaDefsAt = out.size();
    if (auto err = block(kernel.body, 1))
      return err;
    std::string defs;
    for (const auto &[name, def] : iotaDefs)
      defs += "    " + name + " = " + def + "\n";
    if (!defs.empty())
      defs = "    # the tile indices of the partial tiles' masks (NKI masking)\n" + defs;
    if (!rotatingDefs.empty())
      defs += "    # buffers the loops rotate through: block i of each lives in tile i % N (modulo allocation)\n" +
              rotatingDefs;
    out.insert(iotaDefsAt, defs);
    std::vector<std::string> outs;
    for (const Value *arg : kernel.args)
      if (arg->role == TensorRole::Output)
        outs.push_back(names[arg]);
    line(1, "return " + llvm::join(outs, ", "));
    return out;
  }

private:
  // --- text --------------------------------------------------------------
  void line(int depth, const std::string &text) { out += std::string(4 * depth, ' ') + text + "\n"; }

  const std::string &nameOf(const Value *v) {
    auto it = names.find(v);
    if (it != names.end())
      return it->second;
    std::string base;
    for (char c : v->name)
      base += llvm::isAlnum(c) || c == '_' ? c : '_';
    if (base.empty() || llvm::isDigit(base[0]))
      base = "t" + base;
    std::string name = base;
    for (int i = 1; used.count(name); ++i)
      name = base + "_" + std::to_string(i);
    used.insert(name);
    return names[v] = name;
  }

  /// "file.tsl:LINE: text of the line", or "" without a source.
  std::string sourceLine(llvm::SMLoc loc) const {
    if (!sources || !loc.isValid())
      return "";
    unsigned buf = sources->FindBufferContainingLoc(loc);
    if (!buf)
      return "";
    unsigned lineNo = sources->getLineAndColumn(loc, buf).first;
    const llvm::MemoryBuffer *mb = sources->getMemoryBuffer(buf);
    const char *begin = mb->getBufferStart(), *end = mb->getBufferEnd(), *at = loc.getPointer();
    const char *s = at, *e = at;
    while (s > begin && s[-1] != '\n')
      --s;
    while (e < end && *e != '\n')
      ++e;
    llvm::StringRef text = llvm::StringRef(s, size_t(e - s)).trim();
    std::string file = llvm::sys::path::filename(mb->getBufferIdentifier()).str();
    return llvm::formatv("{0}:{1}: {2}", file, lineNo, text).str();
  }

  void header() {
    std::string ins;
    for (const Value *arg : kernel.args)
      if (arg->role == TensorRole::Input)
        ins += (ins.empty() ? "" : ", ") + names[arg];
    out += llvm::formatv("\"\"\"{0} as an NKI kernel ({1}).\n\n", kernel.name,
                         legacy ? "legacy API: neuronxcc.nki, trn1" : "current API: the nki package, trn2 and later")
               .str();
    if (!options.command.empty())
      out += "Emitted by `" + options.command + "`; ";
    out += "`tessel run THIS.py` runs it on tessel's simulator.\n\"\"\"\n";
    llvm::SmallVector<llvm::StringRef, 4> notes;
    llvm::StringRef(options.preamble).split(notes, '\n', -1, /*KeepEmpty=*/false);
    for (llvm::StringRef note : notes)
      out += "# " + note.ltrim("/ ").str() + "\n";
    if (!notes.empty())
      out += "# NKI kernels do not express the collective (nki.benchmark runs one NeuronCore): the\n"
             "# AllReduce of the cores' results is the framework's.\n";
    if (legacy)
      out += "import neuronxcc.nki as nki\n" + std::string(placedSbuf ? "import neuronxcc.nki.compiler as ncc\n" : "") +
             "import neuronxcc.nki.isa as nisa\nimport neuronxcc.nki.language as nl\n";
    else
      out += "import nki\nimport nki.isa as nisa\nimport nki.language as nl\n";
    out += "\n\n@nki.jit\n";
    out += "def " + sanitize(kernel.name) + "(" + ins + "):\n";
    std::string src = sourceLine(kernel.loc);
    line(1, "\"\"\"" + (src.empty() ? kernel.name : src));
    out += "\n";
    std::string blocks = kernel.blockParams.str();
    line(1, "Block parameters: " + (blocks.empty() ? std::string("none (TileGen's defaults)") : blocks) + ".");
    if (options.latencyUs)
      line(1, llvm::formatv("Predicted latency: {0:F2} us on {1} (tessel's timing model).", *options.latencyUs,
                            targetName)
                  .str());
    if (!kernel.notes.empty())
      line(1, "Pass notes:");
    for (const std::string &note : kernel.notes)
      line(2, note);
    line(1, "\"\"\"");
    for (const Value *arg : kernel.args)
      if (arg->role == TensorRole::Output)
        line(1, names[arg] + " = nl.ndarray(" + shapeText(arg->type, false) + ", dtype=" +
                    dtypeText(arg->type.dtype) + ", buffer=nl.shared_hbm)");
  }

  static std::string sanitize(const std::string &n) {
    std::string s;
    for (char c : n)
      s += llvm::isAlnum(c) || c == '_' ? c : '_';
    return s.empty() || llvm::isDigit(s[0]) ? "k" + s : s;
  }

  bool folded(const TensorType &t) const { return t.space != MemSpace::HBM && t.dims[0].size > P; }

  std::string shapeText(const TensorType &t, bool fold) const {
    std::vector<std::string> dims;
    if (fold) {
      dims.push_back(std::to_string(P));
      dims.push_back(std::to_string(t.dims[0].size / P));
    } else {
      dims.push_back(std::to_string(t.dims[0].size));
    }
    for (size_t i = 1; i < t.dims.size(); ++i)
      dims.push_back(std::to_string(t.dims[i].size));
    return "(" + llvm::join(dims, ", ") + (dims.size() == 1 ? ",)" : ")");
  }

  // --- expressions -------------------------------------------------------

  llvm::Expected<Linear> linear(const IndexExpr &e, llvm::SMLoc loc) {
    int64_t c = 0;
    llvm::SmallVector<std::pair<const Value *, int64_t>, 4> terms;
    if (!e.linearForm(c, terms))
      return locatedError(sources, loc, "--emit=nki: index " + e.str() + " is not affine");
    Linear out;
    out.constant = c;
    for (const auto &[v, coeff] : terms) {
      auto it = loops.find(v);
      if (it == loops.end())
        return locatedError(sources, loc, "--emit=nki: index " + e.str() + " uses a value that is not a loop");
      out.constant += coeff * it->second.lo;
      out.add(names[v], coeff * it->second.step);
    }
    return out;
  }

  /// The expression in Python over the trip indices (min() for partial tiles).
  llvm::Expected<std::string> expr(const IndexExpr &e, llvm::SMLoc loc) {
    if (e.kind() == IndexExpr::Kind::Min) {
      auto a = expr(e.lhs(), loc);
      if (!a)
        return a.takeError();
      auto b = expr(e.rhs(), loc);
      if (!b)
        return b.takeError();
      return "min(" + *a + ", " + *b + ")";
    }
    auto lin = linear(e, loc);
    if (!lin)
      return lin.takeError();
    return lin->str();
  }

  /// A range `start +: extent` as a Python index: `a:b` for constants,
  /// nl.ds(start, size) otherwise.
  llvm::Expected<std::string> range(const IndexExpr &start, const IndexExpr &extent, llvm::SMLoc loc) {
    if (masking)
      return maskedRange(start, extent, loc);
    if (start.isConst() && extent.isConst())
      return llvm::formatv("{0}:{1}", start.constValue(), start.constValue() + extent.constValue()).str();
    auto s = expr(start, loc);
    if (!s)
      return s.takeError();
    auto n = expr(extent, loc);
    if (!n)
      return n.takeError();
    return "nl.ds(" + *s + ", " + *n + ")";
  }

  /// Whether a DMA access covers whole partition groups of a folded buffer
  /// (widen-loads: several groups in one transfer); their count, else 0.
  int64_t groupsSpanned(const Access &a) const {
    if (!folded(a.base->type) || !a.indices[0].isRange() || !a.indices[0].extent->isConst())
      return 0;
    int64_t extent = a.indices[0].extent->constValue();
    return extent > P && extent % P == 0 ? extent / P : 0;
  }

  /// `a` with `groupVar`'s group of P rows in place of its whole-group range
  /// (its first range on HBM, its partition dimension on chip).
  llvm::Expected<std::string> groupAccess(const Access &a, llvm::SMLoc loc, const std::string &groupVar) {
    if (masking)
      return locatedError(sources, loc, "--emit=nki: a partial tile moved over several partition groups has no "
                                        "legacy NKI form (a mask keeps one group)");
    std::vector<std::string> idx;
    bool done = false;
    for (size_t d = 0; d < a.indices.size(); ++d) {
      const Index &i = a.indices[d];
      if (!done && i.isRange()) {
        done = true;
        auto lin = linear(i.start, loc);
        if (!lin)
          return lin.takeError();
        if (folded(a.base->type)) {
          Linear group = lin->group(P, lin->constant / P);
          group.add(groupVar, 1);
          idx.push_back(llvm::formatv("0:{0}", P).str());
          idx.push_back(group.str());
        } else {
          lin->add(groupVar, P);
          idx.push_back(llvm::formatv("nl.ds({0}, {1})", lin->str(), P).str());
        }
        continue;
      }
      auto text = i.isRange() ? range(i.start, *i.extent, loc) : expr(i.start, loc);
      if (!text)
        return text.takeError();
      idx.push_back(*text);
    }
    return indexed(a.base, idx);
  }

  /// `a` indexed by the mgrid `p, g, f` of a legacy multi-group load or
  /// store: its whole-group range as group g's partition p (rows g * P + p
  /// on HBM), its one other range as f.
  llvm::Expected<std::string> gridAccess(const Access &a, llvm::SMLoc loc, const std::string &p,
                                         const std::string &g, const std::string &f) {
    std::vector<std::string> idx;
    bool groupDone = false;
    for (const Index &i : a.indices) {
      auto start = linear(i.start, loc);
      if (!start)
        return start.takeError();
      if (!i.isRange()) {
        idx.push_back(start->str());
      } else if (!groupDone) {
        groupDone = true;
        if (folded(a.base->type)) {
          Linear group = start->group(P, start->constant / P);
          group.add(g, 1);
          idx.push_back(p);
          idx.push_back(group.str());
        } else {
          start->add(g, P);
          start->add(p, 1);
          idx.push_back(start->str());
        }
      } else {
        start->add(f, 1);
        idx.push_back(start->str());
      }
    }
    return indexed(a.base, idx);
  }

  /// The columns of a multi-group transfer's other range, when it has exactly
  /// one of constant size (the mgrid's third axis); else 0.
  static int64_t gridColumns(const Access &a) {
    int64_t ranges = 0, cols = 0;
    for (size_t d = 0; d < a.indices.size(); ++d)
      if (a.indices[d].isRange()) {
        if (++ranges == 2 && a.indices[d].extent->isConst())
          cols = a.indices[d].extent->constValue();
      }
    return ranges == 2 ? cols : 0;
  }

  std::string fresh(llvm::StringRef base) {
    std::string name = base.str();
    for (int i = 1; used.count(name); ++i)
      name = base.str() + "_" + std::to_string(i);
    used.insert(name);
    return name;
  }

  llvm::Expected<std::string> access(const Access &a, llvm::SMLoc loc) {
    const TensorType &t = a.base->type;
    if (a.isPattern() || a.tileDims().size() != 2)
      return locatedError(sources, loc, "--emit=nki: the access to %" + a.base->name + " is an access pattern "
                                        "or a tile of other than 2 dimensions, which --emit=nki does not write");
    std::vector<std::string> idx;
    rangePos = 0;
    for (size_t d = 0; d < a.indices.size(); ++d) {
      const Index &i = a.indices[d];
      if (d == 0 && folded(t)) {
        // Partition p of a folded dimension: partition p % P of group p / P.
        auto lin = linear(i.start, loc);
        if (!lin)
          return lin.takeError();
        int64_t offset = ((lin->constant % P) + P) % P;
        std::optional<int64_t> most = i.isRange() ? extentBound(*i.extent) : std::nullopt;
        if (!lin->divisibleBy(P) || !most || offset + *most > P)
          return locatedError(sources, loc,
                              "--emit=nki: access " + llvm::formatv("%{0}", a.base->name).str() +
                                  " spans partition groups of a folded buffer; NKI tiles keep one group");
        Linear group = lin->group(P, (lin->constant - offset) / P);
        auto part = range(IndexExpr(offset), *i.extent, loc);
        if (!part)
          return part.takeError();
        idx.push_back(*part);
        idx.push_back(group.str());
        continue;
      }
      auto text = i.isRange() ? range(i.start, *i.extent, loc) : expr(i.start, loc);
      if (!text)
        return text.takeError();
      idx.push_back(*text);
    }
    return indexed(a.base, idx);
  }

  // --- legacy partial tiles: NKI's masking ------------------------------
  // neuronxcc.nki writes a partial tile as a full one of nl.arange indices
  // with `mask=` keeping its leading elements (`m_p128 < 7 - m * 128`): while
  // an op with a `min` extent is emitted, every range is `start + index` and
  // each `min(c, e)` one mask term of its index.

  static bool partial(const Access &a) {
    return llvm::any_of(a.indices, [](const Index &i) { return i.isRange() && !i.extent->isConst(); });
  }

  /// The mask= argument of the op being emitted, or "".
  std::string maskArg() const {
    if (!masking || masking->empty())
      return "";
    if (masking->size() == 1)
      return ", mask=(" + masking->front() + ")";
    return ", mask=(" + llvm::join(llvm::map_range(*masking, [](const std::string &t) { return "(" + t + ")"; }),
                                   " & ") + ")";
  }

  /// The non-constant arguments of a `min` tree (its constant ones give `bound`).
  static void minLeaves(const IndexExpr &e, std::vector<IndexExpr> &leaves, int64_t &bound) {
    if (e.kind() == IndexExpr::Kind::Min) {
      minLeaves(e.lhs(), leaves, bound);
      minLeaves(e.rhs(), leaves, bound);
    } else if (e.isConst()) {
      bound = std::min(bound, e.constValue());
    } else {
      leaves.push_back(e);
    }
  }

  llvm::Expected<std::string> maskedRange(const IndexExpr &start, const IndexExpr &extent, llvm::SMLoc loc) {
    const char *axis = rangePos++ == 0 ? "p" : "f";
    std::vector<IndexExpr> leaves;
    int64_t n = INT64_MAX;
    minLeaves(extent, leaves, n);
    if (n == INT64_MAX)
      return locatedError(sources, loc, "--emit=nki: extent " + extent.str() + " has no constant bound");
    std::vector<std::string> bounds;
    for (const IndexExpr &leaf : leaves) {
      auto b = expr(leaf, loc);
      if (!b)
        return b.takeError();
      bounds.push_back(*b);
    }
    // One index per tile axis, size and bounds: the mask restricts what it indexes.
    std::string base = llvm::formatv("{0}_{1}{2}", bounds.empty() ? "i" : "m", axis, n).str(), name = base;
    for (int k = 2; masked.count(name) && masked[name] != bounds; ++k) // within one op
      name = base + "_" + std::to_string(k);
    masked[name] = bounds;
    iotaDefs[name] = llvm::formatv("nl.arange({0})[{1}]", n, *axis == 'p' ? ":, None" : "None, :").str();
    for (const std::string &b : bounds)
      if (!llvm::is_contained(*masking, name + " < " + b))
        masking->push_back(name + " < " + b);
    auto s = expr(start, loc);
    if (!s)
      return s.takeError();
    return *s == "0" ? name : *s + " + " + name;
  }

  // --- ops ---------------------------------------------------------------
  llvm::Error block(const Block &b, int depth) {
    for (const auto &op : b.ops)
      if (auto err = emitOp(*op, depth))
        return err;
    return llvm::Error::success();
  }

  /// One comment per loop nest: its source line and the pass that made it.
  void nestComment(const ForOp &loop, int depth, const ForOp *parent) {
    if (parent && parent->madeBy == loop.madeBy)
      return;
    std::string src = sourceLine(loop.loc);
    // A loop no pass made came with the kernel: TileGen's, from a .tsl.
    bool fromTsl = llvm::StringRef(src).contains(".tsl:");
    std::string maker = !loop.madeBy.empty() ? "made by " + loop.madeBy : fromTsl ? "made by TileGen" : "";
    if (src.empty() && maker.empty())
      return;
    std::string text = "# " + (src.empty() ? "" : "from " + src);
    if (!maker.empty())
      text += (src.empty() ? "" : "; ") + maker;
    line(depth, text);
  }

  // --- placed buffers ----------------------------------------------------
  // Every SBUF tensor is placed at the address tessel's allocator chose, and a
  // buffer of N slots allocated in a loop states N, in each API's documented
  // terms. neuronxcc.nki (legacy) states a count only by allocating directly,
  // and then every SBUF tensor of the kernel must be (nki.compiler.sbuf.
  // auto_alloc): the buffer is one tensor declared before the loops, its
  // block dimension indexed by the loops' iteration count and placed by
  // `mod_alloc(num_free_tiles=(N,))` in tile `count % N`. The current API
  // unrolls loops, so the count is an integer: `nl.ndarray(address=(0,
  // A + count % N * S))`, S the tile's bytes. Either way the slot is the one
  // tessel's k-th allocation takes.

  static bool everySbufBufferPlaced(const Block &b) {
    for (const auto &op : b.ops) {
      if (const auto *a = llvm::dyn_cast<AllocOp>(op.get())) {
        if (a->result->type.space == MemSpace::SBUF && !a->address)
          return false;
      } else if (const auto *f = llvm::dyn_cast<ForOp>(op.get())) {
        if (!everySbufBufferPlaced(f->body))
          return false;
      }
    }
    return true;
  }

  /// The enclosing loops' iteration count as Python (their trip product in `blocks`).
  std::string iterationCount(int64_t &blocks) {
    blocks = 1;
    std::vector<std::string> terms;
    for (auto it = enclosing.rbegin(); it != enclosing.rend(); ++it) {
      int64_t trips = (*it)->constTripCount();
      if (trips > 1)
        terms.push_back(blocks == 1 ? nameOf((*it)->iv) : nameOf((*it)->iv) + " * " + std::to_string(blocks));
      blocks *= trips;
    }
    std::reverse(terms.begin(), terms.end());
    return terms.empty() ? "0" : llvm::join(terms, " + ");
  }

  int64_t slotBytes(const TensorType &t) const {
    int64_t bytes = dtypeBytes(t.dtype) * (folded(t) ? t.dims[0].size / P : 1);
    for (size_t i = 1; i < t.dims.size(); ++i)
      bytes *= t.dims[i].size;
    return bytes;
  }

  llvm::Error placeSbuf(const AllocOp &a, int depth) {
    const Value *v = a.result;
    const TensorType &t = v->type;
    std::string head = nameOf(v) + " = nl.ndarray(", shape = shapeText(t, folded(t));
    std::string dtype = std::string(", dtype=") + dtypeText(t.dtype), addr = std::to_string(*a.address);
    bool rotating = a.bufs > 1 && !enclosing.empty();
    int64_t blocks = 1;
    std::string count = rotating ? iterationCount(blocks) : "";
    if (!legacy) {
      std::string at = rotating ? llvm::formatv("{0} + ({1}) % {2} * {3}", addr, count, a.bufs, slotBytes(t)).str()
                                : addr;
      line(depth, head + shape + dtype + ", buffer=nl.sbuf, address=(0, " + at + "))" +
                      (rotating ? llvm::formatv("  # {0} buffers", a.bufs).str() : ""));
      return llvm::Error::success();
    }
    std::string buffer = ", buffer=ncc.sbuf.mod_alloc(base_addr=" + addr;
    if (!rotating) {
      line(depth, head + shape + dtype + buffer + "))");
      return llvm::Error::success();
    }
    blockIndex[v] = count;
    size_t cut = shape.find_first_of(",)", 1);
    rotatingDefs += "    " + head + "(" + std::to_string(blocks) + ", nl.par_dim(" + shape.substr(1, cut - 1) + ")" +
                    shape.substr(cut) + dtype + buffer + ", num_free_tiles=(" + std::to_string(a.bufs) + ",)))\n";
    return llvm::Error::success();
  }

  /// `base[idx]`, a rotating buffer's block index first.
  std::string indexed(const Value *base, std::vector<std::string> idx) const {
    auto it = blockIndex.find(base);
    if (it != blockIndex.end())
      idx.insert(idx.begin(), it->second);
    return names.lookup(base) + "[" + llvm::join(idx, ", ") + "]";
  }

  llvm::Error emitOp(const Op &op, int depth) {
    switch (op.kind) {
    case OpKind::Alloc: {
      const auto &a = llvm::cast<AllocOp>(op);
      const Value *v = a.result;
      const TensorType &t = v->type;
      std::string buffer = t.space == MemSpace::SBUF ? "nl.sbuf" : t.space == MemSpace::PSUM ? "nl.psum" : "nl.private_hbm";
      std::string note;
      if (t.space != MemSpace::HBM && a.bufs > 1)
        note = llvm::formatv("  # {0} buffers", a.bufs).str();
      if (v->role == TensorRole::Spill)
        note = "  # spill slot";
      if (placedSbuf && t.space == MemSpace::SBUF)
        return placeSbuf(a, depth);
      line(depth, nameOf(v) + " = nl.ndarray(" + shapeText(t, folded(t)) + ", dtype=" + dtypeText(t.dtype) +
                      ", buffer=" + buffer + ")" + note);
      return llvm::Error::success();
    }
    case OpKind::View: {
      const auto &vw = llvm::cast<ViewOp>(op);
      line(depth, nameOf(vw.result) + " = " + names[vw.source] + "  # the same tensor in another role");
      return llvm::Error::success();
    }
    case OpKind::For: {
      const auto &f = llvm::cast<ForOp>(op);
      if (!f.lo.isConst() || !f.hi.isConst())
        return locatedError(sources, f.loc,
                            "--emit=nki: a loop whose bounds depend on another loop has no NKI range");
      nestComment(f, depth, enclosing.empty() ? nullptr : enclosing.back());
      int64_t trips = f.constTripCount();
      loops[f.iv] = {f.lo.constValue(), f.step};
      std::string var = nameOf(f.iv);
      line(depth, llvm::formatv("for {0} in nl.{1}({2}):", var, f.parallel || nkiLoopIsParallel(f) ? "affine_range" : "sequential_range",
                                trips)
                      .str());
      enclosing.push_back(&f);
      auto err = block(f.body, depth + 1);
      enclosing.pop_back();
      if (f.body.ops.empty())
        line(depth + 1, "pass");
      return err;
    }
    default:
      return instruction(op, depth);
    }
  }

  llvm::Error dma(const DmaOp &d, int depth) {
    llvm::SMLoc loc = d.loc;
    auto emit = [&](const std::string &text) {
      line(depth, text);
      return llvm::Error::success();
    };
    int64_t groups = d.transpose ? 0 : std::max(groupsSpanned(d.dst), groupsSpanned(d.src));
    if (groups && legacy && !masking && !d.src.isPattern() && !d.dst.isPattern()) {
      // One transfer for every group, as tessel runs it: the legacy API
      // indexes a 3-D tile with nl.mgrid (a loop of one load per group would
      // be as many transfers, each paying the DMA's fixed cost).
      int64_t cols = gridColumns(d.src);
      if (cols && cols == gridColumns(d.dst))
        return gridDma(d, depth, groups, cols);
    }
    std::string groupVar;
    if (groups) {
      // NKI tiles keep one partition group: one transfer per group.
      groupVar = fresh("g");
      line(depth, llvm::formatv("for {0} in nl.affine_range({1}):  # one transfer per partition group",
                                groupVar, groups)
                      .str());
      ++depth;
    }
    auto acc = [&](const Access &a) {
      llvm::SMLoc at = loc.isValid() ? loc : a.loc;
      return groups ? groupAccess(a, at, groupVar) : access(a, at);
    };
    auto dst = acc(d.dst), src = acc(d.src);
    if (!dst)
      return dst.takeError();
    if (!src)
      return src.takeError();
    std::string tag = d.tag == DmaTag::SpillSave ? "  # spill save" : d.tag == DmaTag::SpillReload ? "  # spill reload" : "";
    bool load = d.src.base->type.space == MemSpace::HBM;
    if (d.transpose) {
      if (!load)
        return locatedError(sources, loc, "--emit=nki: a transposing store has no NKI call (DMA transposes load)");
      return emit(legacy ? *dst + " = nl.load_transpose2d(" + *src + maskArg() + ")" + tag
                         : "nisa.dma_transpose(dst=" + *dst + ", src=" + *src + ")" + tag);
    }
    if (!legacy)
      return emit("nisa.dma_copy(dst=" + *dst + ", src=" + *src + ")" + tag);
    return emit(load ? *dst + " = nl.load(" + *src + maskArg() + ")" + tag
                     : "nl.store(" + *dst + ", value=" + *src + maskArg() + ")" + tag);
  }

  llvm::Error gridDma(const DmaOp &d, int depth, int64_t groups, int64_t cols) {
    std::string p = fresh("i_p"), g = fresh("i_g"), f = fresh("i_f");
    std::string n = std::to_string(groups);
    line(depth, p + ", " + g + ", " + f + " = nl.mgrid[0:" + std::to_string(P) + ", 0:" + n + ", 0:" +
                    std::to_string(cols) + "]  # " + n + " partition groups in one transfer");
    auto dst = gridAccess(d.dst, d.loc, p, g, f);
    if (!dst)
      return dst.takeError();
    auto src = gridAccess(d.src, d.loc, p, g, f);
    if (!src)
      return src.takeError();
    std::string tag = d.tag == DmaTag::SpillSave     ? "  # spill save"
                      : d.tag == DmaTag::SpillReload ? "  # spill reload"
                                                     : "";
    bool load = d.src.base->type.space == MemSpace::HBM;
    line(depth, load ? *dst + " = nl.load(" + *src + ")" + tag : "nl.store(" + *dst + ", value=" + *src + ")" + tag);
    return llvm::Error::success();
  }

  /// Emits `op` with NKI's masking when it is legacy and has a partial tile.
  llvm::Error instruction(const Op &op, int depth) {
    Op &mutableOp = const_cast<Op &>(op); // reads() / write() are not const
    bool partialTile = false;
    if (auto *d = llvm::dyn_cast<DmaOp>(&op))
      partialTile = partial(d->dst) || partial(d->src);
    else if (mutableOp.write())
      partialTile = partial(*mutableOp.write()) ||
                    llvm::any_of(mutableOp.reads(), [](const Access *a) { return partial(*a); });
    if (legacy && partialTile) {
      masking.emplace();
      masked.clear();
    }
    llvm::Error err = llvm::isa<DmaOp>(op) ? dma(llvm::cast<DmaOp>(op), depth) : compute(op, depth);
    masking.reset();
    return err;
  }

  llvm::Error compute(const Op &op, int depth) {
    llvm::SMLoc loc = op.loc;
    auto acc = [&](const Access &a) { return access(a, loc.isValid() ? loc : a.loc); };
    auto emit = [&](const std::string &text) {
      line(depth, text);
      return llvm::Error::success();
    };
    Op &mutableOp = const_cast<Op &>(op); // reads() / write() are not const
    if (!mutableOp.write())
      return locatedError(sources, loc, ("--emit=nki: op '" + op.mnemonic() + "' has no NKI equivalent").str());
    auto dst = acc(*mutableOp.write());
    if (!dst)
      return dst.takeError();
    std::vector<std::string> src;
    for (const Access *a : mutableOp.reads()) {
      auto text = acc(*a);
      if (!text)
        return text.takeError();
      src.push_back(*text);
    }
    switch (op.kind) {
    case OpKind::Matmul: {
      const auto &m = llvm::cast<MatmulOp>(op);
      const std::string &st = src[0], &mv = src[1];
      bool adds = !m.resetOn.empty() || m.accumulate;
      if (legacy)
        return emit(*dst + (adds ? " += " : " = ") + "nisa.nc_matmul(" + st + ", " + mv + maskArg() + ")");
      // accumulate=None (omitted): NKI infers the group from the enclosing loops.
      std::string mode = m.accumulate ? ", accumulate=True" : m.resetOn.empty() ? ", accumulate=False" : "";
      return emit("nisa.nc_matmul(dst=" + *dst + ", stationary=" + st + ", moving=" + mv + mode + ")");
    }
    case OpKind::Transpose: {
      return emit(legacy ? *dst + " = nisa.nc_transpose(" + src[0] + maskArg() + ")"
                         : "nisa.nc_transpose(dst=" + *dst + ", data=" + src[0] + ")");
    }
    case OpKind::Activation: {
      const auto &a = llvm::cast<ActivationOp>(op);
      // src: data, then the bias and scale tiles it has (ActivationOp::reads).
      size_t next = 1;
      std::string extra;
      if (a.biasTile)
        extra += ", bias=" + src[next++];
      else if (a.bias != 0.0)
        extra += ", bias=" + shortestFloatText(a.bias);
      if (a.scaleTile)
        extra += ", scale=" + src[next++];
      else if (a.scale != 1.0)
        extra += ", scale=" + shortestFloatText(a.scale);
      std::string call = "nisa.activation";
      if (a.accumulator) {
        auto z = acc(*a.accumulator);
        if (!z)
          return z.takeError();
        extra += ", reduce_op=nl.add, reduce_res=" + *z;
        if (legacy)
          call = "nisa.activation_reduce";
      }
      return emit(legacy ? *dst + " = " + call + "(op=" + actText(a.fn) + ", data=" + src[0] + extra + maskArg() + ")"
                         : call + "(dst=" + *dst + ", op=" + actText(a.fn) + ", data=" + src[0] + extra + ")");
    }
    case OpKind::TensorTensor: {
      const auto &t = llvm::cast<TensorTensorOp>(op);
      std::string args = "data1=" + src[0] + ", data2=" + src[1] + ", op=" + aluText(t.alu);
      return emit(legacy ? *dst + " = nisa.tensor_tensor(" + args + maskArg() + ")" : "nisa.tensor_tensor(dst=" + *dst + ", " + args + ")");
    }
    case OpKind::TensorScalar: {
      const auto &t = llvm::cast<TensorScalarOp>(op);
      std::string args = "data=" + src[0] + ", op0=" + aluText(t.alu) +
                         ", operand0=" + (t.scalarTile ? src[1] : shortestFloatText(t.scalar)) +
                         (t.reverse ? ", reverse0=True" : "");
      return emit(legacy ? *dst + " = nisa.tensor_scalar(" + args + maskArg() + ")" : "nisa.tensor_scalar(dst=" + *dst + ", " + args + ")");
    }
    case OpKind::Copy: {
      return emit(legacy ? *dst + " = nisa.tensor_copy(src=" + src[0] + maskArg() + ")"
                         : "nisa.tensor_copy(dst=" + *dst + ", src=" + src[0] + ")");
    }
    case OpKind::Memset: {
      const auto &m = llvm::cast<MemsetOp>(op);
      if (!legacy)
        return emit("nisa.memset(dst=" + *dst + ", value=" + shortestFloatText(m.value) + ")");
      // The legacy memset returns a tile of the given shape.
      std::vector<std::string> shape;
      // Masked (a partial tile): the full tile's shape; the mask keeps its part.
      for (unsigned d : m.dst.rangeDims()) {
        auto e = expr(*m.dst.indices[d].extent, loc);
        if (!e)
          return e.takeError();
        std::optional<int64_t> bound = extentBound(*m.dst.indices[d].extent);
        shape.push_back(masking && bound ? std::to_string(*bound) : *e);
      }
      return emit(*dst + " = nisa.memset(shape=(" + llvm::join(shape, ", ") + "), value=" + shortestFloatText(m.value) +
                  ", dtype=" + dtypeText(m.dst.base->type.dtype) + maskArg() + ")");
    }
    case OpKind::TensorReduce: {
      const auto &t = llvm::cast<TensorReduceOp>(op);
      std::string args = std::string("op=") + aluText(t.alu) + ", data=" + src[0] + ", axis=(1,)";
      return emit(legacy ? *dst + " = nisa.tensor_reduce(" + args + ", keepdims=True" + maskArg() + ")"
                         : "nisa.tensor_reduce(dst=" + *dst + ", " + args + ")");
    }
    case OpKind::TensorTensorScan: {
      const auto &t = llvm::cast<TensorTensorScanOp>(op);
      std::string args = "data0=" + src[0] + ", data1=" + src[1] + ", initial=" +
                         (t.initialTile ? src[2] : shortestFloatText(t.initial)) + ", op0=" + aluText(t.op0) +
                         ", op1=" + aluText(t.op1);
      return emit(legacy ? *dst + " = nisa.tensor_tensor_scan(" + args + maskArg() + ")"
                         : "nisa.tensor_tensor_scan(dst=" + *dst + ", " + args + ")");
    }
    case OpKind::TensorPartitionReduce: {
      const auto &t = llvm::cast<TensorPartitionReduceOp>(op);
      std::string args = std::string("op=") + aluText(t.alu) + ", data=" + src[0];
      return emit(legacy ? *dst + " = nisa.tensor_partition_reduce(" + args + maskArg() + ")"
                         : "nisa.tensor_partition_reduce(dst=" + *dst + ", " + args + ")");
    }
    case OpKind::BnStats:
    case OpKind::BnAggr: {
      std::string call = "nisa." + op.mnemonic().str();
      return emit(legacy ? *dst + " = " + call + "(data=" + src[0] + maskArg() + ")"
                         : call + "(dst=" + *dst + ", data=" + src[0] + ")");
    }
    case OpKind::Iota:
    case OpKind::AffineSelect: {
      // The current API's form: offset, channel_multiplier and a 1-D
      // pattern [[step, count]] over the free dimension.
      if (legacy)
        return locatedError(sources, loc, ("--emit=nki: " + op.mnemonic() +
                                           " is emitted for the current NKI API only (--nki-api=current)").str());
      const Access &d = *mutableOp.write();
      const AffineIndex &index = *affineIndexOf(mutableOp);
      auto offset = expr(index.offset, loc);
      if (!offset)
        return offset.takeError();
      auto count = expr(*d.indices[d.rangeDims()[1]].extent, loc);
      if (!count)
        return count.takeError();
      std::string args = "pattern=[[" + std::to_string(index.free) + ", " + *count + "]], offset=" + *offset +
                         ", channel_multiplier=" + std::to_string(index.partition);
      if (auto *select = llvm::dyn_cast<AffineSelectOp>(&op))
        return emit("nisa.affine_select(dst=" + *dst + ", " + args + ", on_true_tile=" + src[0] +
                    ", on_false_value=" + pythonFloat(select->fill) + ", cmp_op=" + aluText(select->cmp) + ")");
      return emit("nisa.iota(dst=" + *dst + ", " + args + ")");
    }
    default:
      return locatedError(sources, loc, ("--emit=nki: op '" + op.mnemonic() + "' has no NKI equivalent").str());
    }
  }

  struct LoopInfo {
    int64_t lo, step;
  };
  const Kernel &kernel;
  const llvm::SourceMgr *sources;
  const NkiEmitOptions &options;
  bool legacy;
  int64_t P;
  std::string out;
  llvm::DenseMap<const Value *, std::string> names;
  llvm::StringSet<> used;
  llvm::DenseMap<const Value *, LoopInfo> loops;
  std::vector<const ForOp *> enclosing;
  /// The mask terms of the legacy op being emitted with partial tiles (above).
  std::optional<std::vector<std::string>> masking;
  /// Its indices' bounds, by index name (an index keeps one set across ops).
  std::map<std::string, std::vector<std::string>> masked;
  /// The nl.arange indices the kernel uses, defined after its docstring.
  std::map<std::string, std::string> iotaDefs;
  size_t iotaDefsAt = 0;
  int rangePos = 0;
  /// Whether SBUF tensors are placed at tessel's addresses (placed buffers, above).
  bool placedSbuf = false;
  /// Rotating buffers: their block index, and their declarations before the loops.
  llvm::DenseMap<const Value *, std::string> blockIndex;
  std::string rotatingDefs;

public:
  std::string targetName;
};

} // namespace

NkiApi defaultNkiApi(const runtime::Target &target) {
  return llvm::StringRef(target.name).startswith("trn1") ? NkiApi::Legacy : NkiApi::Current;
}

std::optional<NkiApi> parseNkiApi(llvm::StringRef name) {
  if (name == "current")
    return NkiApi::Current;
  if (name == "legacy")
    return NkiApi::Legacy;
  return std::nullopt;
}

llvm::Expected<std::string> emitNki(const ir::Kernel &kernel, const runtime::Target &target,
                                    const llvm::SourceMgr *sources, const NkiEmitOptions &options) {
  Emitter e(kernel, target, sources, options);
  e.targetName = target.name;
  return e.run();
}

llvm::Expected<std::string> compileToNki(ir::Kernel &kernel, const runtime::Target &target,
                                         const llvm::SourceMgr *sources, llvm::StringRef apiName,
                                         const std::string &command, const std::string &preamble, bool bench) {
  NkiEmitOptions options;
  options.command = command;
  options.preamble = preamble;
  options.api = defaultNkiApi(target);
  if (!apiName.empty()) {
    auto api = parseNkiApi(apiName);
    if (!api)
      return fail("--nki-api=" + apiName + ": expected current (the nki package, trn2 and later) or legacy "
                                          "(neuronxcc.nki, trn1)");
    options.api = *api;
  }
  if (auto err = assignStackAddresses(kernel, target, sources))
    return err;
  auto program = lowerToProgram(kernel, target, sources);
  if (!program)
    return program.takeError();
  runtime::SimOptions sim;
  sim.timingOnly = true;
  auto result = runtime::simulate(*program, target, sim);
  if (!result)
    return result.takeError();
  options.latencyUs = result->report.latencyNs / 1000.0;
  auto text = emitNki(kernel, target, sources, options);
  if (!text || !bench)
    return text;
  return *text + nkiBenchRunner(kernel, target, options.api);
}

} // namespace tessel::backend

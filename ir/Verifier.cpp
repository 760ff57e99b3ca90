//===- ir/Verifier.cpp - Structural and semantic checks of the tile IR -----===//
//
// The rules are listed in docs/tile-ir.md. Algorithm:
//  1. Arguments: hbm, input/output, valid types, unique names.
//  2. Walk the body keeping the enclosing loops and a scope stack of the
//     buffers visible at each point (an alloc is visible after it, to the end
//     of its block). Allocs and loops are checked as they are met.
//  3. Per instruction, static checks first: every access names a visible
//     tensor, has one index per dimension, selects a 2-D tile whose first
//     range is the partition dimension (on chip), and mentions only enclosing
//     loop variables. If one fails the op's other checks are skipped (they
//     would only cascade). Then memory spaces, dtypes and labels (layout).
//  4. Dynamic checks: bounds of every index, engine shape limits and extent
//     agreement between operands, at every iteration of the enclosing loops.
//     Each is first proven from the extremes of its expressions over the loop
//     nest (ir/IndexBounds.h) at a cost independent of the trip counts; this
//     covers affine starts, extents that are affine or a min of affine arms
//     (partial tiles), and loop bounds that depend on outer loops. Only the
//     checks left unproven (violations, or shapes the analysis does not
//     handle) are evaluated point by point over the loops they depend on
//     (transitively through loop bounds), capped at
//     VerifierOptions::maxPointsPerOp points; each reports its first failing
//     iteration. Past the cap a check is reported at an iteration where one of
//     its expressions is extreme, if it fails there; otherwise the op gets a
//     "could not verify" warning.
//
//===----------------------------------------------------------------------===//
#include "ir/Verifier.h"
#include "ir/IndexBounds.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Casting.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>

namespace tessel::ir {
namespace {


std::string labelList(llvm::ArrayRef<std::string> labels) {
  return "[" + llvm::join(labels.begin(), labels.end(), ", ") + "]";
}

bool isOnChip(MemSpace s) { return s != MemSpace::HBM; }

/// A check evaluated at each point of the loop nest.
struct DynCheck {
  enum Kind { Bounds, Equal, Limit } kind;
  llvm::SMLoc loc;
  std::string what;
  IndexExpr a, b;          // Bounds: start, extent (range) ; Equal: both sides; Limit: a
  bool isRange = false;    // Bounds
  int64_t size = 0;        // Bounds: dimension size; Limit: maximum
  bool folded = false;     // Bounds: on a partition-folded dimension
  bool wholeGroups = false; // Bounds, folded: may also span whole partition groups (a DMA)
  bool failed = false;
};

class Verifier {
public:
  Verifier(Kernel &k, DiagnosticEngine &diags, const VerifierOptions &opts)
      : k(k), diags(diags), opts(opts) {}

  bool run() {
    unsigned before = diags.errorCount();
    if (!k.geometry.isSet()) {
      error(k.loc, nullptr, "kernel @" + k.name + " has no tile geometry (the target's, set by "
                                                   "TileGen or the IR parser)");
      return false;
    }
    scopes.emplace_back();
    for (Value *v : k.args) {
      if (!v) {
        error({}, nullptr, "null kernel argument");
        continue;
      }
      checkName(v, nullptr);
      std::string what = "argument %" + v->name;
      if (v->kind != ValueKind::Argument)
        error(v->loc, nullptr, what + " is not of argument kind");
      if (v->role != TensorRole::Input && v->role != TensorRole::Output)
        error(v->loc, nullptr, what + " must be an input or an output, not " +
                                   roleName(v->role));
      if (v->type.space != MemSpace::HBM)
        error(v->loc, nullptr, what + " must be an hbm tensor, found " +
                                   memSpaceName(v->type.space));
      checkType(v->type, v->loc, nullptr, what);
      makeVisible(v);
    }
    verifyBlock(k.body);
    return diags.errorCount() == before;
  }

private:
  // --- reporting ----------------------------------------------------------------
  void report(llvm::SourceMgr::DiagKind kind, llvm::SMLoc loc, const Op *op,
              const llvm::Twine &msg) {
    if (!loc.isValid() && op)
      loc = op->loc;
    if (loc.isValid()) {
      if (kind == llvm::SourceMgr::DK_Error)
        diags.error(loc, msg);
      else if (kind == llvm::SourceMgr::DK_Warning)
        diags.warning(loc, msg);
      else
        diags.note(loc, msg);
      return;
    }
    std::string prefix = "kernel @" + k.name + ": ";
    if (op)
      prefix += op->mnemonic().str() + ": ";
    if (kind == llvm::SourceMgr::DK_Error)
      diags.error(loc, prefix + msg);
    else if (kind == llvm::SourceMgr::DK_Warning)
      diags.warning(loc, prefix + msg);
  }
  void error(llvm::SMLoc loc, const Op *op, const llvm::Twine &msg) {
    report(llvm::SourceMgr::DK_Error, loc, op, msg);
  }
  void warning(llvm::SMLoc loc, const Op *op, const llvm::Twine &msg) {
    report(llvm::SourceMgr::DK_Warning, loc, op, msg);
  }
  void note(llvm::SMLoc loc, const llvm::Twine &msg) {
    if (loc.isValid())
      diags.note(loc, msg);
  }

  /// The location of index `i` inside a parsed access `%x[a, b +: c]`, found
  /// by re-scanning the source; the access's own location otherwise.
  llvm::SMLoc indexLoc(const Access &a, unsigned i) {
    if (!a.loc.isValid())
      return a.loc;
    llvm::SourceMgr &sm = diags.sourceMgr();
    unsigned buf = sm.FindBufferContainingLoc(a.loc);
    if (!buf)
      return a.loc;
    const char *p = a.loc.getPointer();
    const char *end = sm.getMemoryBuffer(buf)->getBufferEnd();
    if (p >= end || *p != '%')
      return a.loc;
    ++p;
    while (p < end && (llvm::isAlnum(*p) || *p == '_' || *p == '.'))
      ++p;
    if (p >= end || *p != '[')
      return a.loc;
    ++p;
    unsigned depth = 0, index = 0;
    auto skipSpace = [&] {
      while (p < end && (*p == ' ' || *p == '\t'))
        ++p;
    };
    skipSpace();
    while (p < end && index < i) {
      char c = *p;
      if (c == '(')
        ++depth;
      else if (c == ')' && depth)
        --depth;
      else if (c == ']' || c == '\n')
        return a.loc;
      else if (c == ',' && depth == 0) {
        ++index;
        ++p;
        skipSpace();
        continue;
      }
      ++p;
    }
    return p < end ? llvm::SMLoc::getFromPointer(p) : a.loc;
  }

  // --- names and scopes --------------------------------------------------------------
  void checkName(Value *v, const Op *op) {
    if (!definedValues.insert(v).second) {
      error(v->loc, op, "%" + v->name + " is defined more than once");
      return;
    }
    auto [it, inserted] = names.emplace(v->name, v);
    if (!inserted) {
      error(v->loc, op, "redefinition of %" + v->name);
      note(it->second->loc, "previous definition of %" + v->name + " is here");
    }
  }

  void makeVisible(const Value *v) {
    visible.insert(v);
    scopes.back().push_back(v);
  }

  void popScope() {
    for (const Value *v : scopes.back())
      visible.erase(v);
    scopes.pop_back();
  }

  bool isEnclosingLoopVar(const Value *v) const {
    for (ForOp *loop : loops)
      if (loop->iv == v)
        return true;
    return false;
  }

  bool checkExprVars(const IndexExpr &e, llvm::SMLoc loc, const Op *op, llvm::StringRef ctx) {
    llvm::SmallVector<const Value *, 4> vars;
    e.collectVars(vars);
    bool ok = true;
    for (const Value *v : vars) {
      if (!v) {
        error(loc, op, ctx + " uses a null variable");
        ok = false;
      } else if (!isEnclosingLoopVar(v)) {
        error(loc, op, ctx + " uses %" + v->name + ", which is not an enclosing loop variable");
        ok = false;
      }
    }
    return ok;
  }

  // --- types ----------------------------------------------------------------------
  void checkType(const TensorType &t, llvm::SMLoc loc, const Op *op, const std::string &what) {
    if (t.dims.empty()) {
      error(loc, op, what + " has no dimensions");
      return;
    }
    bool sizesOk = true;
    std::set<std::string> labels;
    for (size_t i = 0; i < t.dims.size(); ++i) {
      const Dim &d = t.dims[i];
      if (d.size <= 0) {
        error(loc, op, "dimension " + d.label + " of " + what + " has size " +
                           llvm::Twine(d.size) + "; sizes must be positive");
        sizesOk = false;
      }
      if (d.label.empty())
        error(loc, op, "dimension " + llvm::Twine(i) + " of " + what + " has no label");
      else if (!labels.insert(d.label).second)
        error(loc, op, what + " has two dimensions labelled " + d.label +
                           "; labels name the layout and must be distinct");
    }
    if (t.space == MemSpace::PSUM && t.dtype != DType::F32)
      error(loc, op, "psum " + what + " must be f32, found " + dtypeName(t.dtype));
    if (!sizesOk || !isOnChip(t.space))
      return;
    const Dim &p = t.dims[0];
    const int64_t partitions = k.geometry.partitions;
    if (p.size > partitions && p.size % partitions != 0)
      error(loc, op, "partition dimension " + p.label + " of " + what + " has " +
                         llvm::Twine(p.size) + " partitions; it must be at most " +
                         llvm::Twine(partitions) + " or a multiple of " +
                         llvm::Twine(partitions) + " (partition-folded)");
    if (t.space == MemSpace::PSUM) {
      int64_t bytes = dtypeBytes(t.dtype);
      bool overflow = false;
      for (size_t i = 1; i < t.dims.size(); ++i)
        overflow |= __builtin_mul_overflow(bytes, t.dims[i].size, &bytes);
      const int64_t bank = k.geometry.psumBankBytes;
      if (overflow || bytes > bank)
        error(loc, op, "psum tile " + what + " needs " +
                           (overflow ? std::string("too many") : std::to_string(bytes)) +
                           " bytes per partition, more than one " + llvm::Twine(bank / 1024) +
                           " KiB bank (" + llvm::Twine(bank) + " bytes)");
    }
  }

  // --- blocks and structural ops ---------------------------------------------------
  void verifyBlock(Block &block) {
    for (auto &op : block.ops) {
      if (!op) {
        error({}, nullptr, "null op in block");
        continue;
      }
      verifyOp(*op);
    }
  }

  void verifyOp(Op &op) {
    switch (op.kind) {
    case OpKind::Alloc: verifyAlloc(llvm::cast<AllocOp>(op)); return;
    case OpKind::View: verifyView(llvm::cast<ViewOp>(op)); return;
    case OpKind::For: verifyFor(llvm::cast<ForOp>(op)); return;
    default: verifyInstruction(op); return;
    }
  }

  void verifyAlloc(AllocOp &op) {
    Value *v = op.result;
    if (!v) {
      error(op.loc, &op, "alloc has no result");
      return;
    }
    checkName(v, &op);
    std::string what = "buffer %" + v->name;
    llvm::SMLoc loc = v->loc.isValid() ? v->loc : op.loc;
    if (v->kind != ValueKind::Buffer)
      error(loc, &op, "result %" + v->name + " of alloc is not a buffer value");
    if (v->def != &op)
      error(loc, &op, "result %" + v->name + " of alloc does not name this alloc as its definition");
    checkType(v->type, loc, &op, what);
    if (op.bufs < 1)
      error(loc, &op, what + " has bufs " + llvm::Twine(op.bufs) + "; at least 1 is needed");
    if (op.address && *op.address < 0)
      error(loc, &op, what + " has negative address " + llvm::Twine(*op.address));
    if (v->role == TensorRole::Input || v->role == TensorRole::Output)
      error(loc, &op, what + " is allocated but has role " + roleName(v->role) +
                          "; only kernel arguments are inputs and outputs");
    if (v->role == TensorRole::Spill && v->type.space != MemSpace::HBM)
      error(loc, &op, what + " is a spill slot but lives in " + memSpaceName(v->type.space) +
                          "; spill slots are hbm");
    makeVisible(v);
  }

  void verifyView(ViewOp &op) {
    Value *v = op.result, *src = op.source;
    if (!v || !src) {
      error(op.loc, &op, "view needs a result and a source");
      return;
    }
    checkName(v, &op);
    std::string what = "view %" + v->name;
    llvm::SMLoc loc = v->loc.isValid() ? v->loc : op.loc;
    if (v->kind != ValueKind::Buffer || v->def != &op || v->role != TensorRole::Input)
      error(loc, &op, "result %" + v->name + " of view is not an input tensor value defined by "
                                             "this view");
    if (!visible.count(src))
      error(loc, &op, "view of %" + src->name + " before its definition or outside its block");
    else if (src->kind != ValueKind::Argument || src->role != TensorRole::Input)
      error(loc, &op, what + " views %" + src->name + ", which is not an input argument; only "
                             "inputs are viewed");
    const TensorType &t = v->type, &s = src->type;
    bool sameShape = t.space == s.space && t.dtype == s.dtype && t.dims.size() == s.dims.size() &&
                     llvm::all_of(llvm::zip(t.dims, s.dims), [](auto d) {
                       return std::get<0>(d).size == std::get<1>(d).size;
                     });
    if (!sameShape)
      error(loc, &op, what + " must have the type of %" + src->name + " but for its labels");
    checkType(t, loc, &op, what);
    makeVisible(v);
  }

  void verifyFor(ForOp &op) {
    Value *iv = op.iv;
    if (!iv) {
      error(op.loc, &op, "loop has no induction variable");
      return;
    }
    checkName(iv, &op);
    if (iv->kind != ValueKind::LoopVar)
      error(op.loc, &op, "induction variable %" + iv->name + " is not a loop variable value");
    if (iv->def != &op)
      error(op.loc, &op, "induction variable %" + iv->name +
                             " does not name this loop as its definition");
    if (op.step < 1)
      error(op.loc, &op, "loop %" + iv->name + " has step " + llvm::Twine(op.step) +
                             "; the step must be at least 1");
    for (const auto &[name, value] : op.block)
      if (name != BlockConfig::kRowStrip || value != op.step)
        error(op.loc, &op, "loop %" + iv->name + " has block " + name + " = " +
                               llvm::Twine(value) + "; a loop's block names only its own row "
                               "strip, m = its step (" + llvm::Twine(op.step) + ")");
    checkExprVars(op.lo, op.loc, &op, "lower bound of loop %" + iv->name);
    checkExprVars(op.hi, op.loc, &op, "upper bound of loop %" + iv->name);
    loops.push_back(&op);
    scopes.emplace_back();
    verifyBlock(op.body);
    popScope();
    loops.pop_back();
  }

  // --- instructions ---------------------------------------------------------------
  struct Operand {
    llvm::StringRef role;
    Access *access;
  };

  /// The destination, then the sources in the roles support/Ops.def names.
  llvm::SmallVector<Operand, 3> operandsOf(Op &op) {
    llvm::SmallVector<Operand, 3> out;
    std::optional<Opcode> code = opcodeOf(op.kind);
    if (!code)
      return out;
    out.push_back({"destination", op.write()});
    for (auto [role, access] : llvm::zip(op.readRoles(), op.reads()))
      out.push_back({role, access});
    auto writes = op.writes();
    for (size_t i = 1; i < writes.size(); ++i)
      out.push_back({"accumulator", writes[i]});
    return out;
  }

  static llvm::SMLoc locOf(const Access &a, const Op &op) {
    return a.loc.isValid() ? a.loc : op.loc;
  }

  bool checkAccessStatic(const Operand &o, Op &op) {
    Access &a = *o.access;
    llvm::SMLoc loc = locOf(a, op);
    std::string role = o.role.str();
    if (!a.base) {
      error(loc, &op, op.mnemonic() + " " + role + " access has no tensor");
      return false;
    }
    Value *v = a.base;
    if (v->kind == ValueKind::LoopVar) {
      error(loc, &op, "%" + v->name + " is a loop variable, not a tensor or buffer");
      return false;
    }
    if (!visible.count(v)) {
      error(loc, &op, "use of %" + v->name +
                          (definedValues.count(v) ? " outside the block that defines it"
                                                  : " before its definition"));
      note(v->loc, "%" + v->name + " is defined here");
      return false;
    }
    const TensorType &t = v->type;
    bool ok = true;
    if (a.indices.size() != t.dims.size()) {
      error(loc, &op, "access to %" + v->name + " has " + llvm::Twine(a.indices.size()) +
                          " indices but the tensor has rank " + llvm::Twine(t.dims.size()));
      return false;
    }
    ok &= checkTileShape(a, op, role, loc);
    for (unsigned i = 0; i < a.indices.size(); ++i) {
      std::string ctx = "index " + std::to_string(i) + " of the access to %" + v->name;
      ok &= checkExprVars(a.indices[i].start, indexLoc(a, i), &op, ctx);
      if (a.indices[i].extent)
        ok &= checkExprVars(*a.indices[i].extent, indexLoc(a, i), &op, ctx);
    }
    return ok;
  }

  /// Rule 10: a tile of two ranges or more (an access pattern's ranges
  /// constant, its order a permutation); on chip, the first is the
  /// partition dimension, one contiguous range.
  bool checkTileShape(const Access &a, Op &op, const std::string &role, llvm::SMLoc loc) {
    const TensorType &t = a.base->type;
    const std::string name = "%" + a.base->name;
    unsigned ranges = 0;
    for (const Index &idx : a.indices)
      ranges += idx.numRanges();
    if (ranges < 2) {
      error(loc, &op, op.mnemonic() + " " + role + " access to " + name +
                          " must select a tile of at least two dimensions (two '+:' ranges), found " +
                          llvm::Twine(ranges));
      return false;
    }
    if (!a.order.empty()) {
      llvm::SmallVector<unsigned, 8> sorted(a.order.begin(), a.order.end());
      llvm::sort(sorted);
      bool permutation = sorted.size() == ranges;
      for (unsigned i = 0; permutation && i < ranges; ++i)
        permutation = sorted[i] == i;
      if (!permutation) {
        error(loc, &op, "the order of the access to " + name + " must list each of its " + llvm::Twine(ranges) +
                            " ranges once");
        return false;
      }
    }
    bool ok = true;
    if (ranges > 8) {
      error(loc, &op, "the access to " + name + " has " + llvm::Twine(ranges) + " ranges; a tile has at most 8 "
                      "dimensions");
      return false;
    }
    for (unsigned i = 0; i < a.indices.size(); ++i) {
      const Index &idx = a.indices[i];
      if (!idx.extent || !a.isPattern())
        continue;
      bool constant = idx.extent->isConst() && idx.extent->constValue() >= 1 &&
                      llvm::all_of(idx.more, [](const SubRange &r) { return r.extent >= 1; });
      bool steps = idx.step >= 1 && llvm::all_of(idx.more, [](const SubRange &r) { return r.step >= 1; });
      if (!constant || !steps) {
        error(indexLoc(a, i), &op, "the ranges of an access pattern (dimension " + t.dims[i].label + " of " +
                                       name + ") need constant extents and steps of at least 1");
        ok = false;
      }
    }
    if (!isOnChip(t.space))
      return ok;
    auto dims = a.tileDims();
    const Index &part = a.indices[0];
    if (dims.empty() || dims[0].dim != 0 || part.isPatterned()) {
      error(loc, &op, "partition dimension " + t.dims[0].label + " of " + name +
                          " must be a range, the tile's first and contiguous: an on-chip tile's first "
                          "dimension is its partitions");
      return false;
    }
    if (a.isPattern() && t.dims[0].size > k.geometry.partitions) {
      error(loc, &op, "an access pattern (strides, split ranges, an order) on partition-folded " + name +
                          " is not supported");
      return false;
    }
    return ok;
  }

  /// Ops whose operands are 2-D tiles (the tensor engine, gpsimd's index
  /// ops, a transposing DMA, and every [P, 1] operand).
  void requirePlain2D(const Access &a, Op &op, llvm::StringRef role) {
    if (a.tileDims().size() == 2 && !a.isPattern())
      return;
    error(locOf(a, op), &op, op.mnemonic() + " " + role + " must be a 2-D tile of two contiguous ranges; "
                                "tiles of more dimensions and access patterns are for dma, copy, "
                                "tensor_tensor, tensor_scalar, activation, memset and tensor_reduce");
  }

  // Helpers over a statically valid access.
  static MemSpace spaceOf(const Access &a) { return a.base->type.space; }
  static DType dtypeOf(const Access &a) { return a.base->type.dtype; }
  static std::vector<std::string> labelsOf(const Access &a) {
    std::vector<std::string> labels;
    for (const TileDim &d : a.tileDims())
      labels.push_back(a.base->type.dims[d.dim].label);
    return labels;
  }
  static IndexExpr extentOf(const Access &a, unsigned rangeIndex) {
    return a.tileDims()[rangeIndex].extent;
  }
  static std::string spaceList(std::initializer_list<MemSpace> spaces) {
    std::string s;
    for (MemSpace sp : spaces)
      s += (s.empty() ? "" : " or ") + memSpaceName(sp).str();
    return s;
  }

  void requireSpace(const Operand &o, Op &op, std::initializer_list<MemSpace> allowed) {
    MemSpace s = spaceOf(*o.access);
    if (std::find(allowed.begin(), allowed.end(), s) != allowed.end())
      return;
    bool isDst = o.role == "destination" || o.role == "accumulator";
    error(locOf(*o.access, op), &op,
          op.mnemonic() + (isDst ? " writes " : " reads ") + "its " + o.role + " from " +
              spaceList(allowed) + "; %" + o.access->base->name + " is in " +
              memSpaceName(s));
  }

  /// Whether the tile dimensions' labels agree, a dimension an access
  /// pattern splits into several tile dimensions (a reshape) agreeing with
  /// any label.
  static bool sameLabels(const Access &dst, const Access &src) {
    auto dd = dst.tileDims(), sd = src.tileDims();
    if (dd.size() != sd.size())
      return false;
    auto split = [](const llvm::SmallVector<TileDim, 4> &dims, unsigned i) {
      return llvm::count_if(dims, [&](const TileDim &d) { return d.dim == dims[i].dim; }) > 1;
    };
    for (unsigned i = 0; i < dd.size(); ++i)
      if (!split(dd, i) && !split(sd, i) &&
          dst.base->type.dims[dd[i].dim].label != src.base->type.dims[sd[i].dim].label)
        return false;
    return true;
  }

  void requireSameLabels(const Access &dst, const Access &src, Op &op, llvm::StringRef what) {
    auto dl = labelsOf(dst), sl = labelsOf(src);
    if (!sameLabels(dst, src))
      error(locOf(src, op), &op,
            op.mnemonic() + " " + what + " must carry the destination's dimension labels in the "
                            "same order: " + labelList(sl) + " vs " + labelList(dl));
  }

  void requireSwappedLabels(const Access &dst, const Access &src, Op &op) {
    auto dl = labelsOf(dst), sl = labelsOf(src);
    std::vector<std::string> swapped(sl.rbegin(), sl.rend());
    if (dl != swapped)
      error(locOf(dst, op), &op,
            op.mnemonic() + " swaps its two dimensions: the destination must be " +
                labelList(swapped) + ", found " + labelList(dl));
  }

  void addEqual(const IndexExpr &a, const IndexExpr &b, llvm::SMLoc loc, std::string what) {
    if (a.structurallyEqual(b))
      return;
    DynCheck c{DynCheck::Equal, loc, std::move(what), a, b};
    checks.push_back(c);
  }

  void addLimit(const IndexExpr &e, int64_t max, llvm::SMLoc loc, std::string what) {
    DynCheck c{DynCheck::Limit, loc, std::move(what), e, 0};
    c.size = max;
    checks.push_back(c);
  }

  void addBounds(const Access &a, Op &op) {
    const TensorType &t = a.base->type;
    for (unsigned i = 0; i < a.indices.size(); ++i) {
      const Index &idx = a.indices[i];
      std::string what = "dimension " + t.dims[i].label + " of %" + a.base->name;
      DynCheck c{DynCheck::Bounds, indexLoc(a, i), what, idx.start, idx.span()};
      if (!a.loc.isValid())
        c.loc = op.loc;
      c.isRange = idx.isRange();
      c.size = t.dims[i].size;
      c.folded = i == 0 && isOnChip(t.space) && t.dims[0].size > k.geometry.partitions;
      // One DMA transfer may fill or drain several whole partition groups
      // (tensor rows fold onto partitions group by group: docs/tile-ir.md).
      auto *dma = llvm::dyn_cast<DmaOp>(&op);
      c.wholeGroups = c.folded && dma && !dma->transpose;
      checks.push_back(c);
    }
  }

  void verifyInstruction(Op &op) {
    auto operands = operandsOf(op);
    bool ok = true;
    for (const Operand &o : operands)
      ok &= checkAccessStatic(o, op);
    if (auto *mm = llvm::dyn_cast<MatmulOp>(&op)) {
      std::set<const Value *> seen;
      for (Value *v : mm->resetOn) {
        if (!v || !isEnclosingLoopVar(v))
          error(op.loc, &op, "matmul reset(" + (v ? "%" + v->name : std::string("null")) +
                                 ") must name an enclosing loop variable");
        else if (!seen.insert(v).second)
          error(op.loc, &op, "matmul reset names %" + v->name + " twice");
      }
      if (mm->accumulate && !mm->resetOn.empty())
        error(op.loc, &op, "matmul cannot both reset and always accumulate");
    }
    for (Access *dst : op.writes())
      if (ok && dst && llvm::isa_and_nonnull<ViewOp>(dst->base->def)) {
        error(locOf(*dst, op), &op, "%" + dst->base->name + " is a view of an input; views are "
                                                            "read only");
        ok = false;
      }
    if (AffineIndex *index = affineIndexOf(op))
      ok &= checkExprVars(index->offset, op.loc, &op, "offset of " + op.mnemonic().str());
    if (!ok)
      return;
    if (!checkPlainOperands(op, operands))
      return;
    checks.clear();
    for (const Operand &o : operands)
      addBounds(*o.access, op);

    switch (op.kind) {
    case OpKind::Dma: verifyDma(llvm::cast<DmaOp>(op)); break;
    case OpKind::Matmul: verifyMatmul(llvm::cast<MatmulOp>(op)); break;
    case OpKind::Transpose: {
      auto &t = llvm::cast<TransposeOp>(op);
      requireSpace(operands[0], op, {MemSpace::PSUM});
      requireSpace(operands[1], op, {MemSpace::SBUF});
      requireSwappedLabels(t.dst, t.src, op);
      llvm::SMLoc loc = locOf(t.dst, op);
      addEqual(extentOf(t.dst, 0), extentOf(t.src, 1), loc,
               "transpose destination partitions must equal the source's free size");
      addEqual(extentOf(t.dst, 1), extentOf(t.src, 0), loc,
               "transpose destination free size must equal the source's partitions");
      addLimit(extentOf(t.src, 1), k.geometry.partitions, locOf(t.src, op),
               "transpose source free size (the result's partitions)");
      break;
    }
    case OpKind::TensorReduce: verifyTensorReduce(llvm::cast<TensorReduceOp>(op), operands); break;
    case OpKind::BnStats:
    case OpKind::BnAggr: verifyBn(llvm::cast<BnOp>(op), operands); break;
    case OpKind::TensorPartitionReduce:
      verifyPartitionReduce(llvm::cast<TensorPartitionReduceOp>(op), operands);
      break;
    default: {
      // Elementwise engines: activation, tensor_tensor, tensor_scalar, copy,
      // memset, iota, affine_select.
      if (op.kind == OpKind::Memset)
        requireSpace(operands[0], op, {MemSpace::SBUF, MemSpace::PSUM});
      else
        requireSpace(operands[0], op, {MemSpace::SBUF});
      const Access &dst = *operands[0].access;
      // The sources Ops.def names have the destination's shape; the
      // optional tiles after them (a tensor_scalar's scalar, an
      // activation's bias, scale and accumulator) are [P, 1].
      const size_t fullTiles = 1 + opInfo(*opcodeOf(op.kind)).srcRoles.size();
      for (size_t i = fullTiles; i < operands.size(); ++i)
        verifyPerPartition(operands[i], dst, op);
      if (auto *select = llvm::dyn_cast<AffineSelectOp>(&op)) {
        requireSpace(operands[1], op, {MemSpace::SBUF}); // GpSimd has no PSUM access
        if (!isComparison(select->cmp))
          error(op.loc, &op, "affine_select compares with " + comparisonList() + ", not " +
                                 aluOpName(select->cmp));
      }
      for (size_t i = 1; i < std::min(fullTiles, operands.size()); ++i) {
        const Operand &o = operands[i];
        requireSpace(o, op, {MemSpace::SBUF, MemSpace::PSUM});
        requireSameLabels(dst, *o.access, op, o.role);
        for (unsigned r = 0; r < dst.tileDims().size(); ++r)
          addEqual(extentOf(dst, r), extentOf(*o.access, r), locOf(*o.access, op),
                   op.mnemonic().str() + " " + o.role.str() + " extent of dimension " +
                       labelsOf(*o.access)[r] + " must equal the destination's");
      }
      // nisa.tensor_tensor(_scan): the vector engine reads at most one input from PSUM.
      if ((op.kind == OpKind::TensorTensor || op.kind == OpKind::TensorTensorScan) && operands.size() >= 3 &&
          spaceOf(*operands[1].access) == MemSpace::PSUM && spaceOf(*operands[2].access) == MemSpace::PSUM)
        error(locOf(*operands[2].access, op), &op,
              op.mnemonic() + " inputs cannot both be in psum (nisa." + op.mnemonic() +
                  " reads at most one from PSUM); copy one to sbuf first");
      break;
    }
    }
    runDynamicChecks(op);
  }

  /// Which operands must be 2-D tiles (requirePlain2D); false if one is not.
  bool checkPlainOperands(Op &op, llvm::ArrayRef<Operand> operands) {
    unsigned before = diags.errorCount();
    auto *dma = llvm::dyn_cast<DmaOp>(&op);
    bool nd = op.kind == OpKind::Copy || op.kind == OpKind::TensorTensor || op.kind == OpKind::TensorScalar ||
              op.kind == OpKind::Activation || op.kind == OpKind::Memset || op.kind == OpKind::TensorReduce ||
              (dma && !dma->transpose);
    // The sources Ops.def names (and the destination) may be N-D; the
    // optional [P, 1] tiles after them are 2-D.
    const size_t fullTiles = nd ? 1 + opInfo(*opcodeOf(op.kind)).srcRoles.size() : 0;
    for (size_t i = fullTiles; i < operands.size(); ++i)
      requirePlain2D(*operands[i].access, op, operands[i].role);
    if (nd && fullTiles > 1) {
      size_t rank = operands[0].access->tileDims().size();
      for (size_t i = 1; i < std::min(fullTiles, operands.size()); ++i) {
        size_t r = operands[i].access->tileDims().size();
        if (r != rank && op.kind != OpKind::TensorReduce)
          error(locOf(*operands[i].access, op), &op,
                op.mnemonic() + " " + operands[i].role + " is a " + llvm::Twine(r) +
                    "-D tile but the destination is " + llvm::Twine(rank) + "-D");
      }
    }
    return diags.errorCount() == before;
  }

  static std::string comparisonList() { return "is_equal, not_equal, is_gt, is_ge, is_lt or is_le"; }

  /// A [P, 1] tile: one value per partition of `dst`, broadcast along (or
  /// gathered from) its free dimension.
  void verifyPerPartition(const Operand &o, const Access &dst, Op &op) {
    const Access &a = *o.access;
    bool written = o.role == "accumulator";
    if (written)
      requireSpace(o, op, {MemSpace::SBUF});
    else
      requireSpace(o, op, {MemSpace::SBUF, MemSpace::PSUM});
    auto al = labelsOf(a), dl = labelsOf(dst);
    llvm::SMLoc loc = locOf(a, op);
    if (al[0] != dl[0])
      error(loc, &op, op.mnemonic() + " " + o.role + " tile must be on the destination's partitions (" +
                          dl[0] + "), found " + al[0]);
    addEqual(extentOf(a, 0), extentOf(dst, 0), loc,
             op.mnemonic().str() + " " + o.role.str() + " tile needs one value per partition of the "
             "destination: its partitions (" + al[0] + ") vs the destination's");
    addEqual(extentOf(a, 1), IndexExpr(int64_t(1)), loc,
             op.mnemonic().str() + " " + o.role.str() + " must be a [P, 1] tile; its free extent (" +
                 al[1] + ") vs 1");
  }

  void verifyTensorReduce(TensorReduceOp &op, llvm::ArrayRef<Operand> operands) {
    requireSpace(operands[0], op, {MemSpace::SBUF});
    requireSpace(operands[1], op, {MemSpace::SBUF, MemSpace::PSUM});
    if (!isReduction(op.alu))
      error(op.loc, &op, "tensor_reduce folds with add, max or min, not " + aluOpName(op.alu));
    auto dl = labelsOf(op.dst), sl = labelsOf(op.src);
    llvm::SMLoc dloc = locOf(op.dst, op);
    if (dl[0] != sl[0])
      error(dloc, &op, "tensor_reduce keeps the partitions: the destination's partition dimension "
                       "must be the source's (" + sl[0] + "), found " + dl[0]);
    addEqual(extentOf(op.dst, 0), extentOf(op.src, 0), dloc,
             "tensor_reduce destination partitions (" + dl[0] + ") must equal the source's");
    if (dl.size() == 2 && (sl.size() == 2 || extentOf(op.dst, 1).isConst())) {
      if (sl.size() == 2 || extentOf(op.dst, 1).constValue() == 1) {
        addEqual(extentOf(op.dst, 1), IndexExpr(int64_t(1)), dloc,
                 "tensor_reduce destination must be a [P, 1] tile (one value per partition); its free "
                 "extent (" + dl[1] + ") vs 1");
        return;
      }
    }
    // A tile of more dimensions folds the source's trailing dimensions: the
    // destination's are the source's leading ones.
    if (dl.size() >= sl.size() || !std::equal(dl.begin(), dl.end(), sl.begin())) {
      error(dloc, &op, "tensor_reduce of a " + llvm::Twine(sl.size()) + "-D tile folds its trailing dimensions: "
                       "the destination must be [P, 1] or carry the source's leading dimensions " +
                       labelList(sl) + ", found " + labelList(dl));
      return;
    }
    for (unsigned r = 1; r < dl.size(); ++r)
      addEqual(extentOf(op.dst, r), extentOf(op.src, r), dloc,
               "tensor_reduce destination extent of dimension " + dl[r] + " must equal the source's");
  }

  /// dst[1, F] from src[P, F], on the GpSimd engine (SBUF only).
  void verifyPartitionReduce(TensorPartitionReduceOp &op, llvm::ArrayRef<Operand> operands) {
    requireSpace(operands[0], op, {MemSpace::SBUF});
    requireSpace(operands[1], op, {MemSpace::SBUF});
    if (op.alu != AluOp::Add && op.alu != AluOp::Max)
      error(op.loc, &op, "tensor_partition_reduce folds with add or max, not " + aluOpName(op.alu));
    auto dl = labelsOf(op.dst), sl = labelsOf(op.src);
    llvm::SMLoc dloc = locOf(op.dst, op);
    addEqual(extentOf(op.dst, 0), IndexExpr(int64_t(1)), dloc,
             "tensor_partition_reduce folds the partitions into one: the destination's partitions (" + dl[0] +
                 ") vs 1");
    if (dl[1] != sl[1])
      error(dloc, &op, "tensor_partition_reduce keeps the free dimension: the destination's must be the "
                       "source's (" + sl[1] + "), found " + dl[1]);
    addEqual(extentOf(op.dst, 1), extentOf(op.src, 1), dloc,
             "tensor_partition_reduce destination free extent (" + dl[1] + ") must equal the source's");
  }

  /// bn_stats: dst[P, 6] from src[P, F]; bn_aggr: dst[P, 2] from src[P, 3k].
  void verifyBn(BnOp &op, llvm::ArrayRef<Operand> operands) {
    requireSpace(operands[0], op, {MemSpace::SBUF});
    requireSpace(operands[1], op, {MemSpace::SBUF, MemSpace::PSUM});
    const bool stats = op.kind == OpKind::BnStats;
    auto dl = labelsOf(op.dst), sl = labelsOf(op.src);
    llvm::SMLoc dloc = locOf(op.dst, op);
    if (dl[0] != sl[0])
      error(dloc, &op, op.mnemonic() + " keeps the partitions: the destination's partition dimension must be "
                       "the source's (" + sl[0] + "), found " + dl[0]);
    addEqual(extentOf(op.dst, 0), extentOf(op.src, 0), dloc,
             op.mnemonic().str() + " destination partitions (" + dl[0] + ") must equal the source's");
    addEqual(extentOf(op.dst, 1), IndexExpr(int64_t(stats ? 6 : 2)), dloc,
             op.mnemonic().str() + (stats ? " writes 6 values per partition (count, mean, variance * count of "
                                            "the even and the odd elements)"
                                          : " writes 2 values per partition (mean, variance)") +
                 "; the destination's free extent (" + dl[1] + ") vs " + (stats ? "6" : "2"));
    IndexExpr f = extentOf(op.src, 1);
    if (!stats && f.isConst() && f.constValue() % 3 != 0)
      error(locOf(op.src, op), &op, "bn_aggr reads (count, mean, variance * count) triples: the source's free "
                                    "extent " + llvm::Twine(f.constValue()) + " is not a multiple of 3");
  }

  void verifyDma(DmaOp &op) {
    const Access &dst = op.dst, &src = op.src;
    MemSpace ds = spaceOf(dst), ss = spaceOf(src);
    bool valid = (ds == MemSpace::HBM && ss == MemSpace::SBUF) ||
                 (ds == MemSpace::SBUF && ss == MemSpace::HBM);
    if (!valid)
      error(op.loc, &op, "dma moves data between hbm and sbuf (hbm on exactly one side); found " +
                             memSpaceName(ss) + " -> " + memSpaceName(ds));
    if (op.tag == DmaTag::SpillSave && dst.base->role != TensorRole::Spill)
      error(locOf(dst, op), &op, "dma spill_save must write a spill slot ('alloc ... spill'); %" +
                                     dst.base->name + " is not one");
    if (op.tag == DmaTag::SpillReload && src.base->role != TensorRole::Spill)
      error(locOf(src, op), &op, "dma spill_reload must read a spill slot ('alloc ... spill'); %" +
                                     src.base->name + " is not one");
    if (op.tag != DmaTag::SpillSave && dst.base->role == TensorRole::Spill)
      error(locOf(dst, op), &op, "spill slot %" + dst.base->name +
                                     " may only be written by dma spill_save");
    if (op.tag != DmaTag::SpillReload && src.base->role == TensorRole::Spill)
      error(locOf(src, op), &op, "spill slot %" + src.base->name +
                                     " may only be read by dma spill_reload");
    if (dtypeOf(dst) != dtypeOf(src))
      error(op.loc, &op, "dma cannot convert " + dtypeName(dtypeOf(src)) + " to " +
                             dtypeName(dtypeOf(dst)) + "; dma requires equal dtypes (cast on "
                             "chip with copy or activation)");
    llvm::SMLoc loc = locOf(src, op);
    if (op.transpose) {
      requireSwappedLabels(dst, src, op);
      addEqual(extentOf(dst, 0), extentOf(src, 1), loc,
               "dma transpose destination partitions must equal the source's second extent");
      addEqual(extentOf(dst, 1), extentOf(src, 0), loc,
               "dma transpose destination second extent must equal the source's first");
    } else {
      auto dl = labelsOf(dst), sl = labelsOf(src);
      if (!sameLabels(dst, src)) {
        std::vector<std::string> swapped(sl.rbegin(), sl.rend());
        error(loc, &op, "dma source and destination must carry the same dimension labels in "
                        "the same order: " + labelList(sl) + " vs " + labelList(dl) +
                            (dl == swapped ? "; use 'dma transpose' to transpose in transit"
                                           : ""));
      }
      for (unsigned r = 0; r < std::min(dl.size(), sl.size()); ++r)
        addEqual(extentOf(dst, r), extentOf(src, r), loc,
                 "dma source extent of dimension " + sl[r] + " must equal the destination's");
    }
  }

  void verifyMatmul(MatmulOp &op) {
    auto operands = operandsOf(op);
    requireSpace(operands[0], op, {MemSpace::PSUM});
    requireSpace(operands[1], op, {MemSpace::SBUF});
    requireSpace(operands[2], op, {MemSpace::SBUF});
    const Access &dst = op.dst, &st = op.stationary, &mv = op.moving;
    if (dtypeOf(st) != dtypeOf(mv))
      error(locOf(mv, op), &op, "matmul operands must have the same dtype: stationary is " +
                                    dtypeName(dtypeOf(st)) + ", moving is " +
                                    dtypeName(dtypeOf(mv)));
    auto sl = labelsOf(st), ml = labelsOf(mv), dl = labelsOf(dst);
    if (sl[0] == ml[0]) {
      std::vector<std::string> expected{sl[1], ml[1]};
      if (dl != expected) {
        error(locOf(dst, op), &op, "matmul result must be labelled " + labelList(expected) +
                                       " (stationary free, moving free), found " +
                                       labelList(dl));
        return;
      }
    } else {
      // Find the contraction label: shared by both operands and not in the result.
      std::string c;
      for (const std::string &l : sl)
        if (std::find(ml.begin(), ml.end(), l) != ml.end() &&
            std::find(dl.begin(), dl.end(), l) == dl.end())
          c = l;
      if (c.empty()) {
        error(locOf(st, op), &op, "matmul operands share no contraction dimension: stationary " +
                                      labelList(sl) + ", moving " + labelList(ml));
      } else {
        bool stBad = sl[0] != c, mvBad = ml[0] != c;
        std::string which = stBad && mvBad ? "stationary has " + sl[0] + " and moving has " +
                                                 ml[0] + " on partitions — transpose them"
                            : stBad ? "stationary has " + sl[0] + " on partitions — transpose it"
                                    : "moving has " + ml[0] + " on partitions — transpose it";
        error(locOf(stBad ? st : mv, op), &op,
              "matmul contraction dimension " + c +
                  " must be on the partitions of both operands; " + which);
      }
      return; // shapes are meaningless with the wrong layout
    }
    llvm::SMLoc sloc = locOf(st, op), mloc = locOf(mv, op), dloc = locOf(dst, op);
    addEqual(extentOf(st, 0), extentOf(mv, 0), mloc,
             "matmul contraction extents of stationary and moving (" + sl[0] + ") must agree");
    addEqual(extentOf(dst, 0), extentOf(st, 1), dloc,
             "matmul result rows (" + dl[0] + ") must equal the stationary free extent");
    addEqual(extentOf(dst, 1), extentOf(mv, 1), dloc,
             "matmul result columns (" + dl[1] + ") must equal the moving free extent");
    addLimit(extentOf(st, 0), k.geometry.maxContraction, sloc,
             "matmul contraction size K (" + sl[0] + ")");
    addLimit(extentOf(st, 1), k.geometry.maxStationary, sloc,
             "matmul stationary free size M (" + sl[1] + ")");
    addLimit(extentOf(mv, 1), k.geometry.maxMoving, mloc,
             "matmul moving free size N (" + ml[1] + ")");
  }

  // --- dynamic checks over the loop nest -----------------------------------------------
  std::string iterationText() const {
    std::string s;
    for (ForOp *loop : nestLoops)
      s += (s.empty() ? " at %" : ", %") + loop->iv->name + " = " +
           std::to_string(env[loop->iv->id]);
    return s;
  }

  /// Runs one check at the current point (marking it failed on a violation).
  void evaluate(DynCheck &c, const Op &op) {
    auto a = c.a.evalChecked(env);
    auto b = c.b.evalChecked(env);
    auto at = [&] { return iterationText(); };
    if (!a || !b) {
      c.failed = true;
      error(c.loc, &op, "index arithmetic overflows in " + c.what + at());
      return;
    }
    switch (c.kind) {
    case DynCheck::Bounds: {
      int64_t start = *a, extent = *b, endPos;
      if (c.isRange && extent < 1) {
        c.failed = true;
        error(c.loc, &op, "extent of " + c.what + " is " + llvm::Twine(extent) +
                              "; it must be at least 1" + at());
        return;
      }
      if (start < 0 || __builtin_add_overflow(start, extent, &endPos) || endPos > c.size) {
        c.failed = true;
        if (c.isRange)
          error(c.loc, &op, "access out of bounds: " + c.what + " is [" + llvm::Twine(start) +
                                ", " + llvm::Twine(start) + " + " + llvm::Twine(extent) +
                                ") but its size is " + llvm::Twine(c.size) + at());
        else
          error(c.loc, &op, "access out of bounds: index " + llvm::Twine(start) + " of " +
                                c.what + " is outside [0, " + llvm::Twine(c.size) + ")" + at());
        return;
      }
      const int64_t partitions = k.geometry.partitions;
      bool groupAligned = c.wholeGroups && start % partitions == 0 && extent % partitions == 0;
      if (c.folded && !groupAligned && (start / partitions != (endPos - 1) / partitions)) {
        c.failed = true;
        error(c.loc, &op, "range [" + llvm::Twine(start) + ", " + llvm::Twine(endPos) +
                              ") on partition-folded " + c.what + " crosses a " +
                              llvm::Twine(partitions) + "-partition group; start at a multiple of " +
                              llvm::Twine(partitions) + " and take at most " +
                              llvm::Twine(partitions) +
                              (c.wholeGroups ? " (or, in a dma, whole groups: a multiple of " +
                                                   std::to_string(partitions) + ")"
                                             : std::string()) +
                              at());
      }
      return;
    }
    case DynCheck::Equal:
      if (*a != *b) {
        c.failed = true;
        error(c.loc, &op, c.what + ": " + llvm::Twine(*a) + " vs " + llvm::Twine(*b) + at());
      }
      return;
    case DynCheck::Limit:
      if (*a > c.size) {
        c.failed = true;
        error(c.loc, &op, c.what + " is " + llvm::Twine(*a) + ", more than the limit of " +
                              llvm::Twine(c.size) + at());
      }
      return;
    }
  }

  /// True when `e` (an extent: affine, or min of two affine) is a multiple of
  /// the partition count at every iteration.
  bool multipleAtEveryIteration(const IndexExpr &e, LoopNestBounds &nest) const {
    if (e.kind() == IndexExpr::Kind::Min)
      return multipleAtEveryIteration(e.lhs(), nest) && multipleAtEveryIteration(e.rhs(), nest);
    return e.isAffine() && nest.residue(e, k.geometry.partitions) == 0;
  }

  /// True when `c` holds at every iteration, shown from the extremes of its
  /// expressions (IndexBounds.h). Bounds are proven for affine starts only;
  /// other starts are left to enumeration.
  bool proven(const DynCheck &c, LoopNestBounds &nest) const {
    switch (c.kind) {
    case DynCheck::Bounds: {
      if (!c.a.isAffine())
        return false;
      if (c.isRange) {
        auto extent = nest.min(c.b);
        if (!extent || extent->value < 1)
          return false;
      }
      auto start = nest.min(c.a);
      auto end = nest.max(c.a + c.b);
      if (!start || start->value < 0 || !end || end->value > c.size)
        return false;
      if (!c.folded)
        return true;
      // The start sits at one offset inside its partition group at every
      // iteration; the range must fit in what is left of the group.
      auto offset = nest.residue(c.a, k.geometry.partitions);
      auto extent = nest.max(c.b);
      if (offset && extent && *offset + extent->value <= k.geometry.partitions)
        return true;
      return c.wholeGroups && offset == 0 && multipleAtEveryIteration(c.b, nest);
    }
    case DynCheck::Equal: return nest.equal(c.a, c.b);
    case DynCheck::Limit: {
      auto m = nest.max(c.a);
      return m && m->value <= c.size;
    }
    }
    return false;
  }

  /// Reports `c` at the iteration where one of its expressions reaches an
  /// extreme, if that iteration violates it; false when none does.
  bool reportAtExtreme(DynCheck &c, LoopNestBounds &nest, const Op &op) {
    llvm::SmallVector<std::optional<Extreme>, 4> candidates;
    switch (c.kind) {
    case DynCheck::Bounds:
      candidates = {nest.min(c.b), nest.min(c.a), nest.max(c.a + c.b), nest.max(c.b)};
      break;
    case DynCheck::Equal:
      candidates = {nest.min(c.a - c.b), nest.max(c.a - c.b), nest.min(c.b - c.a),
                    nest.max(c.b - c.a)};
      break;
    case DynCheck::Limit: candidates = {nest.max(c.a)}; break;
    }
    for (const auto &e : candidates) {
      auto point = e ? nest.iterationOf(*e) : std::nullopt;
      if (!point)
        continue;
      for (unsigned i = 0; i < loops.size(); ++i)
        env[loops[i]->iv->id] = (*point)[i];
      evaluate(c, op);
      if (c.failed)
        return true;
    }
    return false;
  }

  void runDynamicChecks(Op &op) {
    if (checks.empty())
      return;
    // Loops the checks depend on, transitively through loop bounds.
    std::set<const Value *> needed;
    llvm::SmallVector<const Value *, 8> work;
    for (const DynCheck &c : checks) {
      c.a.collectVars(work);
      c.b.collectVars(work);
    }
    while (!work.empty()) {
      const Value *v = work.pop_back_val();
      if (!needed.insert(v).second)
        continue;
      for (ForOp *loop : loops)
        if (loop->iv == v) {
          loop->lo.collectVars(work);
          loop->hi.collectVars(work);
        }
    }
    nestLoops.clear();
    for (ForOp *loop : loops)
      if (needed.count(loop->iv))
        nestLoops.push_back(loop);
    LoopNestBounds nest(loops);
    if (llvm::any_of(nestLoops, [&](const ForOp *loop) { return nest.neverRuns(loop); }))
      return; // no iteration reaches the op
    llvm::erase_if(checks, [&](const DynCheck &c) { return proven(c, nest); });
    if (checks.empty())
      return;
    size_t envSize = k.numValues();
    for (ForOp *loop : loops)
      envSize = std::max<size_t>(envSize, loop->iv->id + 1);
    env.assign(envSize, 0);
    points = 0;
    exhausted = false;
    enumerate(0, op);
    if (!exhausted)
      return;
    bool unresolved = false;
    for (DynCheck &c : checks)
      unresolved |= !c.failed && !reportAtExtreme(c, nest, op);
    if (unresolved)
      warning(op.loc, &op, "could not verify bounds and shapes of this " + op.mnemonic() +
                               ": more than " + llvm::Twine(opts.maxPointsPerOp) +
                               " loop iterations to enumerate");
  }

  /// Returns false to stop enumerating.
  bool enumerate(size_t depth, const Op &op) {
    if (depth == nestLoops.size()) {
      if (++points > opts.maxPointsPerOp) {
        exhausted = true;
        return false;
      }
      bool pending = false;
      for (DynCheck &c : checks)
        if (!c.failed) {
          evaluate(c, op);
          pending |= !c.failed;
        }
      return pending;
    }
    ForOp *loop = nestLoops[depth];
    auto lo = loop->lo.evalChecked(env), hi = loop->hi.evalChecked(env);
    if (!lo || !hi) {
      error(loop->loc, loop, "loop bounds of %" + loop->iv->name + " overflow" +
                                 iterationText());
      return false;
    }
    int64_t step = std::max<int64_t>(loop->step, 1);
    for (int64_t v = *lo; v < *hi;) {
      env[loop->iv->id] = v;
      if (!enumerate(depth + 1, op))
        return false;
      if (__builtin_add_overflow(v, step, &v))
        break;
    }
    env[loop->iv->id] = 0;
    return true;
  }

  Kernel &k;
  DiagnosticEngine &diags;
  const VerifierOptions &opts;
  std::map<std::string, const Value *> names;
  std::set<const Value *> definedValues;
  std::set<const Value *> visible;
  std::vector<std::vector<const Value *>> scopes;
  llvm::SmallVector<ForOp *, 8> loops;

  // Dynamic-check state for the current op.
  std::vector<DynCheck> checks;
  llvm::SmallVector<ForOp *, 8> nestLoops;
  std::vector<int64_t> env;
  uint64_t points = 0;
  bool exhausted = false;
};

} // namespace

bool verifyKernel(Kernel &kernel, DiagnosticEngine &diags, const VerifierOptions &opts) {
  return Verifier(kernel, diags, opts).run();
}

bool verifyModule(Module &module, DiagnosticEngine &diags, const VerifierOptions &opts) {
  bool ok = true;
  for (auto &kernel : module.kernels)
    ok &= kernel && verifyKernel(*kernel, diags, opts);
  return ok;
}

} // namespace tessel::ir

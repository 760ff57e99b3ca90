//===- backend/Lowering.cpp - Tile IR ops to program statements -----------===//
#include "backend/Backend.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Casting.h"
#include "llvm/Support/FormatVariadic.h"

#include <optional>
#include <tuple>

namespace tessel::backend {
namespace {

using namespace ir;
namespace rt = runtime;

llvm::Error fail(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

/// `FILE:LINE` or `FILE:LINE:COL` (the text of a `//` comment), or none.
std::optional<std::tuple<llvm::StringRef, uint32_t, uint32_t>> parseFileLine(llvm::StringRef text) {
  auto popNumber = [](llvm::StringRef &s, uint32_t &n) {
    size_t colon = s.rfind(':');
    if (colon == llvm::StringRef::npos)
      return false;
    llvm::StringRef digits = s.substr(colon + 1);
    if (digits.empty() || digits.size() > 9 || !llvm::all_of(digits, llvm::isDigit))
      return false;
    n = uint32_t(std::stoul(digits.str()));
    s = s.take_front(colon);
    return true;
  };
  llvm::StringRef file = text;
  uint32_t last = 0, first = 0;
  if (!popNumber(file, last))
    return std::nullopt;
  llvm::StringRef shorter = file;
  if (popNumber(shorter, first) && !shorter.empty()) {
    if (first == 0)
      return std::nullopt;
    return std::make_tuple(shorter, first, last);
  }
  if (file.empty() || last == 0)
    return std::nullopt;
  return std::make_tuple(file, last, uint32_t(0));
}

/// Tile IR traced from elsewhere (the NKI tracer) ends each op's line in
/// `// FILE:LINE`: that is the op's source. (.tsl comments start with '#',
/// so a `//` after one is comment text.) The source of the line holding
/// `loc` in buffer `buf`, if it has one.
std::optional<std::tuple<llvm::StringRef, uint32_t, uint32_t>> tracedSource(const llvm::SourceMgr &sm, unsigned buf,
                                                                            llvm::SMLoc loc) {
  const llvm::MemoryBuffer *mb = sm.getMemoryBuffer(buf);
  const char *begin = mb->getBufferStart(), *end = mb->getBufferEnd(), *at = loc.getPointer();
  const char *lineStart = at, *lineEnd = at;
  while (lineStart > begin && lineStart[-1] != '\n')
    --lineStart;
  while (lineEnd < end && *lineEnd != '\n')
    ++lineEnd;
  llvm::StringRef lineText(lineStart, size_t(lineEnd - lineStart));
  size_t slashes = lineText.find("//");
  if (slashes == llvm::StringRef::npos || lineText.take_front(slashes).contains('#'))
    return std::nullopt;
  return parseFileLine(lineText.drop_front(slashes + 2).trim());
}

/// Turns IR op locations (pointers into the SourceMgr's buffers) into the
/// program's source locations.
class SourceLocator {
public:
  SourceLocator(const llvm::SourceMgr *sm, rt::Program &prog) : sm(sm), prog(prog) {}

  rt::SourceLoc locate(llvm::SMLoc loc) {
    if (!sm || !loc.isValid())
      return {};
    unsigned buf = sm->FindBufferContainingLoc(loc);
    if (!buf)
      return {};
    if (auto traced = tracedSource(*sm, buf, loc))
      return {prog.sourceFileId(std::get<0>(*traced)), std::get<1>(*traced), std::get<2>(*traced)};
    auto [line, col] = sm->getLineAndColumn(loc, buf);
    return {prog.sourceFileId(sm->getMemoryBuffer(buf)->getBufferIdentifier()), line, col};
  }

  /// `err` as a located diagnostic at `loc` (locatedError), unless it is
  /// located already.
  llvm::Error located(llvm::SMLoc loc, llvm::Error err) const {
    if (!err)
      return err;
    std::string msg = llvm::toString(std::move(err));
    if (llvm::StringRef(msg).contains(": error: "))
      return fail(msg);
    return locatedError(sm, loc, msg);
  }

private:
  const llvm::SourceMgr *sm;
  rt::Program &prog;
};

class Lowering {
public:
  Lowering(const Kernel &kernel, const rt::Target &target, const llvm::SourceMgr *sources)
      : kernel(kernel), target(target), locator(sources, prog) {}

  llvm::Expected<rt::Program> run() {
    prog.kernel = kernel.name;
    prog.target = target.name;
    for (const Value *arg : kernel.args)
      declareTensor(*arg);
    if (auto err = lowerBlock(kernel.body, prog.body))
      return err;
    return std::move(prog);
  }

private:
  struct LoopInfo {
    uint32_t var;
    int64_t lo, step;
  };
  struct Target {
    rt::Access::Kind kind;
    uint32_t id;
  };

  void declareTensor(const Value &v) {
    rt::TensorDecl t;
    t.name = v.name;
    t.dtype = v.type.dtype;
    for (const Dim &d : v.type.dims)
      t.shape.push_back(d.size);
    switch (v.role) {
    case TensorRole::Input: t.role = rt::TensorRole::Input; break;
    case TensorRole::Output: t.role = rt::TensorRole::Output; break;
    case TensorRole::Scratch: t.role = rt::TensorRole::Scratch; break;
    case TensorRole::Spill: t.role = rt::TensorRole::Spill; break;
    }
    targets[&v] = {rt::Access::Kind::Tensor, uint32_t(prog.tensors.size())};
    prog.tensors.push_back(std::move(t));
  }

  /// Linearises `e` over normalised loop variables (var = lo + step * i).
  llvm::Expected<rt::AffineExpr> affine(const IndexExpr &e) {
    rt::AffineExpr out;
    switch (e.kind()) {
    case IndexExpr::Kind::Const:
      return rt::AffineExpr::constantExpr(e.constValue());
    case IndexExpr::Kind::Var: {
      auto it = loops.find(e.varValue());
      if (it == loops.end())
        return fail("use of %" + e.varValue()->name + " outside its loop");
      out = rt::AffineExpr::varExpr(it->second.var, it->second.step);
      out.constant = it->second.lo;
      return out;
    }
    case IndexExpr::Kind::Add:
    case IndexExpr::Kind::Sub: {
      auto l = affine(e.lhs());
      if (!l)
        return l.takeError();
      auto r = affine(e.rhs());
      if (!r)
        return r.takeError();
      l->add(*r, e.kind() == IndexExpr::Kind::Add ? 1 : -1);
      return *l;
    }
    case IndexExpr::Kind::Mul: {
      auto l = affine(e.lhs());
      if (!l)
        return l.takeError();
      l->scale(e.rhs().constValue());
      return *l;
    }
    case IndexExpr::Kind::Min:
      return fail("min() of '" + e.str() + "' is only supported as a tile extent");
    }
    return out;
  }

  llvm::Expected<rt::Extent> extent(const IndexExpr &e) {
    rt::Extent x;
    if (e.kind() == IndexExpr::Kind::Min) {
      auto s = affine(e.lhs());
      if (!s)
        return s.takeError();
      auto b = affine(e.rhs());
      if (!b)
        return b.takeError();
      x.size = *s;
      x.hasMin = true;
      x.bound = *b;
      return x;
    }
    auto s = affine(e);
    if (!s)
      return s.takeError();
    x.size = *s;
    return x;
  }

  /// The number of `partitions`-row groups an extent covers, when every
  /// value it can take is a whole number of them.
  static std::optional<rt::Extent> groupExtent(const rt::Extent &e, int64_t partitions) {
    auto size = divideExact(e.size, partitions);
    if (!size)
      return std::nullopt;
    rt::Extent out;
    out.size = *size;
    if (e.hasMin) {
      auto bound = divideExact(e.bound, partitions);
      if (!bound)
        return std::nullopt;
      out.hasMin = true;
      out.bound = *bound;
    }
    return out;
  }

  /// Divides an affine expression by `d`, which must divide every term.
  static std::optional<rt::AffineExpr> divideExact(rt::AffineExpr e, int64_t d) {
    if (e.constant % d != 0)
      return std::nullopt;
    e.constant /= d;
    for (auto &term : e.terms) {
      if (term.second % d != 0)
        return std::nullopt;
      term.second /= d;
    }
    return e;
  }

  llvm::Expected<rt::Access> access(const Access &a) {
    rt::Access out;
    auto it = targets.find(a.base);
    if (it == targets.end())
      return fail("access to %" + a.base->name + " before its alloc");
    out.kind = it->second.kind;
    out.id = it->second.id;
    const int64_t partitions = kernel.geometry.partitions;
    bool folded =
        a.base->type.space != MemSpace::HBM && a.base->type.partitionFolds(partitions) > 1;
    for (size_t d = 0; d < a.indices.size(); ++d) {
      const Index &idx = a.indices[d];
      auto start = affine(idx.start);
      if (!start)
        return start.takeError();
      if (d == 0 && folded) {
        // The partition range lies within one fold: [0 +: extent] of fold
        // start/partitions.
        auto fold = divideExact(*start, partitions);
        if (!fold || !idx.extent)
          return fail("access " + accessText(a) + " does not start on a " +
                      llvm::Twine(partitions) + "-partition boundary of a folded buffer");
        rt::DimAccess part;
        part.start = rt::AffineExpr::constantExpr(0);
        auto ext = extent(*idx.extent);
        if (!ext)
          return ext.takeError();
        if (ext->size.isConstant() && ext->size.constant > partitions) {
          // A DMA over whole groups (the verifier allows no other access to
          // span groups): all partitions of a range of folds.
          auto groups = groupExtent(*ext, partitions);
          if (!groups)
            return fail("access " + accessText(a) + " spans partition groups but its extent is "
                        "not a whole number of " + llvm::Twine(partitions) + "-partition groups");
          part.extent.size = rt::AffineExpr::constantExpr(partitions);
          out.dims.push_back(part);
          rt::DimAccess foldRange;
          foldRange.start = *fold;
          foldRange.extent = *groups;
          out.dims.push_back(foldRange);
          continue;
        }
        part.extent = *ext;
        out.dims.push_back(part);
        rt::DimAccess foldIdx;
        foldIdx.start = *fold;
        foldIdx.isIndex = true;
        foldIdx.extent.size = rt::AffineExpr::constantExpr(1);
        out.dims.push_back(foldIdx);
        continue;
      }
      rt::DimAccess dim;
      dim.start = *start;
      if (idx.extent) {
        auto ext = extent(idx.span());
        if (!ext)
          return ext.takeError();
        dim.extent = *ext;
      } else {
        dim.isIndex = true;
        dim.extent.size = rt::AffineExpr::constantExpr(1);
      }
      out.dims.push_back(dim);
    }
    // An access pattern names its tile's dimensions (the verifier keeps
    // patterns off folded buffers, so IR and program dimensions agree).
    if (a.isPattern()) {
      if (folded)
        return fail("access " + accessText(a) + " is an access pattern on a partition-folded buffer");
      for (const TileDim &d : a.tileDims())
        out.pattern.push_back(rt::PatternDim{d.dim, d.extent.constValue(), d.step});
    }
    return out;
  }

  static std::string accessText(const Access &a) {
    std::string s;
    llvm::raw_string_ostream os(s);
    a.print(os);
    return os.str();
  }

  llvm::Error declareBuffer(const AllocOp &alloc, std::vector<rt::Stmt> &out) {
    const Value &v = *alloc.result;
    if (v.type.space == MemSpace::HBM) {
      declareTensor(v);
      return llvm::Error::success();
    }
    if (!alloc.address)
      return fail("buffer %" + v.name + " has no address (run the allocator first)");
    rt::BufferDecl b;
    b.name = v.name;
    b.space = v.type.space == MemSpace::SBUF ? rt::MemSpace::SBUF : rt::MemSpace::PSUM;
    b.dtype = v.type.dtype;
    int64_t folds = v.type.partitionFolds(kernel.geometry.partitions);
    b.shape.push_back(folds > 1 ? kernel.geometry.partitions : v.type.dims[0].size);
    if (folds > 1)
      b.shape.push_back(folds);
    for (size_t i = 1; i < v.type.dims.size(); ++i)
      b.shape.push_back(v.type.dims[i].size);
    b.bufs = alloc.bufs;
    b.address = *alloc.address;
    uint32_t id = prog.buffers.size();
    targets[&v] = {rt::Access::Kind::Buffer, id};
    prog.buffers.push_back(std::move(b));
    out.push_back(rt::Stmt{rt::Stmt::Kind::Alloc, id});
    return llvm::Error::success();
  }

  llvm::Error lowerLoop(const ForOp &loop, std::vector<rt::Stmt> &out) {
    if (!loop.lo.isConst() || !loop.hi.isConst())
      return fail("loop %" + loop.iv->name + " has non-constant bounds; the program format "
                  "needs constant trip counts");
    rt::Loop l;
    l.var = prog.vars.size();
    prog.vars.push_back(loop.iv->name);
    uint32_t loopId = prog.loops.size();
    prog.varLoop.push_back(loopId);
    int64_t lo = loop.lo.constValue(), hi = loop.hi.constValue();
    l.lo = 0;
    l.hi = ForOp::tripCount(lo, hi, loop.step);
    l.step = 1;
    prog.loops.push_back(std::move(l));
    loops[loop.iv] = LoopInfo{prog.loops[loopId].var, lo, loop.step};
    std::vector<rt::Stmt> body;
    if (auto err = lowerBlock(loop.body, body))
      return err;
    prog.loops[loopId].body = std::move(body);
    loops.erase(loop.iv);
    out.push_back(rt::Stmt{rt::Stmt::Kind::For, loopId});
    return llvm::Error::success();
  }

  llvm::Error lowerAffineIndex(const AffineIndex &index, rt::Instr &in) {
    auto offset = affine(index.offset);
    if (!offset)
      return offset.takeError();
    in.offset = *offset;
    in.partitionStep = index.partition;
    in.freeStep = index.free;
    return llvm::Error::success();
  }

  llvm::Error lowerInstr(const Op &op, std::vector<rt::Stmt> &out) {
    rt::Instr in;
    auto addAccess = [&](const Access &a, rt::Access &slot) -> llvm::Error {
      auto acc = access(a);
      if (!acc)
        return acc.takeError();
      slot = *acc;
      return llvm::Error::success();
    };
    // Operands in order: the destination, then the sources (stationary before
    // moving for a matmul), converted one after the other.
    llvm::SmallVector<const Access *, 3> srcs;
    const Access *dst = nullptr;
    in.op = *opcodeOf(op.kind);
    switch (op.kind) {
    case OpKind::Dma: {
      const auto &d = llvm::cast<DmaOp>(op);
      in.transpose = d.transpose;
      in.tag = d.tag == DmaTag::SpillSave     ? rt::DmaTag::SpillSave
               : d.tag == DmaTag::SpillReload ? rt::DmaTag::SpillReload
                                              : rt::DmaTag::None;
      // Each DMA statement gets its own group of queues and rotates over
      // it, so a load in a loop keeps several transfers (and their fixed
      // latency) in flight instead of queueing behind itself.
      in.queueSpan = uint32_t(std::min<int64_t>(kDmaQueuesPerStatement, target.dma_queues));
      in.queue = (nextQueueGroup++ % uint32_t(target.dma_queues / in.queueSpan)) * in.queueSpan;
      dst = &d.dst;
      srcs = {&d.src};
      break;
    }
    case OpKind::Matmul: {
      const auto &m = llvm::cast<MatmulOp>(op);
      in.acc = m.accumulate        ? rt::AccMode::Accumulate
               : m.resetOn.empty() ? rt::AccMode::Reset
                                   : rt::AccMode::ResetIfFirst;
      for (const Value *v : m.resetOn) {
        auto it = loops.find(v);
        if (it == loops.end())
          return fail("matmul reset(%" + v->name + ") names no enclosing loop");
        in.accVars.push_back(it->second.var);
      }
      dst = &m.dst;
      srcs = {&m.stationary, &m.moving};
      break;
    }
    case OpKind::Transpose: {
      const auto &t = llvm::cast<TransposeOp>(op);
      dst = &t.dst;
      srcs = {&t.src};
      break;
    }
    case OpKind::Activation: {
      const auto &a = llvm::cast<ActivationOp>(op);
      in.func = uint8_t(a.fn);
      in.scale = a.scale;
      in.bias = a.bias;
      dst = &a.dst;
      srcs = {&a.src};
      // The optional tiles in the order Instr::tiles lists them.
      if (a.biasTile) {
        in.tiles |= rt::BiasTile;
        srcs.push_back(&*a.biasTile);
      }
      if (a.scaleTile) {
        in.tiles |= rt::ScaleTile;
        srcs.push_back(&*a.scaleTile);
      }
      if (a.accumulator) {
        in.tiles |= rt::Accumulator;
        srcs.push_back(&*a.accumulator);
      }
      break;
    }
    case OpKind::TensorTensor: {
      const auto &t = llvm::cast<TensorTensorOp>(op);
      in.func = uint8_t(t.alu);
      dst = &t.dst;
      srcs = {&t.lhs, &t.rhs};
      break;
    }
    case OpKind::TensorScalar: {
      const auto &t = llvm::cast<TensorScalarOp>(op);
      in.func = uint8_t(t.alu);
      in.imm = t.scalar;
      in.reverse = t.reverse;
      dst = &t.dst;
      srcs = {&t.src};
      if (t.scalarTile) {
        in.tiles |= rt::ScalarTile;
        srcs.push_back(&*t.scalarTile);
      }
      break;
    }
    case OpKind::TensorReduce: {
      const auto &t = llvm::cast<TensorReduceOp>(op);
      in.func = uint8_t(t.alu);
      dst = &t.dst;
      srcs = {&t.src};
      break;
    }
    case OpKind::TensorTensorScan: {
      const auto &t = llvm::cast<TensorTensorScanOp>(op);
      in.func = uint8_t(t.op0);
      in.func1 = uint8_t(t.op1);
      in.imm = t.initial;
      dst = &t.dst;
      srcs = {&t.first, &t.second};
      if (t.initialTile) {
        in.tiles |= rt::ScalarTile;
        srcs.push_back(&*t.initialTile);
      }
      break;
    }
    case OpKind::TensorPartitionReduce: {
      const auto &t = llvm::cast<TensorPartitionReduceOp>(op);
      in.func = uint8_t(t.alu);
      dst = &t.dst;
      srcs = {&t.src};
      break;
    }
    case OpKind::BnStats:
    case OpKind::BnAggr: {
      const auto &t = llvm::cast<BnOp>(op);
      dst = &t.dst;
      srcs = {&t.src};
      break;
    }
    case OpKind::Iota: {
      const auto &t = llvm::cast<IotaOp>(op);
      if (auto err = lowerAffineIndex(t.index, in))
        return err;
      dst = &t.dst;
      break;
    }
    case OpKind::AffineSelect: {
      const auto &t = llvm::cast<AffineSelectOp>(op);
      in.func = uint8_t(t.cmp);
      in.imm = t.fill;
      if (auto err = lowerAffineIndex(t.index, in))
        return err;
      dst = &t.dst;
      srcs = {&t.src};
      break;
    }
    case OpKind::Copy: {
      const auto &c = llvm::cast<CopyOp>(op);
      dst = &c.dst;
      srcs = {&c.src};
      break;
    }
    case OpKind::Memset: {
      const auto &m = llvm::cast<MemsetOp>(op);
      in.imm = m.value;
      dst = &m.dst;
      break;
    }
    case OpKind::Alloc: // handled by lowerBlock, never reach here
    case OpKind::View:
    case OpKind::For:
      break;
    }
    if (dst)
      if (auto err = addAccess(*dst, in.dst))
        return err;
    for (const Access *src : srcs) {
      in.srcs.emplace_back();
      if (auto err = addAccess(*src, in.srcs.back()))
        return err;
    }
    in.engine = defaultEngine(in.op);
    in.source = locator.locate(op.loc);
    out.push_back(rt::Stmt{rt::Stmt::Kind::Instr, uint32_t(prog.instrs.size())});
    prog.instrs.push_back(std::move(in));
    return llvm::Error::success();
  }

  llvm::Error lowerBlock(const Block &block, std::vector<rt::Stmt> &out) {
    for (const auto &op : block.ops) {
      llvm::Error err = llvm::Error::success();
      if (auto *alloc = llvm::dyn_cast<AllocOp>(op.get()))
        err = declareBuffer(*alloc, out);
      else if (auto *view = llvm::dyn_cast<ViewOp>(op.get()))
        targets[view->result] = targets.lookup(view->source); // the same tensor, relabelled
      else if (auto *loop = llvm::dyn_cast<ForOp>(op.get()))
        err = lowerLoop(*loop, out);
      else
        err = lowerInstr(*op, out);
      if (err)
        return locator.located(op->loc, std::move(err));
    }
    return llvm::Error::success();
  }

  const Kernel &kernel;
  const rt::Target &target;
  rt::Program prog;
  SourceLocator locator;
  llvm::DenseMap<const Value *, LoopInfo> loops;
  llvm::DenseMap<const Value *, Target> targets;
  uint32_t nextQueueGroup = 0;
};

} // namespace

llvm::Error locatedError(const llvm::SourceMgr *sources, llvm::SMLoc loc, const llvm::Twine &msg) {
  unsigned buf = sources && loc.isValid() ? sources->FindBufferContainingLoc(loc) : 0;
  if (!buf)
    return fail(msg);
  if (auto traced = tracedSource(*sources, buf, loc))
    return fail(llvm::formatv("{0}:{1}: error: {2}", std::get<0>(*traced), std::get<1>(*traced), msg.str()).str());
  std::string text;
  llvm::raw_string_ostream os(text);
  sources->PrintMessage(os, loc, llvm::SourceMgr::DK_Error, msg, {}, {}, /*ShowColors=*/false);
  return fail(llvm::StringRef(os.str()).rtrim());
}

llvm::Expected<runtime::Program> lowerToProgram(const ir::Kernel &kernel,
                                                const runtime::Target &target,
                                                const llvm::SourceMgr *sources) {
  return Lowering(kernel, target, sources).run();
}

} // namespace tessel::backend

//===- passes/analysis/KernelCost.cpp - Static cost of a tile-IR kernel ---===//
//
// 1. Work and traffic. Each instruction contributes a per-execution amount
//    that is a product of its tile extents (the simulator's accounting:
//    runtime/TimingScheduler.cpp: dma, matmul, transpose):
//      dma        hbm-side extents x element bytes, a read when it loads into
//                 SBUF and a write when it stores to HBM; spill tags also
//                 count as spill save/reload bytes;
//      matmul     2 K M N (K, M: stationary partitions and free; N: moving free);
//      transpose  2 P P F (source tile [P, F]).
//    The amount is summed over every execution by enumerating only the loops
//    its extents mention (the rest contribute their trip counts), so partial
//    tiles (`min(128, 647 - %m)`) are exact while a loop nest costs about as
//    many evaluations as its row strips.
//    Unit times use the simulator's per-instruction costs (runtime/Timing.h):
//    the tensor engine's issue intervals, and per DMA statement its transfers'
//    fixed cost plus bytes at the best rate a transfer can reach, over the
//    queues the backend rotates it across (ir::kDmaQueuesPerStatement); the
//    statements sharing a queue group (assigned round-robin in program
//    order) add up.
// 2. On-chip peak per partition, per memory space: when every buffer has an
//    address, the highest end address (address + bytes of all `bufs` copies),
//    which is what the simulator reports; otherwise the most bytes live at one
//    program point (passes/BufferLiveness.h), what `allocate` must place.
//
//===----------------------------------------------------------------------===//
#include "passes/analysis/KernelCost.h"

#include "passes/BufferLiveness.h"
#include "passes/Policy.h"

#include "llvm/Support/FormatVariadic.h"
#include "runtime/Timing.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/Casting.h"

#include <algorithm>

namespace tessel::passes::analysis {
namespace {

using namespace ir;

/// Sums a per-execution amount of one instruction over all its executions.
class ExecutionSum {
public:
  ExecutionSum(llvm::ArrayRef<const ForOp *> loops, llvm::ArrayRef<const IndexExpr *> exprs,
               unsigned numValues)
      : loops(loops), enumerate(loops.size(), false), env(numValues, 0) {
    // Inner to outer: a loop is enumerated when the amount (or the bounds of
    // an enclosed loop) mentions its variable; a loop whose bounds are not
    // constant needs the loops its bounds mention.
    llvm::SmallVector<const Value *, 8> vars;
    for (const IndexExpr *e : exprs)
      e->collectVars(vars);
    llvm::SmallPtrSet<const Value *, 8> needed(vars.begin(), vars.end());
    for (size_t i = loops.size(); i-- > 0;) {
      const ForOp &loop = *loops[i];
      enumerate[i] = needed.count(loop.iv) > 0;
      bool boundsVary = !loop.lo.isConst() || !loop.hi.isConst();
      if (enumerate[i] || boundsVary) {
        llvm::SmallVector<const Value *, 4> boundVars;
        loop.lo.collectVars(boundVars);
        loop.hi.collectVars(boundVars);
        needed.insert(boundVars.begin(), boundVars.end());
      }
    }
  }

  /// Σ over executions of `amount(env)`, env[v->id] holding loop values.
  template <typename Fn> uint64_t sum(Fn amount) {
    total = 0;
    visit(0, 1, amount);
    return total;
  }

private:
  template <typename Fn> void visit(size_t depth, uint64_t times, Fn &amount) {
    if (times == 0)
      return;
    if (depth == loops.size()) {
      total += times * uint64_t(amount(llvm::ArrayRef<int64_t>(env)));
      return;
    }
    const ForOp &loop = *loops[depth];
    int64_t lo = loop.lo.eval(env), hi = loop.hi.eval(env);
    if (!enumerate[depth]) {
      visit(depth + 1, times * uint64_t(ForOp::tripCount(lo, hi, loop.step)), amount);
      return;
    }
    for (int64_t v = lo; v < hi; v += loop.step) {
      env[loop.iv->id] = v;
      visit(depth + 1, times, amount);
    }
  }

  llvm::ArrayRef<const ForOp *> loops;
  std::vector<bool> enumerate;
  std::vector<int64_t> env;
  uint64_t total = 0;
};

/// The extents of an access's range dimensions, in order.
llvm::SmallVector<const IndexExpr *, 2> rangeExtents(const Access &a) {
  llvm::SmallVector<const IndexExpr *, 2> out;
  for (const Index &idx : a.indices)
    if (idx.isRange())
      out.push_back(&*idx.extent);
  return out;
}

/// Product of the extents at `env` (a tile's element count).
int64_t elements(llvm::ArrayRef<const IndexExpr *> extents, llvm::ArrayRef<int64_t> env) {
  int64_t n = 1;
  for (const IndexExpr *e : extents)
    n *= e->eval(env);
  return n;
}

class CostWalker {
public:
  CostWalker(const Kernel &kernel, const runtime::Target &target, KernelCost &cost)
      : kernel(kernel), target(target), model(target), cost(cost) {}

  /// The busiest queue at the least (see KernelCost::dmaQueueNs).
  /// Walks the kernel's top-level ops (loop nests) one at a time and sums
  /// each nest's own bound: the latency if nests ran one after another.
  double walkNests(const Block &body) {
    double sequentialNs = 0;
    for (const auto &op : body.ops) {
      KernelCost before = cost;
      std::fill(nestGroupNs.begin(), nestGroupNs.end(), 0.0);
      const auto *loop = llvm::dyn_cast<ForOp>(op.get());
      if (loop)
        walkPhases(*loop);
      else
        walkOne(*op);
      KernelCost nest;
      nest.flops = cost.flops - before.flops;
      nest.hbmReadBytes = cost.hbmReadBytes - before.hbmReadBytes;
      nest.hbmWriteBytes = cost.hbmWriteBytes - before.hbmWriteBytes;
      nest.tensorBusyNs = cost.tensorBusyNs - before.tensorBusyNs;
      double busiestGroup = 0;
      for (double ns : nestGroupNs)
        busiestGroup = std::max(busiestGroup, ns);
      nest.dmaQueueNs = busiestGroup / double(queueSpan());
      sequentialNs += nest.boundUs(target) * 1e3;
    }
    return sequentialNs;
  }

  /// Walks a top-level loop whose body is a sequence of phases (its ops: an
  /// operand strip's fill, the producer's nest, the consumer's nest, ...)
  /// and adds to KernelCost::phasedNs each phase's own estimate, over all
  /// iterations: the longer of its tensor-engine time and its DMA time at
  /// the transfers' rates. Within one iteration a phase waits for the
  /// strip the phase before it writes, so one phase's DMA overlaps another
  /// phase's compute only across iterations (through the buffers' copies).
  void walkPhases(const ForOp &loop) {
    loops.push_back(&loop);
    for (const auto &op : loop.body.ops) {
      double tensorBefore = cost.tensorBusyNs, sharedBefore = sharedEstimateNs;
      KernelCost enginesBefore = cost;
      std::vector<double> groupsBefore = estimateGroupNs;
      walkOne(*op);
      double busiestGroup = 0;
      for (size_t g = 0; g < estimateGroupNs.size(); ++g)
        busiestGroup = std::max(busiestGroup,
                                estimateGroupNs[g] - (g < groupsBefore.size() ? groupsBefore[g] : 0.0));
      double dmaNs = std::max(busiestGroup / double(queueSpan()), sharedEstimateNs - sharedBefore);
      cost.phasedNs += std::max({cost.tensorBusyNs - tensorBefore, dmaNs, engineBoundNs(cost) - engineBoundNs(enginesBefore)});
    }
    loops.pop_back();
  }

  /// The vector and scalar engines' share of a phase: the busier of the two,
  /// or their PSUM accesses together where they share PSUM's port.
  double engineBoundNs(const KernelCost &c) const {
    double bound = std::max(c.vectorBusyNs, c.scalarBusyNs);
    if (target.psum_port_shared_vector_scalar)
      bound = std::max(bound, c.vectorPsumNs + c.scalarPsumNs);
    return bound;
  }

  /// The busiest queue group's estimated time (transferEstimateNs) spread
  /// over its queues.
  double dmaEstimateNs() const {
    double busiestGroup = 0;
    for (double ns : estimateGroupNs)
      busiestGroup = std::max(busiestGroup, ns);
    return std::max(busiestGroup / double(queueSpan()), sharedEstimateNs);
  }

  double dmaQueueNs() const {
    double busiestGroup = 0;
    for (double ns : groupNs)
      busiestGroup = std::max(busiestGroup, ns);
    return std::max(busiestGroup / double(queueSpan()), allStatementsNs / double(target.dma_queues));
  }

  void walk(const Block &block) {
    for (const auto &op : block.ops)
      walkOne(*op);
  }

  void walkOne(const Op &op) {
    if (const auto *loop = llvm::dyn_cast<ForOp>(&op)) {
      loops.push_back(loop);
      walk(loop->body);
      loops.pop_back();
    } else if (const auto *dma = llvm::dyn_cast<DmaOp>(&op)) {
      countDma(*dma);
    } else if (const auto *mm = llvm::dyn_cast<MatmulOp>(&op)) {
      countMatmul(*mm);
    } else if (const auto *tr = llvm::dyn_cast<TransposeOp>(&op)) {
      countTranspose(*tr);
    } else if (const auto *act = llvm::dyn_cast<ActivationOp>(&op)) {
      countEngineOp(Engine::Scalar, act->dst, {&act->src}, 1.0);
    } else if (const auto *copy = llvm::dyn_cast<CopyOp>(&op)) {
      countEngineOp(Engine::Vector, copy->dst, {&copy->src}, 1.0);
    } else if (const auto *ts = llvm::dyn_cast<TensorScalarOp>(&op)) {
      countEngineOp(Engine::Vector, ts->dst, {&ts->src}, 1.0);
    } else if (const auto *tt = llvm::dyn_cast<TensorTensorOp>(&op)) {
      countEngineOp(Engine::Vector, tt->dst, {&tt->lhs, &tt->rhs}, tensorTensorFactor(*tt));
    } else if (const auto *ms = llvm::dyn_cast<MemsetOp>(&op)) {
      bool half = ms->value == 0.0 && ms->dst.base->type.dtype == DType::BF16;
      countEngineOp(Engine::Vector, ms->dst, {}, half ? 0.5 : 1.0);
    }
  }

  /// The loads that fill a KernelCost::serialFills buffer.
  llvm::DenseSet<const Op *> serialFillLoads;

private:
  void countDma(const DmaOp &dma) {
    bool load = dma.dst.base->type.space != MemSpace::HBM;
    const Access &hbm = load ? dma.src : dma.dst;
    auto extents = rangeExtents(hbm);
    int64_t elemBytes = dtypeBytes(hbm.base->type.dtype);
    uint64_t bytes = ExecutionSum(loops, extents, kernel.numValues()).sum([&](llvm::ArrayRef<int64_t> env) {
      return elements(extents, env) * elemBytes;
    });
    (load ? cost.hbmReadBytes : cost.hbmWriteBytes) += bytes;
    if (hbm.base->role == TensorRole::Scratch)
      cost.scratchBytes += bytes;
    uint64_t transfers = ExecutionSum(loops, {}, kernel.numValues()).sum([](llvm::ArrayRef<int64_t>) { return 1; });
    // The best a transfer can do: all partitions' engines, no descriptor
    // overhead (a huge contiguous chunk), limited by the shared bandwidth.
    const int64_t probe = int64_t(1) << 20;
    runtime::InstructionCosts::DmaCost best = model.dma(probe, kernel.geometry.partitions, int64_t(1) << 40, dma.transpose);
    double nsPerByte = std::max(1.0 / best.rate, best.occupancy / double(probe));
    double statementNs = double(transfers) * target.dma_fixed_latency_ns + double(bytes) * nsPerByte;
    // The backend gives the statements queue groups round-robin in program
    // order (backend/Lowering.cpp), which is this walk's order.
    size_t groups = size_t(std::max<int64_t>(1, target.dma_queues / queueSpan()));
    groupNs.resize(groups, 0.0);
    nestGroupNs.resize(groups, 0.0);
    nestGroupNs[dmaStatements % groups] += statementNs;
    estimateGroupNs.resize(groups, 0.0);
    double estimateNs = transferEstimateNs(dma, load, extents, elemBytes);
    if (serialFillLoads.count(&dma))
      cost.serialFillNs += estimateNs / double(queueSpan()) / double(streamedSlices(dma));
    estimateGroupNs[dmaStatements % groups] += estimateNs;
    groupNs[dmaStatements++ % groups] += statementNs;
    allStatementsNs += statementNs;
    if (dma.tag == DmaTag::SpillSave)
      cost.spillSaveBytes += bytes;
    else if (dma.tag == DmaTag::SpillReload)
      cost.spillReloadBytes += bytes;
  }

  /// How many slices a serial fill streams in: the trip count of the
  /// innermost enclosing loop that both moves the load's destination and
  /// reads the buffer (widen-columns' first block loads each contraction
  /// step's rows where it uses them), else 1. The simulator's hazards are by
  /// region, so such a fill waits only for the previous copy's reader of
  /// the same slice and its reader only for the slice it reads: one slice's
  /// transfer is exposed per fill, not the whole fill.
  int64_t streamedSlices(const DmaOp &dma) const {
    const Value *buffer = dma.dst.base;
    llvm::SmallVector<const Value *, 4> moved;
    for (const Index &i : dma.dst.indices)
      i.start.collectVars(moved);
    for (size_t d = loops.size(); d-- > 0;) {
      const ForOp &loop = *loops[d];
      if (!llvm::is_contained(moved, loop.iv) || loop.constTripCount() <= 1)
        continue;
      bool reads = false;
      ir::walk(const_cast<ForOp &>(loop).body, [&](Op &op, llvm::ArrayRef<ForOp *>) {
        for (Access *a : op.reads())
          reads |= a && a->base == buffer;
      });
      if (reads)
        return loop.constTripCount();
    }
    return 1;
  }

  /// Σ over a statement's executions of a transfer's queue time: the fixed
  /// cost, then the bytes at the rate a transfer of that size, partition
  /// count and contiguous run reaches (runtime::DmaModel). The simulator lets
  /// a queue issue its next transfer after dma_queue_issue_ns, sooner on
  /// trn2; charging the whole fixed cost ranks blocks better (docs/cost-models.md).
  double transferEstimateNs(const DmaOp &dma, bool load, llvm::ArrayRef<const IndexExpr *> hbmExtents,
                            int64_t elemBytes) {
    const Access &onChip = load ? dma.dst : dma.src;
    auto chipExtents = rangeExtents(onChip);
    if (hbmExtents.size() != 2 || chipExtents.size() != 2)
      return 0;
    int64_t hbmRow = dma.transpose ? 0 : 1; // the HBM side's contiguous dimension
    llvm::SmallVector<const IndexExpr *, 4> all{hbmExtents[0], hbmExtents[1], chipExtents[0], chipExtents[1]};
    auto costAt = [&](llvm::ArrayRef<int64_t> env) {
      int64_t bytes = hbmExtents[0]->eval(env) * hbmExtents[1]->eval(env) * elemBytes;
      // A transfer over several partition groups (widen-loads) still spans
      // the partitions once.
      int64_t partitions = std::min(chipExtents[0]->eval(env), kernel.geometry.partitions);
      int64_t chunk = std::min(hbmExtents[hbmRow]->eval(env), chipExtents[1]->eval(env)) * elemBytes;
      return std::make_pair(bytes, model.dma(bytes, partitions, chunk, dma.transpose));
    };
    ExecutionSum executions(loops, all, kernel.numValues());
    // The shared bandwidth each transfer holds exclusively (the simulator
    // reserves it in turn for every queue).
    sharedEstimateNs += 1e-3 * double(executions.sum([&](llvm::ArrayRef<int64_t> env) {
      return int64_t(1e3 * costAt(env).second.occupancy);
    }));
    return 1e-3 * double(executions.sum([&](llvm::ArrayRef<int64_t> env) {
      auto [bytes, c] = costAt(env);
      return int64_t(1e3 * (target.dma_fixed_latency_ns + double(bytes) / c.rate));
    }));
  }

  void countMatmul(const MatmulOp &mm) {
    auto stationary = rangeExtents(mm.stationary), moving = rangeExtents(mm.moving);
    if (stationary.size() != 2 || moving.size() != 2)
      return; // not a 2-D tile: the verifier rejects it, the simulator never runs it
    llvm::SmallVector<const IndexExpr *, 3> extents{stationary[0], stationary[1], moving[1]};
    cost.flops += ExecutionSum(loops, extents, kernel.numValues()).sum([&](llvm::ArrayRef<int64_t> env) {
      return 2 * elements(extents, env);
    });
    // Issue intervals in picoseconds, so the integer sum keeps fractions.
    bool fp32 = mm.moving.base->type.dtype == DType::F32;
    cost.tensorBusyNs += 1e-3 * double(ExecutionSum(loops, extents, kernel.numValues()).sum([&](llvm::ArrayRef<int64_t> env) {
      return int64_t(1e3 * model.matmulNs(extents[0]->eval(env), extents[1]->eval(env), extents[2]->eval(env), fp32, false));
    }));
  }

  /// The simulator's cost factor of a tensor_tensor op (docs/hardware.md §4.2):
  /// 1 with one operand in PSUM or bf16 add/sub/mul in SBUF, else 2.
  static double tensorTensorFactor(const TensorTensorOp &tt) {
    auto psum = [](const Access &a) { return a.base->type.space == MemSpace::PSUM; };
    bool onePsum = psum(tt.lhs) != psum(tt.rhs);
    auto bf16 = [](const Access &a) { return a.base->type.dtype == DType::BF16; };
    bool fastBf16 = !psum(tt.lhs) && !psum(tt.rhs) && bf16(tt.lhs) && bf16(tt.rhs) && bf16(tt.dst) &&
                    (tt.alu == AluOp::Add || tt.alu == AluOp::Mul || tt.alu == AluOp::Sub);
    return onePsum || fastBf16 ? 1.0 : 2.0;
  }

  /// A vector- or scalar-engine instruction: its cost per execution by the
  /// free size of its destination tile (the elements per partition).
  void countEngineOp(Engine engine, const Access &dst, std::initializer_list<const Access *> srcs, double factor) {
    auto extents = rangeExtents(dst);
    if (extents.empty())
      return;
    llvm::SmallVector<const IndexExpr *, 2> free(extents.begin() + 1, extents.end());
    double ns = 1e-3 * double(ExecutionSum(loops, free, kernel.numValues()).sum([&](llvm::ArrayRef<int64_t> env) {
      return int64_t(1e3 * model.engineNs(engine, free.empty() ? 1 : elements(free, env), factor, false));
    }));
    bool psum = dst.base->type.space == MemSpace::PSUM;
    for (const Access *a : srcs)
      psum = psum || a->base->type.space == MemSpace::PSUM;
    (engine == Engine::Scalar ? cost.scalarBusyNs : cost.vectorBusyNs) += ns;
    if (psum)
      (engine == Engine::Scalar ? cost.scalarPsumNs : cost.vectorPsumNs) += ns;
  }

  void countTranspose(const TransposeOp &tr) {
    auto src = rangeExtents(tr.src);
    if (src.size() != 2)
      return;
    cost.transposeFlops += ExecutionSum(loops, src, kernel.numValues()).sum([&](llvm::ArrayRef<int64_t> env) {
      int64_t p = src[0]->eval(env), f = src[1]->eval(env);
      return 2 * p * p * f;
    });
    bool fp32 = tr.src.base->type.dtype == DType::F32;
    cost.tensorBusyNs += 1e-3 * double(ExecutionSum(loops, src, kernel.numValues()).sum([&](llvm::ArrayRef<int64_t> env) {
      return int64_t(1e3 * model.peTransposeNs(src[0]->eval(env), src[1]->eval(env), fp32));
    }));
  }

  const Kernel &kernel;
  const runtime::Target &target;
  runtime::InstructionCosts model;
  KernelCost &cost;
  llvm::SmallVector<const ForOp *, 8> loops;
  int64_t queueSpan() const { return std::min<int64_t>(kDmaQueuesPerStatement, target.dma_queues); }

  std::vector<double> groupNs; ///< per queue group: its statements' transfer time
  std::vector<double> nestGroupNs; ///< the same, for the current top-level nest
  std::vector<double> estimateGroupNs; ///< per queue group: transferEstimateNs
  double sharedEstimateNs = 0; ///< Σ of every transfer's exclusive shared-bandwidth time
  size_t dmaStatements = 0;
  double allStatementsNs = 0;
};

/// Per-partition peak of one memory space: the placed peak when every buffer
/// has an address, else the most bytes live at one program point.
int64_t onChipPeak(llvm::ArrayRef<LiveRange> ranges, MemSpace space) {
  bool placed = true;
  int64_t placedPeak = 0;
  for (const LiveRange &r : ranges) {
    if (r.space != space)
      continue;
    if (!r.alloc->address) {
      placed = false;
      break;
    }
    placedPeak = std::max(placedPeak, *r.alloc->address + r.bytes);
  }
  if (placed)
    return placedPeak;
  // The most bytes live at one range's start (the live set only grows at
  // starts): a sweep over the starts and ends in program order, a range's
  // bytes leaving after its last position.
  std::vector<std::pair<unsigned, int64_t>> starts, ends;
  for (const LiveRange &r : ranges)
    if (r.space == space) {
      starts.push_back({r.start, r.bytes});
      ends.push_back({r.end, r.bytes});
    }
  llvm::sort(starts);
  llvm::sort(ends);
  int64_t live = 0, livePeak = 0;
  size_t e = 0;
  for (size_t i = 0; i < starts.size(); ++i) {
    unsigned at = starts[i].first;
    for (; e < ends.size() && ends[e].first < at; ++e)
      live -= ends[e].second;
    live += starts[i].second;
    if (i + 1 == starts.size() || starts[i + 1].first != at)
      livePeak = std::max(livePeak, live);
  }
  return livePeak;
}

} // namespace

double KernelCost::arithmeticIntensity() const {
  uint64_t bytes = hbmBytes();
  return bytes ? double(flops) / double(bytes) : 0.0;
}

double KernelCost::rooflineUs(const runtime::Target &target) const {
  double computeSec = double(flops) / target.peakBf16Flops();
  double memorySec = double(hbmBytes()) / (target.hbm_bandwidth_gbs * 1e9);
  return std::max(computeSec, memorySec) * 1e6;
}

double KernelCost::boundUs(const runtime::Target &target) const {
  return std::max({rooflineUs(target), tensorBusyNs * 1e-3, dmaQueueNs * 1e-3});
}

/// What each plain load from HBM fills: its destination, or, for a tile
/// the tensor engine transposes into PSUM and a copy takes out
/// (io-transpose's form of an I/O transpose), the copy's destination.
llvm::DenseMap<const Op *, const Value *> fillTargets(const Kernel &kernel) {
  llvm::DenseMap<const Value *, const Value *> transposedTo, copiedTo;
  llvm::DenseMap<const Op *, const Value *> fills;
  walk(const_cast<Kernel &>(kernel).body, [&](Op &op, llvm::ArrayRef<ForOp *>) {
    if (auto *tr = llvm::dyn_cast<TransposeOp>(&op))
      transposedTo[tr->src.base] = tr->dst.base;
    else if (auto *copy = llvm::dyn_cast<CopyOp>(&op))
      copiedTo[copy->src.base] = copy->dst.base;
  });
  walk(const_cast<Kernel &>(kernel).body, [&](Op &op, llvm::ArrayRef<ForOp *>) {
    auto *dma = llvm::dyn_cast<DmaOp>(&op);
    if (!dma || dma->src.base->type.space != MemSpace::HBM || dma->tag != DmaTag::None)
      return;
    const Value *target = dma->dst.base;
    if (auto tr = transposedTo.find(target); tr != transposedTo.end())
      if (auto cp = copiedTo.find(tr->second); cp != copiedTo.end())
        target = cp->second;
    fills[dma] = target;
  });
  return fills;
}

/// KernelCost::serialFills: single-copy SBUF buffers of a loop with more
/// than one iteration that loads from HBM fill.
llvm::DenseSet<const Value *> serialFillBuffers(const Kernel &kernel,
                                                const llvm::DenseMap<const Op *, const Value *> &fills) {
  llvm::DenseSet<const Value *> filled, serial;
  for (const auto &f : fills)
    filled.insert(f.second);
  walk(const_cast<Kernel &>(kernel).body, [&](Op &op, llvm::ArrayRef<ForOp *> loops) {
    auto *alloc = llvm::dyn_cast<AllocOp>(&op);
    if (alloc && alloc->bufs == 1 && !loops.empty() && loops.back()->constTripCount() > 1 &&
        alloc->result->type.space == MemSpace::SBUF && filled.count(alloc->result))
      serial.insert(alloc->result);
  });
  return serial;
}

KernelCost analyzeKernel(const Kernel &kernel, const runtime::Target &target) {
  KernelCost cost;
  auto fills = fillTargets(kernel);
  auto serial = serialFillBuffers(kernel, fills);
  CostWalker walker(kernel, target, cost);
  for (const auto &f : fills)
    if (serial.count(f.second))
      walker.serialFillLoads.insert(f.first);
  cost.sequentialNestsNs = walker.walkNests(kernel.body);
  cost.dmaQueueNs = walker.dmaQueueNs();
  cost.dmaEstimateNs = walker.dmaEstimateNs();
  // computeLiveRanges only reads the kernel; its ranges point at mutable ops.
  Kernel &ranged = const_cast<Kernel &>(kernel);
  std::vector<LiveRange> shared = computeLiveRanges(ranged, PhaseSharing::Shared);
  cost.sbufLeastPeakBytesPerPartition = onChipPeak(shared, MemSpace::SBUF);
  cost.psumPeakBytesPerPartition = onChipPeak(shared, MemSpace::PSUM);
  // As allocate places SBUF: phases prefetching when that fits.
  int64_t prefetch =
      onChipPeak(computeLiveRanges(ranged, PhaseSharing::Prefetch), MemSpace::SBUF);
  cost.sbufPeakBytesPerPartition =
      prefetch <= target.sbuf_bytes_per_partition ? prefetch : cost.sbufLeastPeakBytesPerPartition;
  cost.serialFills = int64_t(serial.size());
  return cost;
}

int64_t sbufLeastPeakBytesPerPartition(const Kernel &kernel) {
  Kernel &ranged = const_cast<Kernel &>(kernel); // computeLiveRanges only reads it
  return onChipPeak(computeLiveRanges(ranged, PhaseSharing::Shared), MemSpace::SBUF);
}

namespace {
std::string kib(int64_t bytes) { return llvm::formatv("{0:f1} KiB", bytes / 1024.0).str(); }
} // namespace

int64_t plannerSbufLimit(const runtime::Target &t) {
  return int64_t(t.sbuf_bytes_per_partition * (1.0 - policy::kSbufHeadroom));
}

std::string describeCost(const KernelCost &cost, const runtime::Target &t) {
  std::string text = llvm::formatv("AI {0:f1} flop/B, SBUF peak {1} ({2:f0}%), PSUM peak {3}, roofline "
                                   "{4:f1} us, engine bound {5:f1} us, predicted {6:f1} us",
                                   cost.arithmeticIntensity(), kib(cost.sbufLeastPeakBytesPerPartition),
                                   100.0 * cost.sbufLeastPeakBytesPerPartition / t.sbuf_bytes_per_partition,
                                   kib(cost.psumPeakBytesPerPartition), cost.rooflineUs(t), cost.boundUs(t),
                                   cost.predictedUs(t))
                         .str();
  // The form an MLP candidate takes: an intermediate handed through HBM
  // means two kernels (docs/passes.md, "The MLP kernel").
  if (cost.scratchBytes > 0)
    text += llvm::formatv(", two kernels ({0:f1} MiB handed off through HBM)", cost.scratchBytes / 1048576.0).str();
  if (cost.spillSaveBytes + cost.spillReloadBytes > 0)
    text += llvm::formatv(", spill saves {0:f1} MiB and reloads {1:f1} MiB",
                          cost.spillSaveBytes / 1048576.0, cost.spillReloadBytes / 1048576.0)
                .str();
  return text;
}

} // namespace tessel::passes::analysis

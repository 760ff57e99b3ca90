//===- runtime/Simulator.cpp - Functional + timing execution --------------===//
//
// One walk over the program body in program order. For every dynamic
// instruction: evaluate its accesses into 2-D tile views and check them
// (bounds, shapes, limits, never-written reads), then hand them to the
// numeric executor (NumericExecutor.h, unless timing-only) and to the timing
// scheduler (TimingScheduler.h). Errors stop the run and name the
// instruction and the loop iteration.
//
//===----------------------------------------------------------------------===//
#include "runtime/Simulator.h"

#include "runtime/AccessPlan.h"
#include "runtime/BF16.h"
#include "runtime/FastForward.h"
#include "runtime/Npy.h"
#include "runtime/NumericExecutor.h"
#include "runtime/RandomValues.h"
#include "runtime/TimingScheduler.h"
#include "support/HostMemory.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

using namespace llvm;

namespace tessel::runtime {

const TensorData *SimResult::output(StringRef name) const {
  for (const TensorData &t : outputs)
    if (t.name == name)
      return &t;
  return nullptr;
}

const TensorData *SimResult::input(StringRef name) const {
  for (const TensorData &t : inputs)
    if (t.name == name)
      return &t;
  return nullptr;
}

Error writeTensorNpy(StringRef path, const TensorData &t) {
  return t.bf16.empty() ? writeNpy(path, t.shape, t.data) : writeNpyFromBF16(path, t.shape, t.bf16);
}

std::vector<float> randomTensorValues(const TensorDecl &t, uint64_t seed, std::optional<double> halfWidth) {
  return randomFloats(t, seed, halfWidth);
}

uint64_t functionalMemoryBytes(const Program &prog, const SimOptions &opts) {
  // Per element: its value, and for what the run writes a flag of whether it
  // was written (NumericExecutor); the inputs and outputs handed back as
  // float32 are copied out of that storage.
  uint64_t bytes = 0;
  for (const TensorDecl &t : prog.tensors) {
    const uint64_t n = uint64_t(t.numElements()), value = dtypeBytes(t.dtype);
    bytes += n * value;
    if (t.role != TensorRole::Input)
      bytes += n;
    const bool handedBack = t.role == TensorRole::Input || t.role == TensorRole::Output;
    if (handedBack && t.dtype == DType::BF16 && !opts.bf16Results)
      bytes += n * sizeof(float);
  }
  for (const BufferDecl &b : prog.buffers)
    bytes += uint64_t(b.bufs * b.partitions() * b.freeElems()) * (dtypeBytes(b.dtype) + 1);
  return bytes;
}

namespace {

constexpr uint64_t kMaxFunctionalElems = uint64_t(4) << 30; // 16 GiB of float32

class Machine {
public:
  Machine(const Program &p, const Target &t, const SimOptions &o) : P(p), T(t), O(o), functional(!o.timingOnly) {}

  Expected<SimResult> run();

private:
  const Program &P;
  const Target &T;
  const SimOptions &O;
  bool functional;

  std::string errMsg;
  const Instr *cur = nullptr;

  std::vector<int64_t> vars;
  std::vector<uint32_t> activeVars;
  std::vector<int64_t> curSlot, allocCount; ///< per buffer
  uint64_t totalInstrs = 0, doneInstrs = 0;
  static constexpr uint64_t ProgressEvery = 1 << 16;

  std::optional<NumericExecutor> num; ///< functional runs only
  std::optional<TimingScheduler> sched;
  std::optional<LoopShapes> loopShapes; ///< when loops are fast-forwarded
  std::optional<WatchBackoff> backoff;
  const LoopWatch *innermostWatch = nullptr; ///< of the loops being watched for a steady state
  uint64_t skippedInstrs = 0;
  std::vector<std::string> warnings; ///< for the report
  std::optional<AccessPlans> plans;
  std::vector<TileView> views; ///< per access, as AccessPlans indexes them

  // ---- errors ----
  std::string iterationString() const {
    if (activeVars.empty())
      return "";
    std::string s = " (iteration ";
    for (size_t i = 0; i < activeVars.size(); ++i)
      s += formatv("{0}%{1}={2}", i ? ", " : "", P.vars[activeVars[i]], vars[activeVars[i]]).str();
    return s + ")";
  }
  /// Where a message about the whole program points: its .tasm file, else
  /// the file the driver compiled it from (RunDescription::source).
  std::string programPlace() const {
    if (!P.fileName.empty() || O.run.source.empty())
      return P.locString({});
    return O.run.source == "-" ? std::string("<stdin>") : O.run.source;
  }
  bool fail(const Twine &msg) {
    if (!errMsg.empty())
      return false;
    if (cur) {
      // A program compiled here has no file of its own: its instruction's
      // source (the .tsl, .tir or NKI line) is the place to point at.
      std::string where = P.fileName.empty() && cur->source.known() ? P.sourceString(cur->source, true)
                                                                    : P.locString(cur->loc);
      errMsg = (where + ": error: `" + instrName(*cur) + "`: " + msg + iterationString()).str();
      errMsg += "\n    " + printInstruction(P, *cur);
    } else {
      errMsg = (programPlace() + ": error: " + msg).str();
    }
    return false;
  }
  bool failAt(SrcLoc loc, const Twine &msg) {
    if (errMsg.empty())
      errMsg = (P.locString(loc) + ": error: " + msg).str();
    return false;
  }
  /// An input tensor's data is wrong: at its declaration when the program
  /// has a file, else the message alone (the caller names the command).
  bool failInput(const TensorDecl &t, const Twine &msg) {
    if (!P.fileName.empty())
      return failAt(t.loc, msg);
    if (errMsg.empty())
      errMsg = msg.str();
    return false;
  }

  // ---- setup ----
  bool checkStatic();
  bool loadInputs();
  void takeTensors(SimResult &res);

  // ---- execution ----
  /// Per tensor and buffer, what makeView derives from its declaration.
  struct Layout {
    int64_t stride[MaxDims] = {}; ///< row-major, in elements
    int64_t slotElems = 0, eltBytes = 0, slotBytes = 0; ///< buffers only
    int64_t address = 0;  ///< buffers only: of slot 0, bytes per partition
    uint32_t firstObj = 0; ///< buffers only: slot 0's hazard-tracking object
  };
  std::vector<Layout> tensorLayout, bufferLayout;
  void computeLayouts();
  bool execBody(const std::vector<Stmt> &body);
  /// A loop's iterations; the watched form (fast-forward) is kept apart so
  /// that an exact run does not construct an empty watch per loop execution.
  bool execLoop(const Loop &l, int64_t trip);
  bool execWatched(uint32_t loopId, const Loop &l);
  std::vector<int64_t> tripCount; ///< per loop
  bool exec(const Instr &in, uint32_t id);
  // One instruction of each kind, its operands placed (exec's steps).
  bool execDma(const Instr &in, uint32_t id, TileView &vDst, TileView *vSrc);
  bool execMatmul(const Instr &in, uint32_t id, TileView &vDst, TileView *vSrc);
  bool execTranspose(const Instr &in, uint32_t id, TileView &vDst, TileView *vSrc);
  /// The view of access `index` (AccessPlans numbering) for this iteration.
  LLVM_ATTRIBUTE_ALWAYS_INLINE bool place(uint32_t index, const Access &a, const char *role) {
    const AccessPlan &p = (*plans)[index];
    if (!p.inBounds)
      return makeView(a, views[index], role);
    placePlanned(p, views[index]);
    return true;
  }
  LLVM_ATTRIBUTE_ALWAYS_INLINE void placePlanned(const AccessPlan &p, TileView &v);
  /// Evaluates and checks `a` from its declaration.
  bool makeView(const Access &a, TileView &v, const char *role);
  bool checkInit(const TileView &v, const char *role);
  /// Whether the PSUM bytes of `r` lie in one bank. Banks are a power of two
  /// bytes on every target so far: the two divisions this takes otherwise,
  /// per matmul, were about 2% of an exact timing-only run.
  bool inOneBank(const Rect &r) const {
    const int64_t bank = T.psum_bank_bytes;
    if (bank > 0 && (bank & (bank - 1)) == 0 && r.c0 >= 0 && r.c1 > 0)
      return (r.c0 ^ (r.c1 - 1)) < bank;
    return r.c0 / bank == (r.c1 - 1) / bank;
  }
  std::string tileStr(const TileView &v) const { return formatv("[{0}, {1}]", v.P, v.F).str(); }
  bool sameShape(const TileView &a, const TileView &b, const char *what) {
    if (a.P == b.P && a.F == b.F)
      return true;
    return fail(formatv("tile shapes differ: {0} is {1} but the destination is {2}", what, tileStr(b),
                        tileStr(a)));
  }
  void finishReport(SimResult &res, double simSeconds);
};

bool Machine::checkStatic() {
  for (const BufferDecl &b : P.buffers) {
    if (b.partitions() > T.sbuf_partitions)
      return failAt(b.loc, formatv("buffer %{0} has {1} partitions; target {2} has {3}", b.name, b.partitions(),
                                   T.name, T.sbuf_partitions));
    int64_t cap = b.space == MemSpace::SBUF ? T.sbuf_bytes_per_partition : T.psum_bytes_per_partition;
    if (b.endAddress() > cap)
      return failAt(b.loc, formatv("{0} capacity exceeded: buffer %{1} occupies bytes [{2}, {3}) of each "
                                   "partition (addr {2} + bufs {4} x {5} bytes), but a partition of target {6} "
                                   "holds {7} bytes",
                                   b.space == MemSpace::SBUF ? "SBUF" : "PSUM", b.name, b.address, b.endAddress(),
                                   b.bufs, b.slotBytes(), T.name, cap));
  }
  for (const Instr &in : P.instrs) {
    cur = &in;
    if (in.op == Opcode::Dma && in.queue + in.queueSpan > uint32_t(T.dma_queues))
      return fail(formatv("DMA queue {0} does not exist: target {1} has {2} queues (0-{3})",
                          in.queue + in.queueSpan - 1, T.name, T.dma_queues, T.dma_queues - 1));
    if (in.op == Opcode::Matmul && P.buffers[in.dst.id].dtype != DType::F32)
      return fail(formatv("matmul output %{0} must be an f32 PSUM buffer (TensorE accumulates in fp32)",
                          P.buffers[in.dst.id].name));
  }
  cur = nullptr;
  return true;
}

bool Machine::loadInputs() {
  auto inputNames = [&] {
    std::string s;
    for (const TensorDecl &t : P.tensors)
      if (t.role == TensorRole::Input)
        s += (s.empty() ? "" : ", ") + t.name;
    return s.empty() ? std::string("none") : s;
  };
  auto checkName = [&](const std::string &name) {
    int t = P.findTensor(name);
    if (t < 0)
      return fail(formatv("no input tensor named '{0}' (the program's inputs: {1})", name, inputNames()));
    if (P.tensors[t].role != TensorRole::Input)
      return fail(formatv("'{0}' is an {1} tensor, not an input (the program's inputs: {2})", name,
                          roleName(P.tensors[t].role), inputNames()));
    return true;
  };
  for (const auto &kv : O.inputFiles)
    if (!checkName(kv.first))
      return false;
  for (const auto &kv : O.inputData)
    if (!checkName(kv.first))
      return false;
  if (!functional)
    return true;
  for (size_t i = 0; i < P.tensors.size(); ++i) {
    const TensorDecl &t = P.tensors[i];
    size_t n = size_t(t.numElements());
    if (t.role != TensorRole::Input)
      continue;
    std::vector<float> v;
    if (auto it = O.inputData.find(t.name); it != O.inputData.end()) {
      if (it->second.size() != n)
        return failInput(t, formatv("input '{0}': expected {1} values (shape {2}), got {3}", t.name, n,
                                    formatShape(t.shape), it->second.size()));
      v = it->second;
    } else if (auto it = O.inputFiles.find(t.name); it != O.inputFiles.end()) {
      Expected<NpyArray> arr = readNpy(it->second);
      if (!arr)
        return failInput(t, formatv("input '{0}': {1}", t.name, toString(arr.takeError())));
      if (arr->shape != t.shape)
        return failInput(t, formatv("input '{0}' ({1}): expected shape {2} ({3}), found {4}", t.name,
                                    it->second, formatShape(t.shape), dtypeName(t.dtype),
                                    formatShape(arr->shape)));
      v = std::move(arr->data);
    } else {
      std::optional<double> hw;
      if (auto it = O.randomHalfWidth.find(t.name); it != O.randomHalfWidth.end())
        hw = it->second;
      // Drawn as a task: the inputs' values are drawn in parallel.
      num->fillInput(uint32_t(i), [&t, hw, seed = O.seed](float *f32, uint16_t *bf16) {
        if (bf16)
          randomBF16Bits(t, seed, hw, bf16);
        else
          randomFloats(t, seed, hw, f32);
      });
      continue;
    }
    if (t.dtype != DType::BF16) {
      num->setInput(uint32_t(i), std::move(v));
      continue;
    }
    std::vector<uint16_t> bits(v.size());
    floatsToBF16Bits(v.data(), bits.data(), v.size());
    num->setInputBits(uint32_t(i), std::move(bits));
  }
  return true;
}

/// Moves the inputs used and the outputs out of the executor (no copies,
/// unless float32 results are asked for).
void Machine::takeTensors(SimResult &res) {
  for (size_t i = 0; i < P.tensors.size(); ++i) {
    const TensorDecl &t = P.tensors[i];
    if (t.role == TensorRole::Output) {
      if (size_t unwritten = num->unwrittenElements(uint32_t(i)))
        warnings.push_back(formatv("output %{0}: {1} of {2} elements were never written (they read as 0)",
                                   t.name, unwritten, t.numElements())
                               .str());
    } else if (t.role != TensorRole::Input) {
      continue;
    }
    std::vector<TensorData> &into = t.role == TensorRole::Input ? res.inputs : res.outputs;
    into.push_back(TensorData{t.name, t.dtype, t.shape, {}, {}});
    if (t.dtype == DType::BF16 && O.bf16Results)
      into.back().bf16 = num->takeBits(uint32_t(i));
    else
      into.back().data = num->takeTensor(uint32_t(i));
  }
}

void Machine::computeLayouts() {
  auto layoutOf = [](const std::vector<int64_t> &shape) {
    Layout l;
    rowMajorStrides(shape, l.stride);
    return l;
  };
  for (const TensorDecl &t : P.tensors)
    tensorLayout.push_back(layoutOf(t.shape));
  for (const BufferDecl &b : P.buffers) {
    bufferLayout.push_back(layoutOf(b.shape));
    bufferLayout.back().slotElems = b.partitions() * b.freeElems();
    bufferLayout.back().eltBytes = dtypeBytes(b.dtype);
    bufferLayout.back().slotBytes = b.slotBytes();
    bufferLayout.back().address = b.address;
    bufferLayout.back().firstObj = sched->slotObject(uint32_t(bufferLayout.size() - 1), 0);
  }
}

void Machine::placePlanned(const AccessPlan &p, TileView &v) {
  const int64_t *x = vars.data();
  const int64_t r0 = p.row0.eval(x), c0 = p.col0.eval(x);
  const int64_t base = int64_t(uint64_t(r0) * uint64_t(p.rowStride) + uint64_t(c0)); // never undefined, as eval()
  if (v.isBuffer) {
    const Layout &layout = bufferLayout[v.id];
    const int64_t slot = curSlot[v.id], eb = layout.eltBytes;
    const int64_t slotAddr = layout.address + slot * layout.slotBytes;
    v.base = base + slot * layout.slotElems;
    v.rect = {r0, r0 + p.rows, slotAddr + c0 * eb, slotAddr + (c0 + p.cols) * eb};
    v.obj = layout.firstObj + uint32_t(slot);
  } else {
    v.base = base;
    v.rect = {r0, r0 + p.rows, c0, c0 + p.cols};
    v.obj = sched->tensorObject(v.id);
  }
}

bool Machine::makeView(const Access &a, TileView &v, const char *role) {
  const std::vector<int64_t> &shape = a.isTensor() ? P.tensors[a.id].shape : P.buffers[a.id].shape;
  int rank = int(shape.size());
  if (rank > MaxDims)
    return fail(formatv("%{0} has {1} dimensions; at most {2} are supported", P.accessName(a), rank, MaxDims));
  const Layout &layout = a.isTensor() ? tensorLayout[a.id] : bufferLayout[a.id];
  const int64_t *stride = layout.stride;
  v.isBuffer = a.isBuffer();
  v.id = a.id;
  v.base = 0;
  int64_t extent[MaxDims];
  bool isIndex[MaxDims];
  int64_t innerMin = 0, innerMax = 0, row0 = 0, rows = 1;
  for (int d = 0; d < rank; ++d) {
    const DimAccess &da = a.dims[d];
    int64_t st = da.start.eval(vars.data());
    int64_t ext = da.isIndex ? 1 : da.extent.eval(vars.data());
    if (ext <= 0)
      return fail(formatv("{0} %{1}: dimension {2} has an empty extent ({3})", role, P.accessName(a), d, ext));
    if (st < 0 || ext > shape[d] || st > shape[d] - ext) {
      if (da.isIndex)
        return fail(formatv("out-of-bounds {0} of %{1}: index {2} in dimension {3} of size {4}", role,
                            P.accessName(a), st, d, shape[d]));
      return fail(formatv("out-of-bounds {0} of %{1}: dimension {2} range [{3}, {4}) exceeds size {5}", role,
                          P.accessName(a), d, st, int64_t(uint64_t(st) + uint64_t(ext)), shape[d]));
    }
    v.base += st * stride[d];
    if (d == 0) {
      row0 = st;
      rows = ext;
    } else {
      innerMin += st * stride[d];
      innerMax += (st + ext - 1) * stride[d];
    }
    extent[d] = ext;
    isIndex[d] = da.isIndex;
  }
  if (a.pattern.empty())
    setTileShape(v, rank, extent, isIndex, stride);
  else
    setPatternShape(v, a, stride);
  if (a.isBuffer()) {
    const BufferDecl &b = P.buffers[a.id];
    int64_t slot = curSlot[a.id];
    v.base += slot * layout.slotElems;
    int64_t eb = layout.eltBytes;
    int64_t slotAddr = b.address + slot * layout.slotBytes;
    v.rect = {row0, row0 + rows, slotAddr + innerMin * eb, slotAddr + (innerMax + 1) * eb};
    v.obj = sched->slotObject(a.id, slot);
  } else {
    v.rect = {row0, row0 + rows, innerMin, innerMax + 1};
    v.obj = sched->tensorObject(a.id);
  }
  return true;
}

bool Machine::checkInit(const TileView &v, const char *role) {
  int64_t bad = num->firstUnwritten(v);
  if (bad < 0)
    return true;
  std::string name = v.isBuffer ? P.buffers[v.id].name : P.tensors[v.id].name;
  std::string where = v.isBuffer ? formatv("{0} buffer %{1} (slot {2})", spaceName(P.buffers[v.id].space).upper(),
                                           name, curSlot[v.id])
                                       .str()
                                 : formatv("{0} tensor %{1}", roleName(P.tensors[v.id].role), name).str();
  return fail(formatv("{0} reads never-written data of {1}: tile element [{2}, {3}] of {4} has not been written "
                      "since the buffer slot was allocated",
                      role, where, bad / v.F, bad % v.F, tileStr(v)));
}

bool Machine::execBody(const std::vector<Stmt> &body) {
  for (const Stmt &s : body) {
    switch (s.kind) {
    case Stmt::Kind::For: {
      const Loop &l = P.loops[s.id];
      activeVars.push_back(l.var);
      const bool ok = loopShapes ? execWatched(s.id, l) : execLoop(l, tripCount[s.id]);
      if (!ok)
        return false; // the run stops
      activeVars.pop_back();
      break;
    }
    case Stmt::Kind::Alloc: {
      const BufferDecl &b = P.buffers[s.id];
      curSlot[s.id] = allocCount[s.id] % b.bufs;
      ++allocCount[s.id];
      if (functional)
        num->allocate(s.id, curSlot[s.id]);
      if (P.slotReuse == SlotReuse::Whole)
        sched->reuseSlot(s.id, curSlot[s.id]);
      break;
    }
    case Stmt::Kind::Instr:
      if (!exec(P.instrs[s.id], s.id))
        return false;
      sched->instructionDone(s.id);
      if (++doneInstrs % ProgressEvery == 0 && O.progress)
        O.progress(doneInstrs, totalInstrs);
      break;
    }
  }
  return true;
}

bool Machine::execLoop(const Loop &l, int64_t trip) {
  int64_t &var = vars[l.var];
  for (int64_t it = 0, v = l.lo; it < trip; ++it, v += l.step) {
    var = v;
    if (!execBody(l.body))
      return false;
  }
  return true;
}

bool Machine::execWatched(uint32_t loopId, const Loop &l) {
  std::optional<LoopWatch> watch;
  const LoopWatch *enclosingWatch = innermostWatch;
  if ((*loopShapes)[loopId].skippable && LoopWatch::worthWatching(l, (*loopShapes)[loopId]) &&
      backoff->shouldWatch(loopId)) {
    watch.emplace(P, (*loopShapes)[loopId], l, *sched, enclosingWatch);
    innermostWatch = &*watch;
  }
  const int64_t trip = tripCount[loopId];
  for (int64_t it = 0; it < trip; ++it) {
    if (watch) {
      uint64_t before = doneInstrs;
      it += watch->boundary(it, vars, allocCount, doneInstrs);
      skippedInstrs += doneInstrs - before;
    }
    vars[l.var] = l.lo + it * l.step;
    if (!execBody(l.body))
      return false; // the run stops
  }
  if (watch) {
    backoff->watched(loopId, watch->skipped());
    innermostWatch = enclosingWatch;
  }
  return true;
}

bool Machine::execDma(const Instr &in, uint32_t id, TileView &vDst, TileView *vSrc) {
  const TileView &s = vSrc[0];
  if (in.transpose) {
    if (s.P != vDst.F || s.F != vDst.P)
      return fail(formatv("a transposing dma turns a {0} tile into [{2}, {1}], but the destination is {3}",
                          tileStr(s), s.P, s.F, tileStr(vDst)));
  } else if (!(vDst.P == s.P && vDst.F == s.F)) {
    // A DMA over several partition groups. The fold reshapes the tensor
    // side's view in place; a planned view (AccessPlan) keeps its shape
    // between executions, so it is folded once, and the region and base
    // it is placed at each time do not depend on the fold.
    TileView &tensorSide = vDst.isBuffer ? vSrc[0] : vDst;
    if (!foldRowsOntoPartitions(tensorSide, vDst.isBuffer ? vDst : vSrc[0]) &&
        !sameShape(vDst, s, "the source"))
      return false;
  }
  bool load = vDst.isBuffer;
  if (functional) {
    if (!checkInit(s, "the dma"))
      return false;
    num->dma(vDst, s, in.transpose);
  }
  sched->dma(in, id, load ? s : vDst, load ? vDst : s, load);
  return true;
}

bool Machine::execMatmul(const Instr &in, uint32_t id, TileView &vDst, TileView *vSrc) {
  const TileView &st = vSrc[0], &mv = vSrc[1];
  int64_t K = st.P, M = st.F, N = mv.F;
  if (mv.P != K)
    return fail(formatv("contraction sizes differ: stationary is {0} and moving is {1} (both operands "
                        "hold K on their partitions)",
                        tileStr(st), tileStr(mv)));
  if (vDst.P != M || vDst.F != N)
    return fail(formatv("output tile is {0} but stationary {1} and moving {2} give [{3}, {4}]", tileStr(vDst),
                        tileStr(st), tileStr(mv), M, N));
  if (K > T.pe_rows)
    return fail(formatv("contraction K = {0} exceeds the {1} PE rows (partitions)", K, T.pe_rows));
  if (M > T.pe_cols)
    return fail(formatv("stationary free size M = {0} exceeds the {1} PE columns", M, T.pe_cols));
  if (N > T.matmul_max_moving)
    return fail(formatv("moving free size N = {0} exceeds the limit of {1}", N, T.matmul_max_moving));
  if (!inOneBank(vDst.rect))
    return fail(formatv("the accumulation group %{0} spans PSUM bytes [{1}, {2}) of each partition, crossing "
                        "a bank boundary (banks are {3} bytes; N = {4} fp32 values need {5} bytes)",
                        P.buffers[vDst.id].name, vDst.rect.c0, vDst.rect.c1, T.psum_bank_bytes, N, N * 4));
  if (functional) {
    bool reset = in.acc == AccMode::Reset;
    if (in.acc == AccMode::ResetIfFirst) {
      reset = true;
      for (uint32_t var : in.accVars)
        if (vars[var] != P.loops[P.varLoop[var]].lo)
          reset = false;
    }
    if (!checkInit(st, "the stationary operand") || !checkInit(mv, "the moving operand"))
      return false;
    if (!reset && !checkInit(vDst, "accumulation (PSUM read-modify-write)"))
      return false;
    num->matmul(vDst, st, mv, reset);
  }
  sched->matmul(in, id, vDst, vSrc);
  return true;
}

bool Machine::execTranspose(const Instr &in, uint32_t id, TileView &vDst, TileView *vSrc) {
  const TileView &s = vSrc[0];
  if (s.P > T.pe_rows || s.F > T.pe_cols)
    return fail(formatv("TensorE transposes tiles of at most [{0}, {1}], got {2}", T.pe_rows, T.pe_cols,
                        tileStr(s)));
  if (vDst.P != s.F || vDst.F != s.P)
    return fail(formatv("transposing a {0} tile gives [{2}, {1}], but the destination is {3}", tileStr(s), s.P,
                        s.F, tileStr(vDst)));
  if (!inOneBank(vDst.rect))
    return fail(formatv("the output %{0} spans PSUM bytes [{1}, {2}) of each partition, crossing a bank "
                        "boundary (banks are {3} bytes)",
                        P.buffers[vDst.id].name, vDst.rect.c0, vDst.rect.c1, T.psum_bank_bytes));
  if (functional) {
    if (!checkInit(s, "the transpose"))
      return false;
    num->transpose(vDst, s);
  }
  sched->transpose(in, id, vDst, s);
  return true;
}

bool Machine::exec(const Instr &in, uint32_t id) {
  cur = &in;
  const uint32_t first = plans->first(id);
  TileView &vDst = views[first], *vSrc = views.data() + first + 1;
  if (!place(first, in.dst, "write"))
    return false;
  for (uint32_t i = 0; i < in.srcs.size(); ++i)
    if (!place(first + 1 + i, in.srcs[i], "read"))
      return false;
  const unsigned nsrc = unsigned(in.srcs.size());
  switch (in.op) {
  case Opcode::Dma:
    return execDma(in, id, vDst, vSrc);
  case Opcode::Matmul:
    return execMatmul(in, id, vDst, vSrc);
  case Opcode::Transpose:
    return execTranspose(in, id, vDst, vSrc);
  default:
    break;
  }

  // Vector / Scalar / GpSimd instructions.
  unsigned nread = nsrc;
  if (in.op == Opcode::TensorReduce) {
    if (vDst.P != vSrc[0].P || vSrc[0].F % vDst.F != 0)
      return fail(formatv("tensor_reduce folds a {0} tile into [{1}, 1] or runs of its elements, but the "
                          "destination is {2}",
                          tileStr(vSrc[0]), vSrc[0].P, tileStr(vDst)));
  } else if (in.op == Opcode::TensorPartitionReduce) {
    if (vDst.P != 1 || vDst.F != vSrc[0].F)
      return fail(formatv("folds the partitions of a {0} tile into [1, {1}], but the destination is {2}",
                          tileStr(vSrc[0]), vSrc[0].F, tileStr(vDst)));
  } else if (in.op == Opcode::BnStats || in.op == Opcode::BnAggr) {
    const bool stats = in.op == Opcode::BnStats;
    if (vDst.P != vSrc[0].P || vDst.F != (stats ? 6 : 2) || (!stats && vSrc[0].F % 3 != 0))
      return fail(formatv("writes [{0}, {1}] from a [P, {2}] tile of the same partitions, but the source is {3} "
                          "and the destination {4}",
                          vSrc[0].P, stats ? 6 : 2, stats ? "F" : "3k", tileStr(vSrc[0]),
                          tileStr(vDst)));
  } else {
    const unsigned full = in.tiles ? unsigned(opInfo(in.op).srcRoles.size()) : nsrc;
    for (unsigned i = 0; i < full; ++i)
      if (!sameShape(vDst, vSrc[i], i == 0 ? "the first source" : "the second source"))
        return false;
    for (unsigned i = full; i < nsrc; ++i)
      if (vSrc[i].P != vDst.P || vSrc[i].F != 1)
        return fail(formatv("a per-partition operand must be [{0}, 1] (one value per partition of the destination "
                            "{1}), but %{2} gives {3}",
                            vDst.P, tileStr(vDst), P.accessName(in.srcs[i]), tileStr(vSrc[i])));
    nread = in.numReads();
  }
  if (functional) {
    for (unsigned i = 0; i < nread; ++i)
      if (!checkInit(vSrc[i], i == 0 ? "the first source" : i == 1 ? "the second source" : "a per-partition operand"))
        return false;
    const int64_t offset = in.op == Opcode::Iota || in.op == Opcode::AffineSelect ? in.offset.eval(vars.data()) : 0;
    num->elementwise(in, vDst, vSrc, offset);
  }
  sched->engineOp(in, id, vDst, vSrc, nsrc);
  return true;
}

void Machine::finishReport(SimResult &res, double simSeconds) {
  const double launchNs = launchOverheadNs(T, O.latency);
  res.report = sched->report(launchNs);
  res.report.latencyPredicts = latencyKindName(O.latency).str();
  res.report.launchOverheadNs = launchNs;
  res.report.kernel = P.kernel;
  res.report.target = T.name;
  res.report.run = O.run;
  res.report.functional = functional;
  res.report.simSeconds = simSeconds;
  res.report.fastForwardedInstructions = skippedInstrs;
  res.report.warnings = std::move(warnings);
}

Expected<SimResult> Machine::run() {
  auto t0 = std::chrono::steady_clock::now();
  SimResult res;
  if (Error e = verifyProgram(P))
    return e;
  if (Error e = validateTarget(T, "target " + T.name))
    return e;
  if (!checkStatic())
    return createStringError(inconvertibleErrorCode(), errMsg);
  totalInstrs = dynamicInstructionCount(P);
  if (O.maxInstructions && totalInstrs > O.maxInstructions)
    return createStringError(inconvertibleErrorCode(),
                             "%s: error: the program would execute %llu dynamic instructions, more than the "
                             "limit of %llu; raise it with --max-instructions=N (0: no limit)",
                             programPlace().c_str(), (unsigned long long)totalInstrs,
                             (unsigned long long)O.maxInstructions);
  if (functional) {
    uint64_t elems = 0;
    for (const TensorDecl &t : P.tensors)
      elems += uint64_t(t.numElements());
    if (elems > kMaxFunctionalElems)
      return createStringError(inconvertibleErrorCode(),
                               "%s: error: the HBM tensors hold %llu elements, more than the functional "
                               "simulator's limit of %llu; use --timing-only",
                               programPlace().c_str(), (unsigned long long)elems,
                               (unsigned long long)kMaxFunctionalElems);
    Expected<std::optional<MemoryLimit>> limit = hostMemoryLimit();
    if (!limit)
      return limit.takeError();
    const uint64_t need = functionalMemoryBytes(P, O);
    if (*limit && need > (*limit)->bytes)
      return createStringError(inconvertibleErrorCode(),
                               "%s: error: a functional run of this program holds at least %s (the values of its "
                               "HBM tensors and buffers), more than the %s of %s; use --timing-only (no values "
                               "are held), a smaller shape, or set TESSEL_MEMORY_LIMIT (e.g. 64G) to try anyway",
                               programPlace().c_str(), formatBytes(double(need)).c_str(),
                               (*limit)->source.c_str(), formatBytes(double((*limit)->bytes)).c_str());
  }
  vars.assign(P.vars.size(), 0);
  for (const Loop &l : P.loops)
    tripCount.push_back(l.tripCount());
  plans.emplace(P);
  views = plans->shapedViews();
  curSlot.assign(P.buffers.size(), 0);
  allocCount.assign(P.buffers.size(), 0);
  sched.emplace(P, T, !O.tracePath.empty() || O.recordTimeline, O.recordTimeline, O.traceMaxEvents);
  computeLayouts();
  if (functional)
    num.emplace(P, O.threads);
  // Fast-forward skips instructions: only when nothing needs every one of
  // them (numbers, a trace, the timeline).
  if (O.fastForward && !functional && O.tracePath.empty() && !O.recordTimeline) {
    loopShapes.emplace(P);
    backoff.emplace(P.loops.size());
  }
  bool ok = loadInputs() && execBody(P.body);
  if (O.progress)
    O.progress(totalInstrs, totalInstrs); // the end: a progress line is cleared
  if (!ok)
    return createStringError(inconvertibleErrorCode(), errMsg);
  cur = nullptr;
  if (functional)
    takeTensors(res);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  finishReport(res, secs);
  if (functional && !O.outputDir.empty()) {
    if (std::error_code ec = sys::fs::create_directories(O.outputDir))
      return createStringError(ec, "cannot create output directory '%s': %s", O.outputDir.c_str(),
                               ec.message().c_str());
    for (const TensorData &t : res.outputs) {
      SmallString<256> path(O.outputDir);
      sys::path::append(path, t.name + ".npy");
      if (Error e = writeTensorNpy(path, t))
        return e;
    }
  }
  std::vector<TraceEvent> &trace = sched->events();
  if (!O.tracePath.empty()) {
    if (O.recordTimeline && trace.size() > O.traceMaxEvents) {
      std::vector<TraceEvent> capped(trace.begin(), trace.begin() + long(O.traceMaxEvents));
      if (Error e = writeChromeTrace(O.tracePath, P, res.report, capped, trace.size() - capped.size()))
        return e;
    } else if (Error e = writeChromeTrace(O.tracePath, P, res.report, trace, sched->droppedEvents())) {
      return e;
    }
  }
  if (O.recordTimeline)
    res.timeline = std::move(trace);
  return res;
}

} // namespace

Expected<SimResult> simulate(const Program &prog, const Target &target, const SimOptions &opts) {
  Machine m(prog, target, opts);
  return m.run();
}

} // namespace tessel::runtime

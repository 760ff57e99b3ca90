//===- runtime/Simulator.cpp - Functional + timing execution --------------===//
//
// One walk over the program body in program order. For every dynamic
// instruction: evaluate its accesses into 2-D tile views (checking bounds and
// shapes), execute the numbers (unless timing-only), and place it in time on
// its unit (Timing.h). Errors stop the run and name the instruction and the
// loop iteration.
//
//===----------------------------------------------------------------------===//
#include "runtime/Simulator.h"

#include "runtime/BF16.h"
#include "runtime/IntervalUnion.h"
#include "runtime/Npy.h"
#include "runtime/Timing.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>

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

std::vector<float> randomTensorValues(const TensorDecl &t, uint64_t seed, std::optional<double> halfWidth) {
  // FNV-1a of the name, mixed with the seed: stable across platforms and runs.
  uint64_t h = 1469598103934665603ull;
  for (char c : t.name) {
    h ^= uint8_t(c);
    h *= 1099511628211ull;
  }
  std::mt19937_64 rng(h ^ (seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull));
  double s = halfWidth ? *halfWidth : std::sqrt(3.0 / double(t.shape.empty() ? 1 : t.shape[0]));
  std::vector<float> v(size_t(t.numElements()));
  for (float &x : v) {
    double u = double(rng() >> 11) * (1.0 / 9007199254740992.0); // [0, 1)
    float f = float((2.0 * u - 1.0) * s);
    x = t.dtype == DType::BF16 ? roundToBF16(f) : f;
  }
  return v;
}

namespace {

constexpr int MaxDims = 8;
constexpr uint64_t kMaxFunctionalElems = uint64_t(4) << 30; // 16 GiB of float32
constexpr int NumComputeUnits = 4; // tensor, vector, scalar, gpsimd; DMA queue q is unit 4 + q

/// A 2-D tile view [P, F] of an object's element storage.
struct TileView {
  int64_t base = 0;
  int64_t P = 1, pStride = 0;
  int nf = 0;
  int64_t fSize[MaxDims] = {}, fStride[MaxDims] = {};
  int64_t F = 1;
  int64_t contig = 1; ///< elements of the innermost contiguous run
  Rect rect;
  uint32_t obj = 0;   ///< tracker index
  bool isBuffer = false;
  uint32_t id = 0;    ///< tensor or buffer id
};

/// Calls fn(offset, linearIndex, length, stride) for every innermost run of
/// the view (row-major order of the tile): bulk operations on contiguous runs.
template <class Fn> inline void forEachRun(const TileView &v, Fn fn) {
  int64_t idx[MaxDims] = {};
  int64_t lin = 0;
  const int nf = v.nf;
  const int64_t inner = nf ? v.fSize[nf - 1] : 1;
  const int64_t innerStride = nf ? v.fStride[nf - 1] : 1;
  for (int64_t p = 0; p < v.P; ++p) {
    int64_t rowBase = v.base + p * v.pStride;
    if (nf <= 1) {
      fn(rowBase, lin, inner, innerStride);
      lin += inner;
      continue;
    }
    std::fill(idx, idx + MaxDims, 0);
    for (;;) {
      int64_t off = rowBase;
      for (int d = 0; d + 1 < nf; ++d)
        off += idx[d] * v.fStride[d];
      fn(off, lin, inner, innerStride);
      lin += inner;
      int d = nf - 2;
      while (d >= 0) {
        if (++idx[d] < v.fSize[d])
          break;
        idx[d] = 0;
        --d;
      }
      if (d < 0)
        break;
    }
  }
}

/// True when every row of the view is one contiguous run (a plain 2-D
/// matrix with leading dimension pStride): BLAS can use it in place.
inline bool isMatrix(const TileView &v) { return v.nf == 0 || (v.nf == 1 && v.fStride[0] == 1); }

/// Calls fn(offset, linearIndex) for every element of the view, in order.
template <class Fn> inline void forEachElem(const TileView &v, Fn fn) {
  forEachRun(v, [&](int64_t off, int64_t lin, int64_t len, int64_t stride) {
    for (int64_t i = 0; i < len; ++i)
      fn(off + i * stride, lin + i);
  });
}

class Machine {
public:
  Machine(const Program &p, const Target &t, const SimOptions &o)
      : P(p), T(t), O(o), cost(t), functional(!o.timingOnly) {}

  Expected<SimResult> run();

private:
  const Program &P;
  const Target &T;
  const SimOptions &O;
  CostModel cost;
  bool functional;
  bool recording = !O.tracePath.empty() || O.recordTimeline;

  std::string errMsg;
  const Instr *cur = nullptr;

  std::vector<int64_t> vars;
  std::vector<uint32_t> activeVars;

  // memory objects: trackers [0, nTensors) are tensors, then buffer slots
  std::vector<uint32_t> slotObj;
  std::vector<int64_t> curSlot, allocCount;
  std::vector<RegionTracker> trackers;
  std::vector<std::vector<uint32_t>> aliases;
  std::vector<bool> trackTensor;
  std::vector<std::vector<float>> tenData, bufData;
  std::vector<std::vector<uint8_t>> tenInit, bufInit;

  // timing
  std::vector<double> unitFree, unitBusy;
  std::vector<uint64_t> unitCount;
  std::vector<uint64_t> queueBytes;
  std::vector<std::pair<double, double>> dmaIntervals;
  IntervalUnion dmaBusyPerInstr; ///< a DMA hotspot's busy time: its transfers may overlap on several queues
  std::vector<std::pair<double, double>> psumPort[4], sbufPort[4]; // per compute unit, when shared ports are modelled
  BandwidthCalendar shared;
  double makespan = 0;
  bool haveStationary = false;
  uint32_t lastStatObj = 0;
  Rect lastStatRect;

  Report rep;
  struct InstrStats {
    uint64_t count = 0;
    double busyNs = 0, waitNs = 0;
  };
  std::vector<InstrStats> perInstr;
  std::vector<TraceEvent> trace;
  uint64_t traceDropped = 0;

  std::vector<float> tA, tB, tC;
  TileView vDst, vSrc[2];

  // ---- errors ----
  std::string iterationString() const {
    if (activeVars.empty())
      return "";
    std::string s = " (iteration ";
    for (size_t i = 0; i < activeVars.size(); ++i)
      s += formatv("{0}%{1}={2}", i ? ", " : "", P.vars[activeVars[i]], vars[activeVars[i]]).str();
    return s + ")";
  }
  bool fail(const Twine &msg) {
    if (!errMsg.empty())
      return false;
    if (cur) {
      errMsg = (P.locString(cur->loc) + ": error: `" + instrName(*cur) + "`: " + msg + iterationString())
                   .str();
      errMsg += "\n    " + printInstruction(P, *cur);
    } else {
      errMsg = (P.locString({}) + ": error: " + msg).str();
    }
    return false;
  }
  bool failAt(SrcLoc loc, const Twine &msg) {
    if (errMsg.empty())
      errMsg = (P.locString(loc) + ": error: " + msg).str();
    return false;
  }

  // ---- setup ----
  bool checkStatic();
  bool loadInputs(SimResult &res);
  void setupObjects();

  // ---- execution ----
  bool execBody(const std::vector<Stmt> &body);
  bool exec(const Instr &in, uint32_t id);
  bool makeView(const Access &a, TileView &v, const char *role);
  bool checkInit(const TileView &v, const char *role);
  void setInit(const TileView &v);
  float *storage(const TileView &v) {
    return v.isBuffer ? bufData[v.id].data() : tenData[v.id].data();
  }
  DType dtypeOf(const TileView &v) const {
    return v.isBuffer ? P.buffers[v.id].dtype : P.tensors[v.id].dtype;
  }
  bool inSpace(const TileView &v, MemSpace s) const { return v.isBuffer && P.buffers[v.id].space == s; }
  void gather(const TileView &v, std::vector<float> &out) {
    out.resize(size_t(v.P * v.F));
    const float *src = storage(v);
    float *o = out.data();
    forEachRun(v, [&](int64_t off, int64_t lin, int64_t len, int64_t stride) {
      if (stride == 1)
        std::memcpy(o + lin, src + off, size_t(len) * sizeof(float));
      else
        for (int64_t i = 0; i < len; ++i)
          o[lin + i] = src[off + i * stride];
    });
  }
  void scatter(const TileView &v, const float *in) {
    float *dst = storage(v);
    bool bf16 = dtypeOf(v) == DType::BF16;
    forEachRun(v, [&](int64_t off, int64_t lin, int64_t len, int64_t stride) {
      if (bf16)
        for (int64_t i = 0; i < len; ++i)
          dst[off + i * stride] = roundToBF16(in[lin + i]);
      else if (stride == 1)
        std::memcpy(dst + off, in + lin, size_t(len) * sizeof(float));
      else
        for (int64_t i = 0; i < len; ++i)
          dst[off + i * stride] = in[lin + i];
    });
    setInit(v);
  }
  std::string tileStr(const TileView &v) const { return formatv("[{0}, {1}]", v.P, v.F).str(); }
  bool sameShape(const TileView &a, const TileView &b, const char *what) {
    if (a.P == b.P && a.F == b.F)
      return true;
    return fail(formatv("tile shapes differ: {0} is {1} but the destination is {2}", what, tileStr(b),
                        tileStr(a)));
  }

  // timing helpers
  double readReady(const TileView &v, int unit) { return ready(v, unit, &RegionTracker::readReady); }
  double writeReady(const TileView &v, int unit) { return ready(v, unit, &RegionTracker::writeReady); }
  /// When `v`'s region (and every object aliasing it) is ready for `unit`
  /// by the tracker query `query`.
  double ready(const TileView &v, int unit, double (RegionTracker::*query)(const Rect &, int) const) {
    if (!v.isBuffer && !trackTensor[v.id])
      return 0;
    double t = (trackers[v.obj].*query)(v.rect, unit);
    for (uint32_t a : aliases[v.obj])
      t = std::max(t, (trackers[a].*query)(v.rect, unit));
    return t;
  }
  void schedule(const Instr &in, uint32_t id, int unit, unsigned nsrc, double busyNs, double latencyNs,
                float rows, float cols);
  void scheduleDma(const Instr &in, uint32_t id, const TileView &hbm, const TileView &sb, bool load);
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

void Machine::setupObjects() {
  size_t nT = P.tensors.size();
  trackers.assign(nT, RegionTracker());
  trackTensor.assign(nT, false);
  for (const Instr &in : P.instrs)
    if (in.op == Opcode::Dma && in.dst.isTensor())
      trackTensor[in.dst.id] = true; // never-written tensors (inputs) need no hazard tracking
  slotObj.resize(P.buffers.size());
  curSlot.assign(P.buffers.size(), 0);
  allocCount.assign(P.buffers.size(), 0);
  for (size_t b = 0; b < P.buffers.size(); ++b) {
    slotObj[b] = uint32_t(trackers.size());
    trackers.resize(trackers.size() + size_t(P.buffers[b].bufs));
  }
  aliases.assign(trackers.size(), {});
  // Slots of different buffers that share physical bytes (an allocator may
  // reuse addresses) see each other's accesses.
  for (size_t a = 0; a < P.buffers.size(); ++a)
    for (size_t b = 0; b < P.buffers.size(); ++b) {
      if (a == b || P.buffers[a].space != P.buffers[b].space)
        continue;
      const BufferDecl &A = P.buffers[a], &B = P.buffers[b];
      for (int64_t sa = 0; sa < A.bufs; ++sa)
        for (int64_t sb = 0; sb < B.bufs; ++sb) {
          int64_t a0 = A.address + sa * A.slotBytes(), a1 = a0 + A.slotBytes();
          int64_t b0 = B.address + sb * B.slotBytes(), b1 = b0 + B.slotBytes();
          if (a0 < b1 && b0 < a1)
            aliases[slotObj[a] + sa].push_back(slotObj[b] + uint32_t(sb));
        }
    }
  if (functional) {
    bufData.resize(P.buffers.size());
    bufInit.resize(P.buffers.size());
    for (size_t b = 0; b < P.buffers.size(); ++b) {
      size_t n = size_t(P.buffers[b].bufs * P.buffers[b].partitions() * P.buffers[b].freeElems());
      bufData[b].assign(n, 0.0f);
      bufInit[b].assign(n, 0);
    }
  }
  unsigned units = NumComputeUnits + unsigned(T.dma_queues);
  unitFree.assign(units, 0.0);
  unitBusy.assign(units, 0.0);
  unitCount.assign(units, 0);
  queueBytes.assign(size_t(T.dma_queues), 0);
  vars.assign(P.vars.size(), 0);
  perInstr.assign(P.instrs.size(), InstrStats());
}

bool Machine::loadInputs(SimResult &res) {
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
  tenData.resize(P.tensors.size());
  tenInit.resize(P.tensors.size());
  for (size_t i = 0; i < P.tensors.size(); ++i) {
    const TensorDecl &t = P.tensors[i];
    size_t n = size_t(t.numElements());
    if (t.role != TensorRole::Input) {
      tenData[i].assign(n, 0.0f);
      tenInit[i].assign(n, 0);
      continue;
    }
    std::vector<float> v;
    if (auto it = O.inputData.find(t.name); it != O.inputData.end()) {
      if (it->second.size() != n)
        return fail(formatv("input '{0}': expected {1} values (shape {2}), got {3}", t.name, n,
                            formatShape(t.shape), it->second.size()));
      v = it->second;
    } else if (auto it = O.inputFiles.find(t.name); it != O.inputFiles.end()) {
      Expected<NpyArray> arr = readNpy(it->second);
      if (!arr)
        return fail(formatv("input '{0}': {1}", t.name, toString(arr.takeError())));
      if (arr->shape != t.shape)
        return fail(formatv("input '{0}' ({1}): expected shape {2} ({3}), found {4}", t.name, it->second,
                            formatShape(t.shape), dtypeName(t.dtype), formatShape(arr->shape)));
      v = std::move(arr->data);
    } else {
      v = randomTensorValues(t, O.seed, O.randomHalfWidth.count(t.name)
                                            ? std::optional<double>(O.randomHalfWidth.at(t.name))
                                            : std::nullopt);
    }
    if (t.dtype == DType::BF16)
      for (float &x : v)
        x = roundToBF16(x);
    tenData[i] = v;
    res.inputs.push_back(TensorData{t.name, t.dtype, t.shape, std::move(v)});
  }
  return true;
}

bool Machine::makeView(const Access &a, TileView &v, const char *role) {
  const std::vector<int64_t> &shape = a.isTensor() ? P.tensors[a.id].shape : P.buffers[a.id].shape;
  int rank = int(shape.size());
  if (rank > MaxDims)
    return fail(formatv("%{0} has {1} dimensions; at most {2} are supported", P.accessName(a), rank, MaxDims));
  int64_t stride[MaxDims];
  int64_t s = 1;
  for (int d = rank - 1; d >= 0; --d) {
    stride[d] = s;
    s *= shape[d];
  }
  v.isBuffer = a.isBuffer();
  v.id = a.id;
  v.base = 0;
  v.nf = 0;
  v.F = 1;
  bool first = true;
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
    if (da.isIndex)
      continue;
    if (first) {
      v.P = ext;
      v.pStride = stride[d];
      first = false;
    } else {
      v.fSize[v.nf] = ext;
      v.fStride[v.nf] = stride[d];
      ++v.nf;
      v.F *= ext;
    }
  }
  // Coalesce free dimensions that are contiguous with each other.
  int out = 0;
  for (int i = 0; i < v.nf; ++i) {
    if (out > 0 && v.fStride[out - 1] == v.fSize[i] * v.fStride[i]) {
      v.fSize[out - 1] *= v.fSize[i];
      v.fStride[out - 1] = v.fStride[i];
    } else {
      v.fSize[out] = v.fSize[i];
      v.fStride[out] = v.fStride[i];
      ++out;
    }
  }
  v.nf = out;
  v.contig = v.nf == 0 ? 1 : (v.fStride[v.nf - 1] == 1 ? v.fSize[v.nf - 1] : 1);
  if (a.isBuffer()) {
    const BufferDecl &b = P.buffers[a.id];
    int64_t slot = curSlot[a.id];
    v.base += slot * b.partitions() * b.freeElems();
    int64_t eb = dtypeBytes(b.dtype);
    int64_t slotAddr = b.address + slot * b.slotBytes();
    v.rect = {row0, row0 + rows, slotAddr + innerMin * eb, slotAddr + (innerMax + 1) * eb};
    v.obj = slotObj[a.id] + uint32_t(slot);
  } else {
    v.rect = {row0, row0 + rows, innerMin, innerMax + 1};
    v.obj = a.id;
  }
  return true;
}

bool Machine::checkInit(const TileView &v, const char *role) {
  const uint8_t *init = v.isBuffer ? bufInit[v.id].data() : tenInit[v.id].data();
  if (!v.isBuffer && P.tensors[v.id].role == TensorRole::Input)
    return true;
  int64_t bad = -1;
  forEachRun(v, [&](int64_t off, int64_t lin, int64_t len, int64_t stride) {
    if (bad >= 0)
      return;
    if (stride == 1) {
      if (const void *z = std::memchr(init + off, 0, size_t(len)))
        bad = lin + (static_cast<const uint8_t *>(z) - (init + off));
      return;
    }
    for (int64_t i = 0; i < len; ++i)
      if (!init[off + i * stride]) {
        bad = lin + i;
        return;
      }
  });
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

void Machine::setInit(const TileView &v) {
  uint8_t *init = v.isBuffer ? bufInit[v.id].data() : tenInit[v.id].data();
  forEachRun(v, [&](int64_t off, int64_t, int64_t len, int64_t stride) {
    if (stride == 1)
      std::memset(init + off, 1, size_t(len));
    else
      for (int64_t i = 0; i < len; ++i)
        init[off + i * stride] = 1;
  });
}

bool Machine::execBody(const std::vector<Stmt> &body) {
  for (const Stmt &s : body) {
    switch (s.kind) {
    case Stmt::Kind::For: {
      const Loop &l = P.loops[s.id];
      activeVars.push_back(l.var);
      for (int64_t i = l.lo; i < l.hi; i += l.step) {
        vars[l.var] = i;
        if (!execBody(l.body))
          return false;
      }
      activeVars.pop_back();
      break;
    }
    case Stmt::Kind::Alloc: {
      const BufferDecl &b = P.buffers[s.id];
      curSlot[s.id] = allocCount[s.id] % b.bufs;
      ++allocCount[s.id];
      if (functional) {
        // A fresh allocation holds no data the program wrote for it.
        size_t n = size_t(b.partitions() * b.freeElems());
        std::fill_n(bufInit[s.id].begin() + size_t(curSlot[s.id]) * n, n, 0);
      }
      break;
    }
    case Stmt::Kind::Instr:
      if (!exec(P.instrs[s.id], s.id))
        return false;
      break;
    }
  }
  return true;
}

// Earliest t >= start such that [t, t + dur) overlaps none of `uses`
// (sorted, disjoint: one in-order engine's intervals).
static double fitAround(const std::vector<std::pair<double, double>> &uses, double start, double dur) {
  auto it = std::lower_bound(uses.begin(), uses.end(), start,
                             [](const std::pair<double, double> &iv, double t) { return iv.second <= t; });
  for (; it != uses.end() && it->first < start + dur; ++it)
    start = std::max(start, it->second);
  return start;
}

void Machine::schedule(const Instr &in, uint32_t id, int unit, unsigned nsrc, double busyNs, double latencyNs,
                       float rows, float cols) {
  double start = unitFree[unit];
  for (unsigned i = 0; i < nsrc; ++i)
    start = std::max(start, readReady(vSrc[i], unit));
  start = std::max(start, writeReady(vDst, unit));
  // trn1 port sharing: VectorE/ScalarE on PSUM, VectorE/GpSimdE on SBUF.
  bool usePsum = false, useSbuf = false;
  if (unit >= 1 && unit <= 3) {
    usePsum = inSpace(vDst, MemSpace::PSUM);
    useSbuf = inSpace(vDst, MemSpace::SBUF);
    for (unsigned i = 0; i < nsrc; ++i) {
      usePsum |= inSpace(vSrc[i], MemSpace::PSUM);
      useSbuf |= inSpace(vSrc[i], MemSpace::SBUF);
    }
    usePsum &= T.psum_port_shared_vector_scalar != 0 && (unit == 1 || unit == 2);
    useSbuf &= T.sbuf_port_shared_vector_gpsimd != 0 && (unit == 1 || unit == 3);
    for (bool moved = true; moved;) {
      moved = false;
      if (usePsum) {
        double t = fitAround(psumPort[unit == 1 ? 2 : 1], start, busyNs);
        moved |= t != start;
        start = t;
      }
      if (useSbuf) {
        double t = fitAround(sbufPort[unit == 1 ? 3 : 1], start, busyNs);
        moved |= t != start;
        start = t;
      }
    }
  }
  double end = start + busyNs;
  perInstr[id].count++;
  perInstr[id].busyNs += busyNs;
  perInstr[id].waitNs += start - unitFree[unit];
  if (usePsum)
    psumPort[unit].push_back({start, end});
  if (useSbuf)
    sbufPort[unit].push_back({start, end});
  unitFree[unit] = end;
  unitBusy[unit] += busyNs;
  ++unitCount[unit];
  for (unsigned i = 0; i < nsrc; ++i)
    if (vSrc[i].isBuffer || trackTensor[vSrc[i].id])
      trackers[vSrc[i].obj].recordRead(vSrc[i].rect, end, unit);
  double visible = end + latencyNs;
  trackers[vDst.obj].recordWrite(vDst.rect, visible, unit);
  makespan = std::max(makespan, visible);
  if (recording) {
    if (O.recordTimeline || trace.size() < O.traceMaxEvents)
      trace.push_back({id, uint16_t(unit), rows, cols, start, busyNs});
    else
      ++traceDropped;
  }
}

void Machine::scheduleDma(const Instr &in, uint32_t id, const TileView &hbm, const TileView &sb, bool load) {
  uint32_t queue = in.queue + uint32_t(perInstr[id].count % in.queueSpan);
  int unit = NumComputeUnits + int(queue);
  const TensorDecl &t = P.tensors[hbm.id];
  int64_t bytes = hbm.P * hbm.F * dtypeBytes(t.dtype);
  int64_t chunk = std::min(hbm.contig * int64_t(dtypeBytes(t.dtype)),
                           sb.contig * int64_t(dtypeBytes(P.buffers[sb.id].dtype)));
  CostModel::DmaCost c = cost.dma(bytes, sb.P, chunk, in.transpose);
  const TileView &src = load ? hbm : sb;
  const TileView &dst = load ? sb : hbm;
  double start = unitFree[unit];
  start = std::max(start, readReady(src, unit));
  start = std::max(start, writeReady(dst, unit));
  double t0 = start + T.dma_fixed_latency_ns;
  double finish = shared.reserve(t0, c.occupancy);
  double end = std::max(t0 + double(bytes) / c.rate, finish);
  perInstr[id].count++;
  perInstr[id].busyNs += end - start;
  perInstr[id].waitNs += start - unitFree[unit];
  unitFree[unit] = end;
  unitBusy[unit] += end - start;
  ++unitCount[unit];
  queueBytes[queue] += uint64_t(bytes);
  dmaIntervals.push_back({start, end});
  dmaBusyPerInstr.add(id, start, end);
  if (src.isBuffer || trackTensor[src.id])
    trackers[src.obj].recordRead(src.rect, end, unit);
  trackers[dst.obj].recordWrite(dst.rect, end, unit);
  makespan = std::max(makespan, end);
  // traffic accounting
  (load ? rep.hbmReadBytes : rep.hbmWriteBytes) += uint64_t(bytes);
  switch (t.role) {
  case TensorRole::Input: rep.trafficInputs += uint64_t(bytes); break;
  case TensorRole::Output: rep.trafficOutputs += uint64_t(bytes); break;
  case TensorRole::Scratch: rep.trafficIntermediates += uint64_t(bytes); break;
  case TensorRole::Spill: rep.trafficSpill += uint64_t(bytes); break;
  }
  if (in.tag == DmaTag::SpillSave)
    rep.spillSaveBytes += uint64_t(bytes);
  else if (in.tag == DmaTag::SpillReload)
    rep.spillReloadBytes += uint64_t(bytes);
  if (recording) {
    if (O.recordTimeline || trace.size() < O.traceMaxEvents)
      trace.push_back({id, uint16_t(unit), float(sb.P), float(bytes), start, end - start});
    else
      ++traceDropped;
  }
}

bool Machine::exec(const Instr &in, uint32_t id) {
  cur = &in;
  if (!makeView(in.dst, vDst, "write"))
    return false;
  for (size_t i = 0; i < in.srcs.size(); ++i)
    if (!makeView(in.srcs[i], vSrc[i], "read"))
      return false;
  const unsigned nsrc = unsigned(in.srcs.size());
  switch (in.op) {
  case Opcode::Dma: {
    const TileView &s = vSrc[0];
    if (in.transpose) {
      if (s.P != vDst.F || s.F != vDst.P)
        return fail(formatv("a transposing dma turns a {0} tile into [{2}, {1}], but the destination is {3}",
                            tileStr(s), s.P, s.F, tileStr(vDst)));
    } else if (!sameShape(vDst, s, "the source"))
      return false;
    bool load = vDst.isBuffer;
    if (functional) {
      if (!checkInit(s, "the dma"))
        return false;
      gather(s, tA);
      if (in.transpose) {
        tB.resize(tA.size());
        for (int64_t r = 0; r < s.P; ++r)
          for (int64_t c = 0; c < s.F; ++c)
            tB[size_t(c * s.P + r)] = tA[size_t(r * s.F + c)];
        scatter(vDst, tB.data());
      } else {
        scatter(vDst, tA.data());
      }
    }
    scheduleDma(in, id, load ? s : vDst, load ? vDst : s, load);
    return true;
  }
  case Opcode::Matmul: {
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
    int64_t b0 = vDst.rect.c0 / T.psum_bank_bytes, b1 = (vDst.rect.c1 - 1) / T.psum_bank_bytes;
    if (b0 != b1)
      return fail(formatv("the accumulation group %{0} spans PSUM bytes [{1}, {2}) of each partition, crossing "
                          "a bank boundary (banks are {3} bytes; N = {4} fp32 values need {5} bytes)",
                          P.buffers[vDst.id].name, vDst.rect.c0, vDst.rect.c1, T.psum_bank_bytes, N, N * 4));
    bool reset = in.acc == AccMode::Reset;
    if (in.acc == AccMode::ResetIfFirst) {
      reset = true;
      for (uint32_t var : in.accVars)
        if (vars[var] != P.loops[P.varLoop[var]].lo)
          reset = false;
    }
    if (functional) {
      if (!checkInit(st, "the stationary operand") || !checkInit(mv, "the moving operand"))
        return false;
      if (!reset && !checkInit(vDst, "accumulation (PSUM read-modify-write)"))
        return false;
      // Operands whose rows are contiguous go to BLAS in place (leading
      // dimension = partition stride); others are gathered first.
      const float *a = nullptr, *b = nullptr;
      int lda = int(M), ldb = int(N);
      if (isMatrix(st)) {
        a = storage(st) + st.base;
        lda = int(st.pStride);
      } else {
        gather(st, tA);
        a = tA.data();
      }
      if (isMatrix(mv)) {
        b = storage(mv) + mv.base;
        ldb = int(mv.pStride);
      } else {
        gather(mv, tB);
        b = tB.data();
      }
      float beta = reset ? 0.0f : 1.0f;
      if (isMatrix(vDst) && lda >= M && ldb >= N && vDst.pStride >= N) {
        float *c = storage(vDst) + vDst.base;
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, int(M), int(N), int(K), 1.0f, a, lda, b, ldb, beta,
                    c, int(vDst.pStride));
        setInit(vDst);
      } else {
        if (reset)
          tC.assign(size_t(M * N), 0.0f);
        else
          gather(vDst, tC);
        if (lda < M || ldb < N) { // degenerate single-column views: gather both
          gather(st, tA);
          gather(mv, tB);
          a = tA.data();
          b = tB.data();
          lda = int(M);
          ldb = int(N);
        }
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, int(M), int(N), int(K), 1.0f, a, lda, b, ldb, beta,
                    tC.data(), int(N));
        scatter(vDst, tC.data());
      }
    }
    bool fp32 = dtypeOf(st) == DType::F32 || dtypeOf(mv) == DType::F32;
    bool newStat = !haveStationary || lastStatObj != st.obj || !(lastStatRect == st.rect);
    haveStationary = true;
    lastStatObj = st.obj;
    lastStatRect = st.rect;
    rep.flops += uint64_t(2 * K * M * N);
    double busy = cost.matmulNs(K, M, N, fp32, newStat);
    // An accumulating matmul also reads its PSUM tile; same-engine order covers it.
    schedule(in, id, 0, 2, busy, cost.tensorLatencyNs(), float(M), float(N));
    return true;
  }
  case Opcode::Transpose: {
    const TileView &s = vSrc[0];
    if (s.P > T.pe_rows || s.F > T.pe_cols)
      return fail(formatv("TensorE transposes tiles of at most [{0}, {1}], got {2}", T.pe_rows, T.pe_cols,
                          tileStr(s)));
    if (vDst.P != s.F || vDst.F != s.P)
      return fail(formatv("transposing a {0} tile gives [{2}, {1}], but the destination is {3}", tileStr(s), s.P,
                          s.F, tileStr(vDst)));
    int64_t b0 = vDst.rect.c0 / T.psum_bank_bytes, b1 = (vDst.rect.c1 - 1) / T.psum_bank_bytes;
    if (b0 != b1)
      return fail(formatv("the output %{0} spans PSUM bytes [{1}, {2}) of each partition, crossing a bank "
                          "boundary (banks are {3} bytes)",
                          P.buffers[vDst.id].name, vDst.rect.c0, vDst.rect.c1, T.psum_bank_bytes));
    if (functional) {
      if (!checkInit(s, "the transpose"))
        return false;
      gather(s, tA);
      tB.resize(tA.size());
      for (int64_t r = 0; r < s.P; ++r)
        for (int64_t c = 0; c < s.F; ++c)
          tB[size_t(c * s.P + r)] = tA[size_t(r * s.F + c)];
      scatter(vDst, tB.data());
    }
    rep.transposeFlops += uint64_t(2 * s.P * s.P * s.F);
    haveStationary = false; // the data tile becomes the stationary operand
    schedule(in, id, 0, 1, cost.peTransposeNs(s.P, s.F, dtypeOf(s) == DType::F32), cost.tensorLatencyNs(),
             float(s.F), float(s.P));
    return true;
  }
  default:
    break;
  }

  // Vector / Scalar / GpSimd instructions.
  for (unsigned i = 0; i < nsrc; ++i)
    if (!sameShape(vDst, vSrc[i], i == 0 ? "the first source" : "the second source"))
      return false;
  int64_t N = vDst.F;
  double factor = 1.0;
  switch (in.op) {
  case Opcode::TensorTensor: {
    bool onePsum = inSpace(vSrc[0], MemSpace::PSUM) != inSpace(vSrc[1], MemSpace::PSUM);
    bool fastBf16 = !inSpace(vSrc[0], MemSpace::PSUM) && !inSpace(vSrc[1], MemSpace::PSUM) &&
                    dtypeOf(vSrc[0]) == DType::BF16 && dtypeOf(vSrc[1]) == DType::BF16 &&
                    dtypeOf(vDst) == DType::BF16 &&
                    (in.aluOp() == AluOp::Add || in.aluOp() == AluOp::Mul || in.aluOp() == AluOp::Sub);
    factor = (onePsum || fastBf16) ? 1.0 : 2.0; // TRN1.md §4.2 tensor_tensor
    break;
  }
  case Opcode::Memset:
    factor = (in.imm == 0.0 && dtypeOf(vDst) == DType::BF16) ? 0.5 : 1.0; // TRN1.md §4.2 memset
    break;
  default:
    break;
  }
  if (functional) {
    for (unsigned i = 0; i < nsrc; ++i)
      if (!checkInit(vSrc[i], i == 0 ? "the first source" : "the second source"))
        return false;
    size_t n = size_t(vDst.P * vDst.F);
    switch (in.op) {
    case Opcode::Activation: {
      gather(vSrc[0], tA);
      ActFn f = in.actFn();
      float sc = float(in.scale), bi = float(in.bias);
      for (size_t i = 0; i < n; ++i)
        tA[i] = float(applyActFn(f, double(tA[i] * sc + bi)));
      scatter(vDst, tA.data());
      break;
    }
    case Opcode::TensorTensor:
      gather(vSrc[0], tA);
      gather(vSrc[1], tB);
      for (size_t i = 0; i < n; ++i)
        tA[i] = applyAluOp(in.aluOp(), tA[i], tB[i]);
      scatter(vDst, tA.data());
      break;
    case Opcode::TensorScalar: {
      gather(vSrc[0], tA);
      float imm = float(in.imm);
      for (size_t i = 0; i < n; ++i)
        tA[i] = applyAluOp(in.aluOp(), tA[i], imm);
      scatter(vDst, tA.data());
      break;
    }
    case Opcode::Copy:
      gather(vSrc[0], tA);
      scatter(vDst, tA.data());
      break;
    case Opcode::Memset:
      tA.assign(n, float(in.imm));
      scatter(vDst, tA.data());
      break;
    default:
      break;
    }
  }
  // Back-to-back dependent: a source was written by this engine's previous instruction.
  int unit = int(in.engine);
  bool dependent = false;
  for (unsigned i = 0; i < nsrc && !dependent; ++i)
    if (vSrc[i].isBuffer) {
      dependent = trackers[vSrc[i].obj].writtenBy(vSrc[i].rect, unit, unitFree[unit]);
      for (uint32_t a : aliases[vSrc[i].obj])
        dependent = dependent || trackers[a].writtenBy(vSrc[i].rect, unit, unitFree[unit]);
    }
  schedule(in, id, unit, nsrc, cost.engineNs(in.engine, N, factor, dependent), 0.0, float(vDst.P), float(N));
  return true;
}

void Machine::finishReport(SimResult &res, double simSeconds) {
  Report &r = rep;
  r.kernel = P.kernel;
  r.target = T.name;
  r.functional = functional;
  r.latencyNs = makespan;
  r.peakFlopsPerSec = T.peakBf16Flops();
  double secs = makespan * 1e-9;
  r.mfu = secs > 0 ? double(r.flops) / (secs * r.peakFlopsPerSec) : 0.0;
  r.hfu = secs > 0 ? double(r.flops + r.transposeFlops) / (secs * r.peakFlopsPerSec) : 0.0;
  r.tensorEngineActivePct = makespan > 0 ? 100.0 * unitBusy[0] / makespan : 0.0;
  for (const BufferDecl &b : P.buffers) {
    if (b.space == MemSpace::SBUF)
      r.sbufPeakBytesPerPartition = std::max(r.sbufPeakBytesPerPartition, b.endAddress());
    else
      r.psumPeakBytesPerPartition = std::max(r.psumPeakBytesPerPartition, b.endAddress());
  }
  r.sbufPeakBytes = r.sbufPeakBytesPerPartition * T.sbuf_partitions;
  r.psumPeakBytes = r.psumPeakBytesPerPartition * T.sbuf_partitions;
  r.sbufCapacityBytes = T.sbufCapacityBytes();
  r.psumCapacityBytes = T.psumCapacityBytes();
  const char *names[] = {"tensor", "vector", "scalar", "gpsimd"};
  r.engines.clear();
  uint64_t total = 0;
  for (int u = 0; u < NumComputeUnits; ++u) {
    r.engines.push_back({names[u], unitCount[u], unitBusy[u]});
    total += unitCount[u];
  }
  // DMA: time with at least one transfer in flight (union over queues).
  std::sort(dmaIntervals.begin(), dmaIntervals.end());
  double dmaBusy = 0, cs = -1, ce = -1;
  for (auto &iv : dmaIntervals) {
    if (iv.first > ce) {
      if (ce > cs)
        dmaBusy += ce - cs;
      cs = iv.first;
      ce = iv.second;
    } else {
      ce = std::max(ce, iv.second);
    }
  }
  if (ce > cs)
    dmaBusy += ce - cs;
  uint64_t dmaCount = 0;
  for (unsigned q = 0; q < unsigned(T.dma_queues); ++q) {
    unsigned u = NumComputeUnits + q;
    dmaCount += unitCount[u];
    if (unitCount[u])
      r.queues.push_back({q, unitCount[u], queueBytes[q], unitBusy[u]});
  }
  r.engines.push_back({"dma", dmaCount, dmaBusy});
  r.dmaTransfers = dmaCount;
  r.dynamicInstructions = total + dmaCount;
  r.hbmBandwidthGBs = T.hbm_bandwidth_gbs;
  uint64_t hbm = r.hbmReadBytes + r.hbmWriteBytes;
  r.mbu = makespan > 0 ? double(hbm) / makespan / T.hbm_bandwidth_gbs : 0.0;
  r.arithmeticIntensity = hbm ? double(r.flops) / double(hbm) : 0.0;
  r.simSeconds = simSeconds;
  // Hotspots: the static instructions with the most busy time.
  for (const auto &[id, busyNs] : dmaBusyPerInstr.lengths())
    perInstr[id].busyNs = busyNs;
  std::vector<uint32_t> order;
  for (uint32_t i = 0; i < perInstr.size(); ++i)
    if (perInstr[i].count)
      order.push_back(i);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return perInstr[a].busyNs != perInstr[b].busyNs ? perInstr[a].busyNs > perInstr[b].busyNs : a < b;
  });
  if (order.size() > Report::MaxHotspots)
    order.resize(Report::MaxHotspots);
  for (uint32_t i : order) {
    const Instr &in = P.instrs[i];
    std::string unit = in.engine == Engine::Dma ? "dma.q" + std::to_string(in.queue) : engineName(in.engine).str();
    if (in.engine == Engine::Dma && in.queueSpan > 1)
      unit += "-" + std::to_string(in.queue + in.queueSpan - 1);
    r.hotspots.push_back({in.loc.line, instrName(in), unit, perInstr[i].count, perInstr[i].busyNs,
                          perInstr[i].waitNs});
  }
  res.report = r;
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
  if (functional) {
    uint64_t elems = 0;
    for (const TensorDecl &t : P.tensors)
      elems += uint64_t(t.numElements());
    if (elems > kMaxFunctionalElems)
      return createStringError(inconvertibleErrorCode(),
                               "%s: error: the HBM tensors hold %llu elements, more than the functional "
                               "simulator's limit of %llu; use --timing-only",
                               P.locString({}).c_str(), (unsigned long long)elems,
                               (unsigned long long)kMaxFunctionalElems);
  }
  setupObjects();
  if (!loadInputs(res) || !execBody(P.body))
    return createStringError(inconvertibleErrorCode(), errMsg);
  cur = nullptr;
  if (functional) {
    for (size_t i = 0; i < P.tensors.size(); ++i) {
      const TensorDecl &t = P.tensors[i];
      if (t.role != TensorRole::Output)
        continue;
      size_t unwritten = size_t(std::count(tenInit[i].begin(), tenInit[i].end(), uint8_t(0)));
      if (unwritten)
        rep.warnings.push_back(formatv("output %{0}: {1} of {2} elements were never written (they read as 0)",
                                       t.name, unwritten, tenInit[i].size())
                                   .str());
      res.outputs.push_back(TensorData{t.name, t.dtype, t.shape, std::move(tenData[i])});
    }
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  finishReport(res, secs);
  if (functional && !O.outputDir.empty()) {
    if (std::error_code ec = sys::fs::create_directories(O.outputDir))
      return createStringError(ec, "cannot create output directory '%s': %s", O.outputDir.c_str(),
                               ec.message().c_str());
    for (const TensorData &t : res.outputs) {
      SmallString<256> path(O.outputDir);
      sys::path::append(path, t.name + ".npy");
      if (Error e = writeNpy(path, t.shape, t.data))
        return e;
    }
  }
  if (!O.tracePath.empty()) {
    if (O.recordTimeline && trace.size() > O.traceMaxEvents) {
      std::vector<TraceEvent> capped(trace.begin(), trace.begin() + long(O.traceMaxEvents));
      if (Error e = writeChromeTrace(O.tracePath, P, res.report, capped, trace.size() - capped.size()))
        return e;
    } else if (Error e = writeChromeTrace(O.tracePath, P, res.report, trace, traceDropped)) {
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
#if defined(OPENBLAS_VERSION)
  // Tile products are small (at most 128 x 128 x 512): OpenBLAS's threads only
  // spin and yield on them, so the functional simulation runs BLAS on one
  // thread and restores the caller's setting afterwards.
  if (!opts.timingOnly) {
    int saved = openblas_get_num_threads();
    openblas_set_num_threads(1);
    Expected<SimResult> r = m.run();
    openblas_set_num_threads(saved);
    return r;
  }
#endif
  return m.run();
}

} // namespace tessel::runtime

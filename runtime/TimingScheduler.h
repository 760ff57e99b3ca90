//===- runtime/TimingScheduler.h - Places instructions in time --*- C++ -*-===//
//
// Internal to the runtime. The discrete-event timing model (Timing.h) applied
// to a program's dynamic instructions in program order: each instruction,
// given as checked tile views, gets its cost from the target, waits for its
// unit and its hazards (RegionTracker), shared ports and the DMA bandwidth
// calendar, and is counted in the report's timing figures, hotspots and
// trace. It knows nothing of the numbers.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_TIMINGSCHEDULER_H
#define TESSEL_RUNTIME_TIMINGSCHEDULER_H

#include "runtime/ChunkedQueue.h"
#include "runtime/Horizon.h"
#include "runtime/Program.h"
#include "runtime/Report.h"
#include "runtime/Simulator.h"
#include "runtime/Target.h"
#include "runtime/TileView.h"
#include "runtime/Timing.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Compiler.h"

#include <cstdint>
#include <vector>

namespace tessel::runtime {

class TimingScheduler {
public:
  /// Per instruction: executions, busy and wait time, HBM bytes moved.
  using InstrStats = InstrTotals;
  /// flops, transpose flops, HBM read/write, spill save/reload, traffic by purpose
  static constexpr int NumCounters = 10;

  /// tensor, vector, scalar, gpsimd; DMA queue q is unit NumComputeUnits + q.
  static constexpr int NumComputeUnits = 4;

  /// `recording`: keep trace events, at most `maxEvents` unless `keepAll`.
  TimingScheduler(const Program &P, const Target &T, bool recording, bool keepAll, size_t maxEvents);

  /// The hazard-tracking object of a tensor, and of one slot of a buffer.
  uint32_t tensorObject(uint32_t tensor) const { return tensor; }
  uint32_t slotObject(uint32_t buffer, int64_t slot) const { return slotObj[buffer] + uint32_t(slot); }

  /// Slot `slot` of `buffer` gets a new occupant (an `alloc`): it may be
  /// accessed only once every access to its previous occupant has ended.
  void reuseSlot(uint32_t buffer, int64_t slot);
  /// A transfer between HBM tile `hbm` and buffer tile `sb` (load: into sb).
  void dma(const Instr &in, uint32_t id, const TileView &hbm, const TileView &sb, bool load);
  /// srcs[0] is the stationary operand, srcs[1] the moving one.
  void matmul(const Instr &in, uint32_t id, const TileView &dst, const TileView *srcs);
  void transpose(const Instr &in, uint32_t id, const TileView &dst, const TileView &src);
  /// A VectorE / ScalarE / GpSimdE instruction over `nsrc` sources.
  void engineOp(const Instr &in, uint32_t id, const TileView &dst, const TileView *srcs, unsigned nsrc);
  /// Called after each dynamic instruction `id`: forgets, now and then, what
  /// can delay nothing any more.
  void instructionDone(uint32_t id) {
    if (++sinceSweep >= sweepEvery)
      sweep(id);
  }

  // ---- loop fast-forward (FastForward.h) ----

  /// The timing state a loop's iteration boundary is compared by: the
  /// counters, per unit and per instruction of the loop body (`body`, sorted
  /// ids; `bodyDma` the DMA ones), and the position in the log of hazard
  /// records.
  struct Mark {
    std::vector<double> unitFree, unitBusy;
    std::vector<uint64_t> unitCount, queueBytes;
    std::vector<double> queueEnd;
    uint64_t counters[NumCounters] = {};
    std::vector<InstrStats> body;
    std::vector<double> dmaLength; ///< per bodyDma instruction: its busy union
    double dmaBusyLength = 0, reserved = 0, makespan = 0;
    bool haveStationary = false;
    uint32_t lastStatObj = 0;
    Rect lastStatRect;
    double tensorWarmNs = 0;
    uint64_t logPos = 0;
    /// The shared resources' uses ending after `cut` (the least free time
    /// of the loop's units), relative to it and clipped at it: the
    /// bandwidth calendar, then each compute unit's port uses. Empty with
    /// `tailsTooLong`. A use that began before `cut` counts from `cut`: no
    /// unit of the loop can start earlier, and skipping repeats only what
    /// lies after `cut` (repeatPeriods), so a saturated calendar's one long
    /// busy interval, begun periods ago, does not keep the loop unsettled.
    double cut = 0;
    std::vector<std::pair<double, double>> tails;
    std::vector<uint32_t> tailSizes;
    bool tailsTooLong = false;
  };
  /// `units`: the units the loop body may use; shared-resource tails longer
  /// than `maxTail` in all are not kept (and the mark compares unequal).
  void mark(Mark &m, llvm::ArrayRef<uint32_t> body, llvm::ArrayRef<uint32_t> bodyDma,
            llvm::ArrayRef<uint32_t> units, size_t maxTail) const;
  /// Whether nothing recorded before the period from `b` to `c` (which
  /// repeated the one from `a`) would delay the moving accesses of `k` more
  /// such periods: work the program issued earlier but that runs later may
  /// hold regions a steady loop has not met yet.
  bool futureClear(const Mark &a, const Mark &b, const Mark &c, double delta, uint64_t k) const;
  /// Whether the period from `b` to `c` repeated the one from `a` to `b`,
  /// every unit's time moving by the same `delta` (> 0).
  bool samePeriods(const Mark &a, const Mark &b, const Mark &c, double &delta) const;
  /// Advances the state by `k` more periods like the one from `b` to `c`
  /// (which repeated the one from `a`): counters exactly, times by k * delta.
  void skipPeriods(const Mark &a, const Mark &b, const Mark &c, llvm::ArrayRef<uint32_t> body,
                   llvm::ArrayRef<uint32_t> bodyDma, double delta, uint64_t k);
  /// Keeps the log of hazard records (while a loop is watched); turned off,
  /// the log is dropped.
  void setLogging(bool on);
  /// Stops adding records to the log but keeps those in it (a watch about to
  /// skip and finish reads its periods' records; what the skip records is
  /// read by no one).
  void pauseLogging() { logging = false; }
  /// The log before position `pos` is no longer needed.
  void trimLog(uint64_t pos);

  /// The report's timing, traffic and occupancy figures and hotspots.
  /// The report of what ran, its latency including `launchOverheadNs`
  /// (the target's launch term for the latency asked for).
  Report report(double launchOverheadNs = 0) const;
  std::vector<TraceEvent> &events() { return trace; }
  uint64_t droppedEvents() const { return traceDropped; }

private:
  const Program &P;
  const Target &T;
  InstructionCosts cost;
  bool recording, keepAll;
  size_t maxEvents;

  // memory objects: [0, nTensors) are tensors, then buffer slots
  std::vector<uint32_t> slotObj;
  std::vector<RegionTracker> trackers;
  std::vector<std::vector<uint32_t>> aliases;
  /// Of each object's aliases, those whose records may still delay an
  /// access (any order: the queries take maxima): an object joins its
  /// aliases' lists when it is recorded into, and leaves them at a sweep
  /// once all its records end before every unit that may still run is free.
  std::vector<std::vector<uint32_t>> liveAliases;
  std::vector<uint8_t> liveObject; ///< per object: whether in its aliases' liveAliases
  void revive(uint32_t obj);
  void retireIdle(uint32_t id);
  std::vector<uint8_t> trackTensor; ///< per tensor: whether it is ever written

  std::vector<double> unitFree, unitBusy;
  std::vector<uint64_t> unitCount;
  std::vector<uint64_t> queueBytes;
  std::vector<double> queueEnd; ///< per DMA queue: when its last transfer completes
  IntervalUnion dmaBusy; ///< time with at least one transfer in flight
  /// Per DMA instruction, the time any of its transfers is in flight: the
  /// hotspot's busy time (its transfers overlap, on several queues and on
  /// one, so their sum could exceed the latency).
  /// Indexed by instruction; one holds intervals once it has run.
  std::vector<IntervalUnion> dmaInstrBusy;
  std::vector<uint32_t> dmaInstrs; ///< the DMA instructions' ids
  /// per compute unit, when shared ports are modelled
  PortUses psumPort[NumComputeUnits], sbufPort[NumComputeUnits];
  BandwidthCalendar shared;
  double makespan = 0;
  bool haveStationary = false;
  uint32_t lastStatObj = 0;
  Rect lastStatRect;
  /// TensorE's busy time since it last went cold (InstructionCosts::tensorThrottledNs).
  double tensorWarmNs = 0;
  /// Whether TensorE, fully warm, stays so through `busyNs` after `idleNs`:
  /// tensorThrottledNs would return busyNs unchanged and keep tensorWarmNs
  /// (a warm-up of 0, the default, is never left).
  bool warmAndStaysWarm(double busyNs, double idleNs) const {
    return throttleExact && tensorWarmNs == T.tensor_warmup_ns && busyNs > 0 &&
           (T.tensor_warmup_ns == 0 || !(idleNs > 0 && idleNs >= T.tensor_throttle_idle_ns));
  }
  bool throttleExact = false; ///< the target's warm-up figures are finite
  double tensorLatencyNs = 0;
  /// Per static instruction: whether a TensorE operand is f32 (its operands
  /// are the same objects in every execution).
  std::vector<uint8_t> fp32Operands;

  // Forgetting the intervals that can delay nothing any more (Horizon.h)
  // keeps memory bounded by the live state (the trackers bound their own
  // records). A sweep costs the live state's size, so one runs after at
  // least that many instructions.
  UnitHorizon horizon;
  size_t sinceSweep = 0, sweepEvery = MinSweepInterval;
  static constexpr size_t MinSweepInterval = 4096;
  void sweep(uint32_t id);

  /// Per static instruction, its last cost and the arguments it was computed
  /// from: an instruction's tiles mostly keep their shape, so the cost model
  /// runs once per shape rather than once per execution.
  struct LastCost {
    int64_t args[4] = {-1, -1, -1, -1};
    double ns = 0;
    InstructionCosts::DmaCost dma{};
    /// Whether the cost is that of `a`; if not, records `a` (the caller
    /// then sets the cost).
    bool same(int64_t a0, int64_t a1, int64_t a2, int64_t a3) {
      if (args[0] == a0 && args[1] == a1 && args[2] == a2 && args[3] == a3)
        return true;
      args[0] = a0, args[1] = a1, args[2] = a2, args[3] = a3;
      return false;
    }
  };
  std::vector<LastCost> lastCost;

  /// flops, traffic and spill counters
  Report counts;
  uint64_t *counter(int i);
  uint64_t counter(int i) const { return *const_cast<TimingScheduler *>(this)->counter(i); }
  std::vector<InstrStats> perInstr;

  /// Hazard records made while a loop is watched, for fast-forward to repeat
  /// them at the positions the skipped periods would have used.
  struct TrackOp {
    uint32_t obj;
    int16_t unit;
    bool write;
    Rect rect;
    double time;
    double start; ///< when the instruction started
  };
  bool logging = false;
  ChunkedQueue<TrackOp> log;
  uint64_t logBase = 0; ///< position of log[0]
  // The per-access paths below are inlined into each instruction's
  // scheduling (several calls per instruction: their calls cost as much as
  // their work).
  template <bool Write>
  LLVM_ATTRIBUTE_ALWAYS_INLINE void recordAccess(uint32_t obj, const Rect &r, double t, int unit, double start) {
    if (!liveObject[obj])
      revive(obj);
    if (Write)
      trackers[obj].recordWrite(r, t, unit);
    else
      trackers[obj].recordRead(r, t, unit);
    if (logging)
      log.push_back({obj, int16_t(unit), Write, r, t, start});
  }
  void recordRead(uint32_t obj, const Rect &r, double t, int unit, double start) {
    recordAccess<false>(obj, r, t, unit, start);
  }
  void recordWrite(uint32_t obj, const Rect &r, double t, int unit, double start) {
    recordAccess<true>(obj, r, t, unit, start);
  }
  std::vector<TraceEvent> trace;
  uint64_t traceDropped = 0;

  bool inSpace(const TileView &v, MemSpace s) const { return v.isBuffer && P.buffers[v.id].space == s; }
  DType dtypeOf(const TileView &v) const {
    return v.isBuffer ? P.buffers[v.id].dtype : P.tensors[v.id].dtype;
  }
  bool tracked(const TileView &v) const { return v.isBuffer || trackTensor[v.id]; }
  /// When `v`'s region (and every object aliasing it) is ready for `unit`
  /// to read it (`Write`: to write it), or `floor` if later.
  template <bool Write> LLVM_ATTRIBUTE_ALWAYS_INLINE double ready(const TileView &v, int unit, double floor) const;
  /// Of a TensorE instruction starting at `start`, the time between its
  /// first and its last operand's arrival after the engine was free.
  double operandWaitNs(int unit, const TileView *srcs, double start) const;
  /// `dst2`: a second tile it writes (an activation's accumulator).
  void schedule(uint32_t id, int unit, const TileView &dst, const TileView *srcs, unsigned nsrc, double busyNs,
                double latencyNs, float rows, float cols, const TileView *dst2 = nullptr);
  void record(uint32_t id, int unit, float rows, float cols, double start, double dur, double queued = 0);
};

} // namespace tessel::runtime

#endif

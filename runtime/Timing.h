//===- runtime/Timing.h - Timing model building blocks ----------*- C++ -*-===//
//
// Internal to the runtime. The discrete-event timing model (docs/tasm.md,
// "Timing model"):
//  * every execution unit (TensorE, VectorE, ScalarE, GpSimdE, each DMA queue)
//    runs its instructions in program order, one at a time;
//  * an instruction starts when its unit is free and every hazard on the
//    regions it touches is resolved: RAW (it waits for the last writer of any
//    overlapping region it reads), WAW and WAR (it waits for the last writer
//    and the last readers of any region overlapping the one it writes) --
//    exactly the semaphores a compiler would insert. Hazards between two
//    instructions of the same unit are covered by the unit's in-order
//    execution;
//  * DMA transfers share one bandwidth resource (HBM share / DMA engine pool),
//    modelled as a calendar of reserved time: a transfer's data needs
//    bytes / (shared bandwidth * efficiency) of exclusive time, taken from the
//    earliest free gaps after its fixed latency, so the fixed latency overlaps
//    across queues but the bytes can never beat the bandwidth.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_TIMING_H
#define TESSEL_RUNTIME_TIMING_H

#include "runtime/Program.h"
#include "runtime/RegionTracker.h"
#include "runtime/Target.h"

#include "llvm/ADT/ArrayRef.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace tessel::runtime {

/// Exclusive-use calendar of a shared bandwidth resource.
class BandwidthCalendar {
public:
  /// Reserves `amount` ns of the resource starting no earlier than `t0`,
  /// filling free gaps first; returns the time the last piece finishes.
  double reserve(double t0, double amount);
  double totalReserved() const { return reserved; }
  const std::vector<std::pair<double, double>> &intervals() const { return busy; }
  /// Loop fast-forward (FastForward.h): the reservations as `k` more periods
  /// of length `period` would leave them (what [cut, cut + period) holds is
  /// repeated, what follows moves k periods later), `reservedMore` ns more
  /// reserved.
  void repeatPeriods(double cut, double period, uint64_t k, double reservedMore);
  static constexpr size_t MaxIntervals = 2048;

private:
  std::vector<std::pair<double, double>> busy; // sorted, disjoint
  double reserved = 0;
};

/// Length of the union of intervals added in any order, as if they were
/// sorted and merged at the end (touching intervals merge; lengths summed
/// left to right), holding only the components that may still grow.
class IntervalUnion {
public:
  void add(double start, double end);
  /// Closes the components that end before `horizon`: no interval added
  /// later may start before it.
  void forget(double horizon);
  double length() const;
  /// length() kept up to date as intervals are added (summed in another
  /// order, so it may differ from length() in the last bits): O(1).
  double lengthEstimate() const { return closed + openLength; }
  size_t size() const { return open.size(); }
  /// Loop fast-forward: moves the components ending at or after `cut` later
  /// by `d` (one that starts before `cut` keeps its start) and sets the
  /// length to what it was plus `grown`.
  void shiftFrom(double cut, double d, double grown);

private:
  /// (start, end) sorted by start, disjoint and not touching: few, as
  /// forget() closes the old ones, so a vector beats a tree.
  std::vector<std::pair<double, double>> open;
  using Iter = std::vector<std::pair<double, double>>::iterator;
  Iter firstAfter(double t) {
    return std::upper_bound(open.begin(), open.end(), t, [](double x, const auto &iv) { return x < iv.first; });
  }
  double closed = 0, openLength = 0;
};

/// The busy intervals of one in-order unit on a shared port (added in time
/// order, so sorted and disjoint).
class PortUses {
public:
  void add(double start, double end) { uses.emplace_back(start, end); }
  /// Earliest t >= start such that [t, t + dur) overlaps none of the uses.
  double fitAround(double start, double dur) const;
  /// Drops the uses that end before `horizon`: no later query starts earlier.
  void forget(double horizon);
  size_t size() const { return uses.size() - head; }
  llvm::ArrayRef<std::pair<double, double>> live() const { return llvm::makeArrayRef(uses).drop_front(head); }
  /// Loop fast-forward: the uses as `k` more periods would leave them
  /// (BandwidthCalendar::repeatPeriods).
  void repeatPeriods(double cut, double period, uint64_t k);
  static constexpr size_t MaxRepeated = 4096;

private:
  std::vector<std::pair<double, double>> uses;
  size_t head = 0; ///< uses before it are forgotten
};

/// Per-instruction costs in nanoseconds, from the target only.
struct InstructionCosts {
  const Target &t;
  explicit InstructionCosts(const Target &t) : t(t) {}

  /// Matmul busy time: II = max(min(MIN_II, M), N) cycles (x fp32 slowdown),
  /// and at least the background LoadStationary time M / ls_cols_per_cycle
  /// when the stationary operand changes.
  double matmulNs(int64_t K, int64_t M, int64_t N, bool fp32, bool newStationary) const;
  /// TensorE transpose of an [P, F] tile: max(P, min(MIN_II, F)) cycles.
  double peTransposeNs(int64_t P, int64_t F, bool fp32) const;
  double tensorLatencyNs() const { return t.tensor_pipeline_latency_cycles / t.tensor_clock_ghz; }
  /// TensorE warm-up after idle gaps (docs/calibration.md, "TensorE
  /// throttling"): an instruction of `nominalNs` that starts `idleNs` after
  /// TensorE's previous one ended. `warmNs` is TensorE's busy time since it
  /// last went cold (0 at the start of a kernel); an idle gap of at least
  /// tensor_throttle_idle_ns makes it cold again. Until it has been busy
  /// for tensor_warmup_ns it runs at tensor_throttle_rate. Returns the
  /// instruction's busy time and advances `warmNs`.
  double tensorThrottledNs(double nominalNs, double idleNs, double &warmNs) const;
  /// Vector/Scalar/GpSimd instruction over N elements per partition with a
  /// per-element cost factor: overhead + max(MIN_II, factor * N / elems_per_cycle) cycles,
  /// plus the dependent overhead when it reads its own engine's previous result.
  double engineNs(Engine e, int64_t N, double factor, bool dependent = false) const;
  /// GpSimd iota / affine_select over N elements per partition: overhead +
  /// gpsimd_start_cycles + N / elems_per_cycle cycles (+ the dependent overhead).
  double gpsimdGenerateNs(int64_t N, bool dependent) const;
  /// `cycles` of engine `e` in ns.
  double engineCyclesNs(Engine e, double cycles) const;
  /// DMA: returns {per-transfer rate (bytes/ns), shared-resource occupancy (ns)}.
  struct DmaCost {
    double rate;      ///< bytes/ns this transfer alone can reach
    double occupancy; ///< ns of exclusive shared-bandwidth time
    double efficiency;
  };
  DmaCost dma(int64_t bytes, int64_t partitions, int64_t chunkBytes, bool transpose) const;
};

} // namespace tessel::runtime

#endif

//===- passes/analysis/KernelCost.h - Static cost of a tile-IR kernel -*- C++ -*-===//
//
// What a kernel costs, read off its tile IR without simulating it: every
// instruction's work and every DMA's bytes weighted by the trip counts of the
// loops around it, and the on-chip buffers live at the most crowded point.
// General over any kernel the pipeline builds (any chain, SwiGLU, partial
// tiles), so it describes the kernel "as the pipeline will build it". Used by
// select-blocks and the tuner (pruning and the model's predicted latency).
// Definitions, and what is exact and what is a bound: docs/cost-models.md.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_PASSES_ANALYSIS_KERNELCOST_H
#define TESSEL_PASSES_ANALYSIS_KERNELCOST_H

#include "ir/Kernel.h"
#include "runtime/Target.h"

#include <algorithm>
#include <cstdint>

namespace tessel::passes::analysis {

struct KernelCost {
  uint64_t flops = 0;             ///< 2*rows*cols*contraction over matmuls (as the simulator counts)
  uint64_t transposeFlops = 0;    ///< TensorE transposes, counted as the simulator does
  uint64_t hbmReadBytes = 0;      ///< all DMA reads of HBM, spill reloads included
  uint64_t hbmWriteBytes = 0;     ///< all DMA writes to HBM, spill saves included
  uint64_t spillSaveBytes = 0, spillReloadBytes = 0;
  /// DMA bytes of scratch tensors: intermediates handed between nests
  /// through HBM (an MLP's two-kernel form writes and reads h^T).
  uint64_t scratchBytes = 0;
  /// Placed peak if allocated, else the peak `allocate` will place: its
  /// phases prefetching (passes/BufferLiveness.h, PhaseSharing) when that
  /// fits the target's SBUF, else sharing.
  int64_t sbufPeakBytesPerPartition = 0;
  /// The least peak, with phases sharing addresses: what decides whether a
  /// kernel fits (allocate gives prefetching up before it spills).
  int64_t sbufLeastPeakBytesPerPartition = 0;
  int64_t psumPeakBytesPerPartition = 0;
  /// SBUF buffers refilled from HBM on every iteration of their loop with a
  /// single copy: each fill waits for the previous copy's last reader, so
  /// the loads cannot run ahead (`schedule` double-buffers those that fit).
  int64_t serialFills = 0;
  /// The fills of those buffers, their transfers at the rates they reach
  /// spread over their queues: time no other work hides, since each fill
  /// starts only once the previous copy's last reader is done (and the
  /// first reader waits for it). Part of predictedUs, added to phasedNs.
  double serialFillNs = 0;
  /// Tensor-engine busy time: every matmul and transpose at its issue
  /// interval (runtime::InstructionCosts), stationary loads assumed free.
  double tensorBusyNs = 0;
  /// Vector- and scalar-engine busy time: every copy, memset, activation and
  /// elementwise op at its cost (runtime::InstructionCosts::engineNs, the
  /// back-to-back dependence overhead left out), and the part of each that
  /// reads or writes PSUM (on targets where the two engines share PSUM's
  /// port those parts add up).
  double vectorBusyNs = 0, scalarBusyNs = 0;
  double vectorPsumNs = 0, scalarPsumNs = 0;
  /// The busiest DMA queue at the least: the transfers (fixed cost + bytes
  /// at the best rate one transfer can reach) of the statements sharing a
  /// queue group, spread evenly over the group's queues.
  double dmaQueueNs = 0;
  /// Σ over the kernel's top-level loop nests of each nest's own bound: the
  /// latency if each nest waited for the one before (they communicate
  /// through HBM). An estimate, not a bound -- independent nests overlap --
  /// and the tuner's predicted latency.
  double sequentialNestsNs = 0;
  /// The busiest DMA queue as the simulator charges it: each transfer's
  /// fixed cost and its bytes at the rate its size, partitions and
  /// contiguous run reach (not the best rate, as dmaQueueNs), or the shared
  /// bandwidth's time held by all transfers, whichever is longer. An
  /// estimate, not a bound, and part of predictedUs.
  double dmaEstimateNs = 0;
  /// Σ over the phases of the top-level loops (the ops of a loop's body: a
  /// strip's fill, the producer's nest, the consumer's nest) of each phase's
  /// own estimate over all iterations, max(tensor busy, DMA at the
  /// transfers' rates, vector and scalar busy): the latency when the phases of one iteration run
  /// one after another (each waits for the strip the one before writes).
  /// An estimate, not a bound, and part of predictedUs.
  double phasedNs = 0;

  uint64_t hbmBytes() const { return hbmReadBytes + hbmWriteBytes; }
  /// flops / HBM bytes (flop per byte); 0 when the kernel moves nothing.
  double arithmeticIntensity() const;
  /// max(flops / peak bf16 flops, HBM bytes / HBM bandwidth), in microseconds:
  /// a lower bound on any simulated latency of this kernel on `target`.
  double rooflineUs(const runtime::Target &target) const;
  /// max(roofline, tensor busy, DMA queue time), in microseconds: a tighter
  /// lower bound on the simulated latency (each term is work one in-order
  /// unit or the shared HBM must do).
  double boundUs(const runtime::Target &target) const;
  /// The model's latency estimate: max(bound, nests one after another, the
  /// DMA queues at their transfers' rates, phases one after another plus
  /// the serial fills), us.
  double predictedUs(const runtime::Target &target) const {
    return std::max({boundUs(target), sequentialNestsNs * 1e-3, dmaEstimateNs * 1e-3,
                     (phasedNs + serialFillNs) * 1e-3});
  }
};

/// The static cost of `kernel` (allocated or not).
KernelCost analyzeKernel(const ir::Kernel &kernel, const runtime::Target &target);

/// analyzeKernel(kernel).sbufLeastPeakBytesPerPartition alone, for the
/// passes that check a rewrite still fits (a fraction of the whole cost's
/// time).
int64_t sbufLeastPeakBytesPerPartition(const ir::Kernel &kernel);

/// "AI 455.1 flop/B, SBUF peak 150.0 KiB (78%), PSUM peak ..., roofline ...
/// us, engine bound ... us": a candidate's predictions as the notes give them.
std::string describeCost(const KernelCost &cost, const runtime::Target &target);

/// The SBUF bytes per partition a chosen block may use (Policy's headroom
/// kept free).
int64_t plannerSbufLimit(const runtime::Target &target);

} // namespace tessel::passes::analysis

#endif

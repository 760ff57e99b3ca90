//===- runtime/Collective.h - Cost of a collective between NeuronCores -*- C++ -*-===//
//
// The AllReduce that combines tensor-parallel partial sums (frontend/
// Partition.h) between the NeuronCores of one chip. The cores share the chip's
// HBM, so a core-to-core step is a DMA transfer between HBM buffers; the cost
// is built from the target's documented DMA and engine figures only (no
// collective-specific parameter is published for on-chip transfers):
//
//   ring AllReduce over N cores of a B-byte buffer: reduce-scatter, then
//   all-gather, 2 (N - 1) steps; in each step every core moves one chunk of
//   B / N bytes from its neighbour's buffer (one DMA transfer: the fixed
//   latency, then the chunk read and written at the core's HBM share), and in
//   the N - 1 reduce-scatter steps adds it into its own on the vector engine
//   (fp32 adds over the partitions).
//
// A model, not a measurement: docs/tensor-parallel.md says what it leaves out
// (overlap of the steps with compute, the CC-cores of trn2).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_COLLECTIVE_H
#define TESSEL_RUNTIME_COLLECTIVE_H

#include "runtime/Target.h"

#include <cstdint>

namespace tessel::runtime {

struct CollectiveCost {
  int steps = 0;              ///< 2 (N - 1)
  int64_t chunkBytes = 0;     ///< B / N, rounded up
  double transferNs = 0;      ///< all steps' DMA time
  double reduceNs = 0;        ///< all reduce-scatter steps' vector-engine adds
  int64_t hbmBytesPerCore = 0; ///< read + written by each core
  double totalUs() const { return (transferNs + reduceNs) * 1e-3; }
};

/// Ring AllReduce of a `bytes`-byte buffer of `elementBytes`-byte elements
/// over `cores` NeuronCores of one chip (1 core: nothing to do).
CollectiveCost ringAllReduce(const Target &target, int cores, int64_t bytes, int elementBytes);

} // namespace tessel::runtime

#endif

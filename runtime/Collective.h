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
// Beyond one chip (cores = C per chip x K chips), hierarchically: a
// reduce-scatter among the C cores of each chip (C - 1 steps of B / C), a
// ring AllReduce of each core's B / C shard among the K chips over NeuronLink
// (2 (K - 1) steps of B / (C K); the C cores of a chip send at once and share
// the chip's link bandwidth, each step paying the DMA fixed latency), then an
// all-gather among the chip's cores (C - 1 steps of B / C).
//
// A model, not a measurement: docs/tensor-parallel.md says what it leaves out
// (overlap of the steps with compute, the CC-cores of trn2, the topology of
// the links beyond their per-chip bandwidth).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_COLLECTIVE_H
#define TESSEL_RUNTIME_COLLECTIVE_H

#include "runtime/Target.h"

#include "llvm/Support/Error.h"

#include <cstdint>

namespace tessel::runtime {

struct CollectiveCost {
  int steps = 0;              ///< 2 (N - 1) on one chip; 2 (C - 1) + 2 (K - 1) over K chips
  int64_t chunkBytes = 0;     ///< B / N, rounded up (the inter-chip steps' chunk)
  int chips = 1;              ///< K: the chips the cores span
  double linkNs = 0;          ///< of transferNs: the steps between chips
  double transferNs = 0;      ///< all steps' DMA time
  double reduceNs = 0;        ///< all reduce-scatter steps' vector-engine adds
  int64_t hbmBytesPerCore = 0; ///< read + written by each core
  double totalUs() const { return (transferNs + reduceNs) * 1e-3; }
};

/// Ring AllReduce of a `bytes`-byte buffer of `elementBytes`-byte elements
/// over `cores` NeuronCores (1 core: nothing to do); over more cores than a
/// chip has, the hierarchical form above (`cores` a multiple of the chip's).
CollectiveCost ringAllReduce(const Target &target, int cores, int64_t bytes, int elementBytes);

/// An error unless `cores` NeuronCores fit the target: 1 to a chip's cores,
/// or whole chips up to the largest instance's.
llvm::Error checkCoreCount(const Target &target, int64_t cores);

} // namespace tessel::runtime

#endif

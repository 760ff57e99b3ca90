//===- runtime/Collective.cpp - Cost of a collective between NeuronCores --===//
#include "runtime/Collective.h"

#include <algorithm>

namespace tessel::runtime {

CollectiveCost ringAllReduce(const Target &target, int cores, int64_t bytes, int elementBytes) {
  CollectiveCost c;
  if (cores <= 1 || bytes <= 0)
    return c;
  c.steps = 2 * (cores - 1);
  c.chunkBytes = (bytes + cores - 1) / cores;
  // Read the neighbour's chunk and write it into this core's buffer: both
  // through the core's share of the chip's HBM.
  const double stepNs = target.dma_fixed_latency_ns + 2.0 * double(c.chunkBytes) / target.hbmBytesPerNs();
  c.transferNs = c.steps * stepNs;
  // The add: chunk elements spread over the partitions, at the vector
  // engine's rate, never under its minimum issue interval.
  const double elementsPerPartition =
      double(c.chunkBytes / elementBytes) / double(target.sbuf_partitions);
  const double addCycles = std::max(target.engine_min_ii_cycles,
                                    elementsPerPartition / target.vector_elems_per_cycle) +
                           target.engine_access_overhead_cycles;
  c.reduceNs = (cores - 1) * addCycles / target.vector_clock_ghz;
  c.hbmBytesPerCore = int64_t(c.steps) * 2 * c.chunkBytes;
  return c;
}

} // namespace tessel::runtime

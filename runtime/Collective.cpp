//===- runtime/Collective.cpp - Cost of a collective between NeuronCores --===//
#include "runtime/Collective.h"

#include <algorithm>

namespace tessel::runtime {
namespace {

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// The vector engine's add of a `chunkBytes` chunk into a core's buffer:
/// elements spread over the partitions, never under the minimum issue interval.
double addNs(const Target &target, int64_t chunkBytes, int elementBytes) {
  const double elementsPerPartition = double(chunkBytes / elementBytes) / double(target.sbuf_partitions);
  const double cycles = std::max(target.engine_min_ii_cycles, elementsPerPartition / target.vector_elems_per_cycle) +
                        target.engine_access_overhead_cycles;
  return cycles / target.vector_clock_ghz;
}

/// One on-chip step: read the neighbour's chunk and write it into this
/// core's buffer, both through the core's share of the chip's HBM.
double onChipStepNs(const Target &target, int64_t chunkBytes) {
  return target.dma_fixed_latency_ns + 2.0 * double(chunkBytes) / target.hbmBytesPerNs();
}

} // namespace

CollectiveCost ringAllReduce(const Target &target, int cores, int64_t bytes, int elementBytes) {
  CollectiveCost c;
  if (cores <= 1 || bytes <= 0)
    return c;
  const int perChip = int(std::min<int64_t>(cores, target.neuron_cores_per_chip));
  const int chips = cores / perChip;
  c.chips = chips;
  if (chips == 1) {
    c.steps = 2 * (cores - 1);
    c.chunkBytes = ceilDiv(bytes, cores);
    c.transferNs = c.steps * onChipStepNs(target, c.chunkBytes);
    c.reduceNs = (cores - 1) * addNs(target, c.chunkBytes, elementBytes);
    c.hbmBytesPerCore = int64_t(c.steps) * 2 * c.chunkBytes;
    return c;
  }
  // Reduce-scatter and all-gather on each chip, each core then holding B / C.
  const int64_t shard = ceilDiv(bytes, perChip);
  const int onChipSteps = 2 * (perChip - 1);
  const double onChipNs = onChipSteps * onChipStepNs(target, shard);
  // The ring between chips on each core's shard; a chip's cores share its links.
  const int linkSteps = 2 * (chips - 1);
  c.chunkBytes = ceilDiv(shard, chips);
  const double linkBytesPerNs = target.chip_link_gbps; // GB/s = bytes/ns
  c.linkNs = linkSteps * (target.dma_fixed_latency_ns + double(perChip) * double(c.chunkBytes) / linkBytesPerNs);
  c.steps = onChipSteps + linkSteps;
  c.transferNs = onChipNs + c.linkNs;
  c.reduceNs = (perChip - 1) * addNs(target, shard, elementBytes) + (chips - 1) * addNs(target, c.chunkBytes, elementBytes);
  c.hbmBytesPerCore = int64_t(onChipSteps) * 2 * shard + int64_t(linkSteps) * 2 * c.chunkBytes;
  return c;
}

llvm::Error checkCoreCount(const Target &target, int64_t cores) {
  const int64_t perChip = target.neuron_cores_per_chip, most = perChip * target.chips_per_instance;
  if (cores >= 1 && (cores <= perChip || (cores % perChip == 0 && cores <= most)))
    return llvm::Error::success();
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "--tp %lld: target '%s' has %lld NeuronCores per chip and %lld chips per "
                                 "instance; give 1 to %lld, or a multiple of %lld up to %lld (whole chips)",
                                 (long long)cores, target.name.c_str(), (long long)perChip,
                                 (long long)target.chips_per_instance, (long long)perChip, (long long)perChip,
                                 (long long)most);
}

} // namespace tessel::runtime

//===- runtime/DmaModel.h - Cost of one DMA transfer ------------*- C++ -*-===//
//
// The DMA rules the Neuron documentation publishes (docs/hardware.md §4.3,
// docs/measurements.md §3), each a target field with its source:
//  * a transfer over P SBUF partitions runs on min(dma_engines,
//    ceil(P / dma_partitions_per_engine)) engines of dma_engine_bandwidth_gbs;
//  * its efficiency depends on the bytes per partition it moves (the
//    published rule: < 256 B severely overhead-bound, >= 2 KiB recommended,
//    >= 4 KiB near saturation): e = bpp / (bpp + runs * overhead), with runs
//    the contiguous pieces each partition's bytes come in (1 for a plain row
//    tile) and overhead = dma_descriptor_overhead_bytes; a transposing DMA
//    reaches dma_transpose_efficiency of that;
//  * every transfer pays dma_fixed_latency_ns before its data flows (a
//    latency: it overlaps across queues);
//  * each DMA engine "can process one DMA transfer at a time" and there is
//    "performance overhead at both DMA buffer and transfer levels"
//    (trainium_inferentia2_arch.rst): every engine a transfer runs on spends
//    dma_transfer_overhead_ns on it besides its bytes, so small transfers
//    keep the engines busy without moving data ("the engines spend more time
//    on overhead than on data movement", nki-dma-bandwidth-guide.rst);
//  * all transfers share the engine pool (dma_engines engines; a transfer
//    holds engines/dma_engines of it for its engine time) and the HBM share
//    hbm_bandwidth_gbs; the timeline model reserves the scarcer of the two
//    in a calendar (see Timing.h).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_DMAMODEL_H
#define TESSEL_RUNTIME_DMAMODEL_H

#include "runtime/Target.h"

#include <cstdint>

namespace tessel::runtime {

struct DmaTransfer {
  int64_t bytes = 0;           ///< bytes moved (HBM side)
  int64_t partitions = 1;      ///< SBUF partitions the transfer spans
  int64_t contiguousBytes = 0; ///< shortest contiguous run of either side; 0: one run per partition
  bool transpose = false;
};

struct DmaTiming {
  int64_t engines = 1;
  double bytesPerPartition = 0;
  double efficiency = 1;
  double rateBytesPerNs = 0; ///< what this transfer alone reaches on its engines
  double engineNs = 0;       ///< time each of its engines spends on it (overhead + its bytes)
  double occupancyNs = 0;    ///< exclusive time of the shared bandwidth it needs
  double fixedNs = 0;        ///< before data flows
  /// The transfer alone on an idle core: fixed cost + bytes / rate.
  double isolatedNs(int64_t bytes) const { return fixedNs + double(bytes) / rateBytesPerNs; }
};

class DmaModel {
public:
  explicit DmaModel(const Target &t) : t(t) {}
  int64_t enginesFor(int64_t partitions) const;
  /// Efficiency of a transfer moving `bytesPerPartition` in runs of
  /// `contiguousBytes` (0 or >= bytesPerPartition: one run).
  double efficiency(double bytesPerPartition, double contiguousBytes, bool transpose) const;
  /// Time one engine spends on a transfer's share of `bytesPerEngine`:
  /// dma_transfer_overhead_ns + bytes / (dma_engine_bandwidth_gbs * efficiency).
  double engineNs(double bytesPerEngine, double efficiency) const;
  /// Bandwidth all transfers share, bytes/ns.
  double sharedBytesPerNs() const;
  DmaTiming cost(const DmaTransfer &x) const;

private:
  const Target &t;
};

} // namespace tessel::runtime

#endif

//===- runtime/DmaModel.cpp - Cost of one DMA transfer ---------------------===//
#include "runtime/DmaModel.h"

#include <algorithm>
#include <cmath>

namespace tessel::runtime {

int64_t DmaModel::enginesFor(int64_t partitions) const {
  int64_t per = std::max<int64_t>(t.dma_partitions_per_engine, 1);
  int64_t engines = (std::max<int64_t>(partitions, 1) + per - 1) / per;
  return std::clamp<int64_t>(engines, 1, std::max<int64_t>(t.dma_engines, 1));
}

double DmaModel::efficiency(double bytesPerPartition, double contiguousBytes, bool transpose) const {
  double bpp = std::max(bytesPerPartition, 1.0);
  // Each partition is at least one DMA buffer; a partition whose bytes come
  // in several contiguous runs pays the per-buffer overhead once per run.
  double runs = contiguousBytes > 0 && contiguousBytes < bpp ? std::ceil(bpp / contiguousBytes) : 1.0;
  double e = bpp / (bpp + runs * t.dma_descriptor_overhead_bytes);
  return transpose ? e * t.dma_transpose_efficiency : e;
}

double DmaModel::sharedBytesPerNs() const { return std::min(t.hbmBytesPerNs(), t.dmaPoolBytesPerNs()); }

double DmaModel::engineNs(double bytesPerEngine, double efficiency) const {
  return t.dma_transfer_overhead_ns + bytesPerEngine / (t.dma_engine_bandwidth_gbs * efficiency);
}

DmaTiming DmaModel::cost(const DmaTransfer &x) const {
  DmaTiming c;
  c.engines = enginesFor(x.partitions);
  c.bytesPerPartition = double(x.bytes) / double(std::max<int64_t>(x.partitions, 1));
  c.efficiency = efficiency(c.bytesPerPartition, double(x.contiguousBytes), x.transpose);
  // Each of the transfer's engines moves its share of the bytes and spends
  // the per-transfer overhead on it (one transfer at a time per engine).
  c.engineNs = engineNs(double(x.bytes) / double(c.engines), c.efficiency);
  c.rateBytesPerNs = double(x.bytes) / c.engineNs;
  // Shared: the engine pool (this transfer holds engines/dma_engines of it
  // for engineNs) and the HBM share; the scarcer one binds. Without the
  // per-transfer overhead this is bytes / (min(pool, HBM) * efficiency).
  double poolNs = c.engineNs * double(c.engines) / double(std::max<int64_t>(t.dma_engines, 1));
  double hbmNs = double(x.bytes) / (t.hbmBytesPerNs() * c.efficiency);
  c.occupancyNs = std::max(poolNs, hbmNs);
  c.fixedNs = t.dma_fixed_latency_ns;
  return c;
}

} // namespace tessel::runtime

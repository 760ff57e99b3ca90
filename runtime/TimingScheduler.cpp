//===- runtime/TimingScheduler.cpp - Places instructions in time -----------===//
#include "runtime/TimingScheduler.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tessel::runtime {

TimingScheduler::TimingScheduler(const Program &P, const Target &T, bool recording, bool keepAll,
                                 size_t maxEvents)
    : P(P), T(T), cost(T), recording(recording), keepAll(keepAll), maxEvents(maxEvents),
      horizon(P, NumComputeUnits) {
  size_t nT = P.tensors.size();
  trackers.assign(nT, RegionTracker());
  trackTensor.assign(nT, false);
  for (const Instr &in : P.instrs)
    if (in.op == Opcode::Dma && in.dst.isTensor())
      trackTensor[in.dst.id] = true; // never-written tensors (inputs) need no hazard tracking
  slotObj.resize(P.buffers.size());
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
  liveAliases.assign(trackers.size(), {});
  liveObject.assign(trackers.size(), false);
  unsigned units = NumComputeUnits + unsigned(T.dma_queues);
  unitFree.assign(units, 0.0);
  unitBusy.assign(units, 0.0);
  unitCount.assign(units, 0);
  queueBytes.assign(size_t(T.dma_queues), 0);
  queueEnd.assign(size_t(T.dma_queues), 0.0);
  perInstr.assign(P.instrs.size(), InstrStats());
  lastCost.resize(P.instrs.size());
  dmaInstrBusy.resize(P.instrs.size());
  for (uint32_t i = 0; i < P.instrs.size(); ++i)
    if (P.instrs[i].op == Opcode::Dma)
      dmaInstrs.push_back(i);
  // An instruction's operands are the same objects in every execution.
  auto isF32 = [&](const Access &a) {
    return (a.isBuffer() ? P.buffers[a.id].dtype : P.tensors[a.id].dtype) == DType::F32;
  };
  fp32Operands.assign(P.instrs.size(), false);
  for (uint32_t i = 0; i < P.instrs.size(); ++i) {
    const Instr &in = P.instrs[i];
    if (in.op == Opcode::Matmul && in.srcs.size() >= 2)
      fp32Operands[i] = isF32(in.srcs[0]) || isF32(in.srcs[1]); // stationary, moving
    else if (in.op == Opcode::Transpose && !in.srcs.empty())
      fp32Operands[i] = isF32(in.srcs[0]);
  }
  tensorLatencyNs = cost.tensorLatencyNs();
  throttleExact = std::isfinite(T.tensor_warmup_ns) && std::isfinite(T.tensor_throttle_rate);
}

template <bool Write> double TimingScheduler::ready(const TileView &v, int unit, double floor) const {
  if (!tracked(v))
    return floor;
  auto query = [&](const RegionTracker &t, double after) {
    return Write ? t.writeReady(v.rect, unit, after) : t.readReady(v.rect, unit, after);
  };
  double t = query(trackers[v.obj], floor);
  for (uint32_t a : liveAliases[v.obj])
    t = query(trackers[a], t);
  return t;
}

void TimingScheduler::reuseSlot(uint32_t buffer, int64_t slot) {
  const uint32_t obj = slotObject(buffer, slot);
  const double t = trackers[obj].latestEnd();
  if (t <= 0)
    return;
  const BufferDecl &b = P.buffers[buffer];
  const int64_t a0 = b.address + slot * b.slotBytes();
  recordWrite(obj, Rect{0, b.partitions(), a0, a0 + b.slotBytes()}, t, RegionTracker::MixedUnits, t);
}

void TimingScheduler::revive(uint32_t obj) {
  liveObject[obj] = true;
  for (uint32_t a : aliases[obj])
    liveAliases[a].push_back(obj);
}

// An object all of whose records end before `horizon` (strictly: a unit's
// previous instruction may end exactly then, writtenBy) delays nothing:
// every later access starts no earlier than its unit is free.
void TimingScheduler::retireIdle(uint32_t id) {
  const double horizon = this->horizon.at(id, unitFree);
  for (uint32_t obj = 0; obj < trackers.size(); ++obj) {
    if (!liveObject[obj] || !(trackers[obj].latestEnd() < horizon))
      continue;
    liveObject[obj] = false;
    for (uint32_t a : aliases[obj])
      llvm::erase_value(liveAliases[a], obj);
  }
}

void TimingScheduler::record(uint32_t id, int unit, float rows, float cols, double start, double dur,
                             double queued) {
  if (!recording)
    return;
  if (keepAll || trace.size() < maxEvents)
    trace.push_back({id, uint16_t(unit), rows, cols, start, dur, queued});
  else
    ++traceDropped;
}

// The profiler counts a matmul active while it waits for its later operand
// once the earlier one is in place and the engine is free: AWS's trn2
// profile analyses find matmuls that "take longer when weight data arrives
// late" (performance-bounds.md). Which operand's wait counts is not
// published; either's is assumed (docs/calibration.md, "TensorE busy").
double TimingScheduler::operandWaitNs(int unit, const TileView *srcs, double start) const {
  double a = ready<false>(srcs[0], unit, unitFree[unit]), b = ready<false>(srcs[1], unit, unitFree[unit]);
  return std::max(0.0, std::min(start, std::max(a, b)) - std::max(unitFree[unit], std::min(a, b)));
}

void TimingScheduler::schedule(uint32_t id, int unit, const TileView &dst, const TileView *srcs, unsigned nsrc,
                               double busyNs, double latencyNs, float rows, float cols, const TileView *dst2) {
  double start = unitFree[unit];
  for (unsigned i = 0; i < nsrc; ++i)
    start = ready<false>(srcs[i], unit, start);
  start = ready<true>(dst, unit, start);
  if (dst2)
    start = ready<true>(*dst2, unit, start);
  const double activeWait = unit == 0 && nsrc == 2 && start > unitFree[unit] ? operandWaitNs(unit, srcs, start) : 0.0;
  // trn1 port sharing: VectorE/ScalarE on PSUM, VectorE/GpSimdE on SBUF.
  bool usePsum = false, useSbuf = false;
  if (unit >= 1 && unit <= 3) {
    usePsum = inSpace(dst, MemSpace::PSUM);
    useSbuf = inSpace(dst, MemSpace::SBUF) || (dst2 && inSpace(*dst2, MemSpace::SBUF));
    for (unsigned i = 0; i < nsrc; ++i) {
      usePsum |= inSpace(srcs[i], MemSpace::PSUM);
      useSbuf |= inSpace(srcs[i], MemSpace::SBUF);
    }
    usePsum &= T.psum_port_shared_vector_scalar != 0 && (unit == 1 || unit == 2);
    useSbuf &= T.sbuf_port_shared_vector_gpsimd != 0 && (unit == 1 || unit == 3);
    for (bool moved = true; moved;) {
      moved = false;
      if (usePsum) {
        double t = psumPort[unit == 1 ? 2 : 1].fitAround(start, busyNs);
        moved |= t != start;
        start = t;
      }
      if (useSbuf) {
        double t = sbufPort[unit == 1 ? 3 : 1].fitAround(start, busyNs);
        moved |= t != start;
        start = t;
      }
    }
  }
  if (unit == 0 && !warmAndStaysWarm(busyNs, start - unitFree[0])) // throttled while it warms up after an idle gap
    busyNs = cost.tensorThrottledNs(busyNs, start - unitFree[0], tensorWarmNs);
  double end = start + busyNs;
  perInstr[id].count++;
  perInstr[id].busyNs += busyNs + activeWait;
  perInstr[id].waitNs += start - unitFree[unit] - activeWait;
  if (usePsum)
    psumPort[unit].add(start, end);
  if (useSbuf)
    sbufPort[unit].add(start, end);
  unitFree[unit] = end;
  unitBusy[unit] += busyNs + activeWait;
  ++unitCount[unit];
  for (unsigned i = 0; i < nsrc; ++i)
    if (tracked(srcs[i]))
      recordRead(srcs[i].obj, srcs[i].rect, end, unit, start);
  double visible = end + latencyNs;
  recordWrite(dst.obj, dst.rect, visible, unit, start);
  if (dst2)
    recordWrite(dst2->obj, dst2->rect, visible, unit, start);
  makespan = std::max(makespan, visible);
  record(id, unit, rows, cols, start, busyNs);
}

void TimingScheduler::dma(const Instr &in, uint32_t id, const TileView &hbm, const TileView &sb, bool load) {
  // The rotation over queues; spans are mostly powers of two (no division).
  const uint64_t n = perInstr[id].count, span = in.queueSpan;
  uint32_t queue = in.queue + uint32_t((span & (span - 1)) == 0 ? n & (span - 1) : n % span);
  int unit = NumComputeUnits + int(queue);
  const TensorDecl &t = P.tensors[hbm.id];
  int64_t bytes = hbm.P * hbm.F * dtypeBytes(t.dtype);
  int64_t chunk = std::min(hbm.contig * int64_t(dtypeBytes(t.dtype)),
                           sb.contig * int64_t(dtypeBytes(P.buffers[sb.id].dtype)));
  LastCost &last = lastCost[id];
  if (!last.same(bytes, sb.P, chunk, in.transpose))
    last.dma = cost.dma(bytes, sb.P, chunk, in.transpose);
  const InstructionCosts::DmaCost &c = last.dma;
  const TileView &src = load ? hbm : sb;
  const TileView &dst = load ? sb : hbm;
  double start = unitFree[unit];
  // A queue's transfers overlap (it issues the next before this one ends),
  // so its own earlier accesses are hazards too: no unit is exempt.
  start = ready<false>(src, RegionTracker::NoUnit, start);
  start = ready<true>(dst, RegionTracker::NoUnit, start);
  double t0 = start + T.dma_fixed_latency_ns;
  double finish = shared.reserve(t0, c.occupancy);
  // A queue issues its next transfer once this one's descriptors are out,
  // and completes its transfers in order.
  double &inOrder = queueEnd[queue];
  const double previousEnd = inOrder;
  double end = std::max({t0 + double(bytes) / c.rate, finish, inOrder});
  perInstr[id].count++;
  perInstr[id].busyNs += end - start;
  perInstr[id].waitNs += start - unitFree[unit];
  unitFree[unit] = start + std::min(T.dma_queue_issue_ns, end - start);
  unitBusy[unit] += end - std::max(start, inOrder); // the union of the queue's transfers
  inOrder = end;
  ++unitCount[unit];
  queueBytes[queue] += uint64_t(bytes);
  perInstr[id].bytes += uint64_t(bytes);
  dmaBusy.add(start, end);
  dmaInstrBusy[id].add(start, end);
  if (tracked(src))
    recordRead(src.obj, src.rect, end, unit, start);
  recordWrite(dst.obj, dst.rect, end, unit, start);
  makespan = std::max(makespan, end);
  // traffic accounting
  (load ? counts.hbmReadBytes : counts.hbmWriteBytes) += uint64_t(bytes);
  switch (t.role) {
  case TensorRole::Input: counts.trafficInputs += uint64_t(bytes); break;
  case TensorRole::Output: counts.trafficOutputs += uint64_t(bytes); break;
  case TensorRole::Scratch: counts.trafficIntermediates += uint64_t(bytes); break;
  case TensorRole::Spill: counts.trafficSpill += uint64_t(bytes); break;
  }
  if (in.tag == DmaTag::SpillSave)
    counts.spillSaveBytes += uint64_t(bytes);
  else if (in.tag == DmaTag::SpillReload)
    counts.spillReloadBytes += uint64_t(bytes);
  record(id, unit, float(sb.P), float(bytes), start, end - start, std::max(0.0, previousEnd - start));
}

void TimingScheduler::matmul(const Instr &, uint32_t id, const TileView &dst, const TileView *srcs) {
  const TileView &st = srcs[0], &mv = srcs[1];
  int64_t K = st.P, M = st.F, N = mv.F;
  const bool fp32 = fp32Operands[id];
  bool newStat = !haveStationary || lastStatObj != st.obj || !(lastStatRect == st.rect);
  haveStationary = true;
  lastStatObj = st.obj;
  lastStatRect = st.rect;
  counts.flops += uint64_t(2 * K * M * N);
  LastCost &last = lastCost[id];
  if (!last.same(K, M, N, 2 * fp32 + newStat))
    last.ns = cost.matmulNs(K, M, N, fp32, newStat);
  double busy = last.ns;
  // An accumulating matmul also reads its PSUM tile; same-engine order covers it.
  schedule(id, 0, dst, srcs, 2, busy, tensorLatencyNs, float(M), float(N));
}

void TimingScheduler::transpose(const Instr &, uint32_t id, const TileView &dst, const TileView &src) {
  counts.transposeFlops += uint64_t(2 * src.P * src.P * src.F);
  haveStationary = false; // the data tile becomes the stationary operand
  const bool fp32 = fp32Operands[id];
  LastCost &last = lastCost[id];
  if (!last.same(src.P, src.F, fp32, 0))
    last.ns = cost.peTransposeNs(src.P, src.F, fp32);
  schedule(id, 0, dst, &src, 1, last.ns, tensorLatencyNs, float(src.F), float(src.P));
}

void TimingScheduler::engineOp(const Instr &in, uint32_t id, const TileView &dst, const TileView *srcs,
                               unsigned nsrc) {
  double factor = 1.0;
  // Elements per partition the engine streams: the destination's, but a
  // reduction's source's.
  int64_t N = dst.F;
  // An activation's accumulator is written (not read) with the destination.
  const TileView *acc = nullptr;
  if (in.tiles & Accumulator) {
    acc = &srcs[--nsrc];
  }
  switch (in.op) {
  case Opcode::TensorReduce: // docs/hardware.md §4.2 tensor_reduce: N/2 with bf16 in and out and add/max, else N
    N = srcs[0].F;
    factor = dtypeOf(srcs[0]) == DType::BF16 && dtypeOf(dst) == DType::BF16 &&
                     (in.aluOp() == AluOp::Add || in.aluOp() == AluOp::Max)
                 ? 0.5
                 : 1.0;
    break;
  case Opcode::TensorTensor: {
    bool onePsum = inSpace(srcs[0], MemSpace::PSUM) != inSpace(srcs[1], MemSpace::PSUM);
    bool fastBf16 = !inSpace(srcs[0], MemSpace::PSUM) && !inSpace(srcs[1], MemSpace::PSUM) &&
                    dtypeOf(srcs[0]) == DType::BF16 && dtypeOf(srcs[1]) == DType::BF16 &&
                    dtypeOf(dst) == DType::BF16 &&
                    (in.aluOp() == AluOp::Add || in.aluOp() == AluOp::Mul || in.aluOp() == AluOp::Sub);
    factor = (onePsum || fastBf16) ? 1.0 : 2.0; // docs/hardware.md §4.2 tensor_tensor
    break;
  }
  case Opcode::Memset:
    factor = (in.imm == 0.0 && dtypeOf(dst) == DType::BF16) ? 0.5 : 1.0; // docs/hardware.md §4.2 memset
    break;
  case Opcode::TensorPartitionReduce: // no published cost: one pass over the N columns [ASSUMED] (docs/ops.md)
    N = srcs[0].F;
    break;
  case Opcode::TensorTensorScan: // docs/hardware.md §4.2: tensor_tensor_scan max(MIN_II, 2N)
    factor = 2.0;
    break;
  case Opcode::BnStats: // docs/hardware.md §4.2: bn_stats max(MIN_II, N), bn_aggr max(MIN_II, 13 N / 3)
  case Opcode::BnAggr:
    N = srcs[0].F;
    factor = in.op == Opcode::BnStats ? 1.0 : 13.0 / 3.0;
    break;
  default:
    break;
  }
  // Back-to-back dependent: a source was written by this engine's previous instruction.
  int unit = int(in.engine);
  bool dependent = false;
  for (unsigned i = 0; i < nsrc && !dependent; ++i)
    if (srcs[i].isBuffer) {
      dependent = trackers[srcs[i].obj].writtenBy(srcs[i].rect, unit, unitFree[unit]);
      for (uint32_t a : liveAliases[srcs[i].obj])
        dependent = dependent || trackers[a].writtenBy(srcs[i].rect, unit, unitFree[unit]);
    }
  LastCost &last = lastCost[id];
  if (!last.same(N, dependent, int64_t(factor * 12), 0)) { // factor: 0.5, 1, 2 or 13/3
    if (in.op == Opcode::Iota || in.op == Opcode::AffineSelect)
      last.ns = cost.gpsimdGenerateNs(N, dependent); // docs/hardware.md §4.2: GPSIMD_START + N
    else
      last.ns = cost.engineNs(in.engine, N, factor, dependent);
    if (acc) // docs/hardware.md §4.2: activation with reduce_res costs one MIN_II more
      last.ns += cost.engineCyclesNs(in.engine, T.engine_min_ii_cycles);
  }
  schedule(id, unit, dst, srcs, nsrc, last.ns, 0.0, float(dst.P), float(N), acc);
}

void TimingScheduler::sweep(uint32_t id) {
  // Later DMA transfers start no earlier than their queue is free; a unit's
  // port uses are looked at only by its partner on that port.
  const double dmaHorizon = horizon.at(id, unitFree, NumComputeUnits);
  dmaBusy.forget(dmaHorizon);
  size_t live = dmaBusy.size();
  for (uint32_t instr : dmaInstrs) {
    dmaInstrBusy[instr].forget(dmaHorizon);
    live += dmaInstrBusy[instr].size();
  }
  auto partnerFree = [&](unsigned partner) {
    return horizon.mayRun(id, partner) ? unitFree[partner] : std::numeric_limits<double>::infinity();
  };
  psumPort[1].forget(partnerFree(2));
  psumPort[2].forget(partnerFree(1));
  sbufPort[1].forget(partnerFree(3));
  sbufPort[3].forget(partnerFree(1));
  for (int u = 0; u < NumComputeUnits; ++u)
    live += psumPort[u].size() + sbufPort[u].size();
  retireIdle(id);
  sinceSweep = 0;
  sweepEvery = std::max(MinSweepInterval, live);
}

Report TimingScheduler::report(double launchOverheadNs) const {
  Report r = counts;
  const double makespan = this->makespan + launchOverheadNs;
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
  uint64_t dmaCount = 0;
  for (unsigned q = 0; q < unsigned(T.dma_queues); ++q) {
    unsigned u = NumComputeUnits + q;
    dmaCount += unitCount[u];
    if (unitCount[u])
      r.queues.push_back({q, unitCount[u], queueBytes[q], unitBusy[u]});
  }
  r.engines.push_back({"dma", dmaCount, dmaBusy.length()});
  r.dmaTransfers = dmaCount;
  r.dynamicInstructions = total + dmaCount;
  r.hbmBandwidthGBs = T.hbm_bandwidth_gbs;
  uint64_t hbm = r.hbmReadBytes + r.hbmWriteBytes;
  r.mbu = makespan > 0 ? double(hbm) / makespan / T.hbm_bandwidth_gbs : 0.0;
  r.arithmeticIntensity = hbm ? double(r.flops) / double(hbm) : 0.0;
  // Hotspots: the static instructions with the most busy time (a DMA
  // instruction's: the union of its transfers' intervals).
  std::vector<InstrStats> perInstr = this->perInstr;
  for (uint32_t instr : dmaInstrs)
    if (perInstr[instr].count)
      perInstr[instr].busyNs = dmaInstrBusy[instr].length();
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
                          perInstr[i].waitNs, P.instrSource(in), P.instrValue(in)});
  }
  r.sourceLines = summarizeSourceLines(P, perInstr);
  return r;
}

} // namespace tessel::runtime

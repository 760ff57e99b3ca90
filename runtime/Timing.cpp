//===- runtime/Timing.cpp - Region hazards, bandwidth calendar, costs -----===//
#include "runtime/Timing.h"
#include "runtime/DmaModel.h"

#include <algorithm>
#include <cmath>

namespace tessel::runtime {

void IntervalUnion::add(double start, double end) {
  // Mostly an interval starts in or after the last component (a unit's
  // transfers in time order): the general case below, without its searches.
  if (open.empty() || start > open.back().second) {
    if (open.empty() || start > open.back().first) {
      openLength += std::max(0.0, end - start);
      open.emplace_back(start, end);
      return;
    }
  } else if (start >= open.back().first && end >= start) {
    std::pair<double, double> &last = open.back();
    openLength -= std::max(0.0, last.second - last.first);
    last.second = std::max(last.second, end);
    openLength += std::max(0.0, last.second - last.first);
    return;
  }
  // Components touching [start, end]: from the last one starting at or before
  // start to the last one starting at or before end.
  Iter it = firstAfter(start);
  if (it != open.begin() && std::prev(it)->second >= start)
    --it;
  Iter last = it;
  for (; last != open.end() && last->first <= end; ++last) {
    start = std::min(start, last->first);
    end = std::max(end, last->second);
    openLength -= std::max(0.0, last->second - last->first);
  }
  it = open.erase(it, last);
  openLength += std::max(0.0, end - start);
  if (it != open.begin() && std::prev(it)->first == start)
    return; // a component with this start remains (as a map keyed by start would keep it)
  open.insert(it, {start, end});
}

void IntervalUnion::forget(double horizon) {
  Iter it = open.begin();
  for (; it != open.end() && it->second < horizon; ++it)
    if (it->second > it->first) {
      closed += it->second - it->first;
      openLength -= it->second - it->first;
    }
  open.erase(open.begin(), it);
}

double IntervalUnion::length() const {
  // Summed left to right, as documented: the running openLength is only for
  // fast-forward's comparisons (lengthEstimate).
  double total = closed;
  for (const auto &iv : open)
    if (iv.second > iv.first)
      total += iv.second - iv.first;
  return total;
}

double PortUses::fitAround(double start, double dur) const {
  auto it = std::lower_bound(uses.begin() + long(head), uses.end(), start,
                             [](const std::pair<double, double> &iv, double t) { return iv.second <= t; });
  for (; it != uses.end() && it->first < start + dur; ++it)
    start = std::max(start, it->second);
  return start;
}

void PortUses::forget(double horizon) {
  while (head < uses.size() && uses[head].second < horizon)
    ++head;
  if (head > uses.size() / 2) {
    uses.erase(uses.begin(), uses.begin() + long(head));
    head = 0;
  }
}

double BandwidthCalendar::reserve(double t0, double amount) {
  if (!(amount > 0))
    return t0;
  reserved += amount;
  // First interval that ends after t0 (ends are sorted: intervals are disjoint).
  auto first = std::lower_bound(busy.begin(), busy.end(), t0,
                                [](const std::pair<double, double> &iv, double t) { return iv.second <= t; });
  double cursor = t0, rem = amount, finish = 0;
  auto j = first;
  bool done = false;
  for (; j != busy.end(); ++j) {
    if (j->first > cursor) {
      double gap = j->first - cursor;
      if (gap >= rem) {
        finish = cursor + rem;
        done = true;
        break;
      }
      rem -= gap;
    }
    cursor = std::max(cursor, j->second);
  }
  if (!done)
    finish = cursor + rem;
  // Everything from t0 (or the start of the interval containing it) to finish is now busy.
  double ns = (first != busy.end() && first->first <= t0) ? first->first : t0;
  double ne = finish;
  auto last = j;
  if (last != busy.end() && last->first <= finish) {
    ne = std::max(ne, last->second);
    ++last;
  }
  auto pos = busy.erase(first, last);
  busy.insert(pos, {ns, ne});
  if (busy.size() > MaxIntervals) {
    // Forget the oldest gaps (treat them as busy): conservative.
    size_t half = busy.size() / 2;
    busy[0].second = busy[half].second;
    busy.erase(busy.begin() + 1, busy.begin() + half + 1);
  }
  return finish;
}

double InstructionCosts::matmulNs(int64_t K, int64_t M, int64_t N, bool fp32, bool newStationary) const {
  (void)K;
  double ii = std::max(std::min(t.matmul_min_ii_cycles, double(M)), double(N));
  if (fp32)
    ii *= t.fp32_matmul_slowdown;
  if (newStationary)
    ii = std::max(ii, double(M) / t.load_stationary_cols_per_cycle);
  return ii / t.tensor_clock_ghz;
}

double InstructionCosts::tensorThrottledNs(double nominalNs, double idleNs, double &warmNs) const {
  if (idleNs > 0 && idleNs >= t.tensor_throttle_idle_ns)
    warmNs = 0;
  double throttledNs = std::max(0.0, t.tensor_warmup_ns - warmNs); // busy time left at the low rate
  double work = throttledNs * t.tensor_throttle_rate;               // nominal ns of work it does
  double ns = nominalNs <= work ? nominalNs / t.tensor_throttle_rate : throttledNs + (nominalNs - work);
  warmNs = std::min(t.tensor_warmup_ns, warmNs + ns);
  return ns;
}

double InstructionCosts::peTransposeNs(int64_t P, int64_t F, bool fp32) const {
  double ii = std::max(double(P), std::min(t.matmul_min_ii_cycles, double(F)));
  if (fp32)
    ii *= t.fp32_matmul_slowdown;
  return ii / t.tensor_clock_ghz;
}

double InstructionCosts::engineCyclesNs(Engine e, double cycles) const {
  switch (e) {
  case Engine::Scalar: return cycles / t.scalar_clock_ghz;
  case Engine::GpSimd: return cycles / t.gpsimd_clock_ghz;
  default: return cycles / t.vector_clock_ghz;
  }
}

double InstructionCosts::gpsimdGenerateNs(int64_t N, bool dependent) const {
  double cycles = t.engine_access_overhead_cycles + t.gpsimd_start_cycles + double(N) / t.gpsimd_elems_per_cycle;
  if (dependent)
    cycles += t.engine_dependent_overhead_cycles;
  return cycles / t.gpsimd_clock_ghz;
}

double InstructionCosts::engineNs(Engine e, int64_t N, double factor, bool dependent) const {
  double clock, epc;
  switch (e) {
  case Engine::Scalar:
    clock = t.scalar_clock_ghz;
    epc = t.scalar_elems_per_cycle;
    break;
  case Engine::GpSimd:
    clock = t.gpsimd_clock_ghz;
    epc = t.gpsimd_elems_per_cycle;
    break;
  default:
    clock = t.vector_clock_ghz;
    epc = t.vector_elems_per_cycle;
    break;
  }
  double cycles = t.engine_access_overhead_cycles + std::max(t.engine_min_ii_cycles, factor * double(N) / epc);
  if (dependent)
    cycles += t.engine_dependent_overhead_cycles;
  return cycles / clock;
}

InstructionCosts::DmaCost InstructionCosts::dma(int64_t bytes, int64_t partitions, int64_t chunkBytes, bool transpose) const {
  DmaTiming d = DmaModel(t).cost({bytes, partitions, chunkBytes, transpose});
  return {d.rateBytesPerNs, d.occupancyNs, d.efficiency};
}

} // namespace tessel::runtime

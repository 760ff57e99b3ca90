//===- runtime/Report.cpp - Report as JSON and as a text table ------------===//
#include "runtime/Report.h"

#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace tessel::runtime {

json::Object reportToJSON(const Report &r) {
  double lat = r.latencyNs;
  json::Object engines, instructions;
  uint64_t total = 0;
  for (const EngineReport &e : r.engines) {
    engines[e.name] = json::Object{{"busy_us", e.busyNs / 1000.0},
                                   {"busy_pct", lat > 0 ? 100.0 * e.busyNs / lat : 0.0},
                                   {"instructions", int64_t(e.instructions)}};
    instructions[e.name] = int64_t(e.instructions);
    total += e.instructions;
  }
  instructions["total"] = int64_t(total);
  json::Array queues;
  for (const QueueReport &q : r.queues)
    queues.push_back(json::Object{{"queue", int64_t(q.queue)},
                                  {"transfers", int64_t(q.transfers)},
                                  {"bytes", int64_t(q.bytes)},
                                  {"busy_us", q.busyNs / 1000.0}});
  json::Array hotspots;
  for (const HotspotReport &h : r.hotspots)
    hotspots.push_back(json::Object{{"line", int64_t(h.line)},
                                    {"opcode", h.opcode},
                                    {"unit", h.unit},
                                    {"count", int64_t(h.count)},
                                    {"busy_us", h.busyNs / 1000.0},
                                    {"wait_us", h.waitNs / 1000.0}});
  json::Array warnings;
  for (const std::string &w : r.warnings)
    warnings.push_back(w);
  json::Object o{
      {"kernel", r.kernel},
      {"target", r.target},
      {"mode", r.functional ? "functional" : "timing-only"},
      {"latency_us", lat / 1000.0},
      {"latency_predicts", r.latencyPredicts},
      {"launch_overhead_us", r.launchOverheadNs / 1000.0},
      {"mfu", r.mfu},
      {"hfu", r.hfu},
      {"tensor_engine_active_pct", r.tensorEngineActivePct},
      {"flops", int64_t(r.flops)},
      {"transpose_flops", int64_t(r.transposeFlops)},
      {"peak_flops", r.peakFlopsPerSec},
      {"hbm_read_bytes", int64_t(r.hbmReadBytes)},
      {"hbm_write_bytes", int64_t(r.hbmWriteBytes)},
      {"spill_save_bytes", int64_t(r.spillSaveBytes)},
      {"spill_reload_bytes", int64_t(r.spillReloadBytes)},
      {"sbuf_peak_bytes", r.sbufPeakBytes},
      {"sbuf_capacity_bytes", r.sbufCapacityBytes},
      {"sbuf_peak_bytes_per_partition", r.sbufPeakBytesPerPartition},
      {"psum_peak_bytes", r.psumPeakBytes},
      {"psum_capacity_bytes", r.psumCapacityBytes},
      {"psum_peak_bytes_per_partition", r.psumPeakBytesPerPartition},
      {"instructions", std::move(instructions)},
      {"engines", std::move(engines)},
      {"dma_queues", std::move(queues)},
      {"dma_transfers", int64_t(r.dmaTransfers)},
      {"hotspots", std::move(hotspots)},
      {"traffic", json::Object{{"inputs", int64_t(r.trafficInputs)},
                               {"outputs", int64_t(r.trafficOutputs)},
                               {"intermediates", int64_t(r.trafficIntermediates)},
                               {"spill", int64_t(r.trafficSpill)}}},
      {"hbm_bandwidth_gbs", r.hbmBandwidthGBs},
      {"mbu", r.mbu},
      {"arithmetic_intensity", r.arithmeticIntensity},
      {"dynamic_instructions", int64_t(r.dynamicInstructions)},
      {"sim_seconds", r.simSeconds},
      {"warnings", std::move(warnings)},
  };
  if (r.fastForwardedInstructions)
    o["fast_forwarded_instructions"] = int64_t(r.fastForwardedInstructions);
  return o;
}

static std::string bytesStr(double b) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) {
    b /= 1024;
    ++u;
  }
  return u == 0 ? formatv("{0} B", int64_t(b)).str() : formatv("{0:f2} {1}", b, units[u]).str();
}

static std::string countStr(double v) {
  if (v >= 1e12)
    return formatv("{0:f3} T", v / 1e12).str();
  if (v >= 1e9)
    return formatv("{0:f3} G", v / 1e9).str();
  if (v >= 1e6)
    return formatv("{0:f3} M", v / 1e6).str();
  return formatv("{0}", int64_t(v)).str();
}

void printReportText(const Report &r, raw_ostream &os) {
  double lat = r.latencyNs;
  os << formatv("kernel {0} on {1} ({2})\n", r.kernel, r.target, r.functional ? "functional" : "timing only");
  os << formatv("  {0,-26} {1:f3} us\n", "latency", lat / 1000.0);
  os << formatv("  {0,-26} {1} ({2:f3} us launch term)\n", "latency predicts", r.latencyPredicts,
                r.launchOverheadNs / 1000.0);
  os << formatv("  {0,-26} {1:f1} %  (of {2:f2} TFLOP/s bf16 peak)\n", "MFU", 100.0 * r.mfu,
                r.peakFlopsPerSec / 1e12);
  os << formatv("  {0,-26} {1:f1} %\n", "tensor engine active", r.tensorEngineActivePct);
  os << formatv("  {0,-26} {1}  (transposes: {2})\n", "FLOPs", countStr(double(r.flops)),
                countStr(double(r.transposeFlops)));
  os << formatv("  {0,-26} {1} read, {2} write  (MBU {3:f1} %, {4:f1} flop/B)\n", "HBM traffic",
                bytesStr(double(r.hbmReadBytes)), bytesStr(double(r.hbmWriteBytes)), 100.0 * r.mbu,
                r.arithmeticIntensity);
  os << formatv("  {0,-26} inputs {1}, outputs {2}, intermediates {3}, spill {4}\n", "traffic by purpose",
                bytesStr(double(r.trafficInputs)), bytesStr(double(r.trafficOutputs)),
                bytesStr(double(r.trafficIntermediates)), bytesStr(double(r.trafficSpill)));
  os << formatv("  {0,-26} save {1}, reload {2}\n", "spill", bytesStr(double(r.spillSaveBytes)),
                bytesStr(double(r.spillReloadBytes)));
  auto pct = [](int64_t a, int64_t b) { return b ? 100.0 * double(a) / double(b) : 0.0; };
  os << formatv("  {0,-26} {1} of {2} ({3:f1} %)\n", "SBUF peak", bytesStr(double(r.sbufPeakBytes)),
                bytesStr(double(r.sbufCapacityBytes)), pct(r.sbufPeakBytes, r.sbufCapacityBytes));
  os << formatv("  {0,-26} {1} of {2} ({3:f1} %)\n", "PSUM peak", bytesStr(double(r.psumPeakBytes)),
                bytesStr(double(r.psumCapacityBytes)), pct(r.psumPeakBytes, r.psumCapacityBytes));
  os << formatv("\n  {0,-10} {1,14} {2,14} {3,8}\n", "engine", "instructions", "busy (us)", "busy %");
  for (const EngineReport &e : r.engines)
    os << formatv("  {0,-10} {1,14} {2,14:f3} {3,8:f1}\n", e.name, e.instructions, e.busyNs / 1000.0,
                  lat > 0 ? 100.0 * e.busyNs / lat : 0.0);
  if (!r.hotspots.empty()) {
    os << formatv("\n  {0,-6} {1,-22} {2,-8} {3,10} {4,12} {5,12}\n", "line", "hotspot", "unit", "count",
                  "busy (us)", "wait (us)");
    for (const HotspotReport &h : r.hotspots)
      os << formatv("  {0,-6} {1,-22} {2,-8} {3,10} {4,12:f3} {5,12:f3}\n", h.line, h.opcode, h.unit, h.count,
                    h.busyNs / 1000.0, h.waitNs / 1000.0);
  }
  if (r.fastForwardedInstructions)
    os << formatv("\n  fast-forward: {0} of {1} instructions advanced arithmetically (--exact: all simulated)\n",
                  r.fastForwardedInstructions, r.dynamicInstructions);
  for (const std::string &w : r.warnings)
    os << "  warning: " << w << "\n";
}

} // namespace tessel::runtime

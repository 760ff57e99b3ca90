//===- runtime/Report.cpp - Report as JSON and as a text table ------------===//
#include "runtime/Report.h"
#include "runtime/Program.h"
#include "support/HostMemory.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"

#include <fmt/format.h>

#include <algorithm>

using namespace llvm;

namespace tessel::runtime {

std::vector<SourceLineReport> summarizeSourceLines(const Program &prog, const std::vector<InstrTotals> &perInstr) {
  std::vector<SourceLineReport> lines;
  StringMap<size_t> index;
  for (size_t i = 0; i < prog.instrs.size() && i < perInstr.size(); ++i) {
    const InstrTotals &t = perInstr[i];
    if (!t.count)
      continue;
    std::string source = prog.instrSource(prog.instrs[i], /*withColumn=*/false);
    if (source.empty())
      continue;
    auto [it, added] = index.try_emplace(source, lines.size());
    if (added) {
      lines.emplace_back();
      lines.back().source = std::move(source);
    }
    SourceLineReport &l = lines[it->second];
    ++l.instructions;
    l.count += t.count;
    l.busyNs += t.busyNs;
    l.waitNs += t.waitNs;
    l.dmaBytes += t.bytes;
    std::string op = instrName(prog.instrs[i]);
    if (!is_contained(l.opcodes, op))
      l.opcodes.push_back(std::move(op));
  }
  // Most busy first; ties in program order (stable).
  std::stable_sort(lines.begin(), lines.end(),
                   [](const SourceLineReport &a, const SourceLineReport &b) { return a.busyNs > b.busyNs; });
  return lines;
}

static json::Object sensitivityToJSON(const SensitivityReport &s) {
  auto value = [](const ValueSensitivity &v) {
    return json::Object{{"field", v.field}, {"kind", v.kind},         {"value", v.value},
                        {"up_pct", v.upPct}, {"down_pct", v.downPct}};
  };
  json::Array values, zero;
  for (const ValueSensitivity &v : s.values)
    values.push_back(value(v));
  for (const std::string &z : s.zero)
    zero.push_back(z);
  return json::Object{{"step_pct", s.stepPct},
                      {"base_latency_us", s.baseLatencyNs / 1000.0},
                      {"most", s.values.empty() ? json::Value(nullptr) : json::Value(value(s.values.front()))},
                      {"values", std::move(values)},
                      {"zero_values", std::move(zero)},
                      {"runs", int64_t(s.runs)},
                      {"host_seconds", s.hostSeconds}};
}

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
                                    {"wait_us", h.waitNs / 1000.0},
                                    {"source", h.source},
                                    {"value", h.value}});
  json::Array sourceLines;
  for (const SourceLineReport &l : r.sourceLines) {
    json::Array ops;
    for (const std::string &op : l.opcodes)
      ops.push_back(op);
    sourceLines.push_back(json::Object{{"source", l.source},
                                       {"instructions", int64_t(l.instructions)},
                                       {"count", int64_t(l.count)},
                                       {"busy_us", l.busyNs / 1000.0},
                                       {"wait_us", l.waitNs / 1000.0},
                                       {"dma_bytes", int64_t(l.dmaBytes)},
                                       {"opcodes", std::move(ops)}});
  }
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
      {"source_lines", std::move(sourceLines)},
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
  if (!r.run.source.empty())
    o["source"] = r.run.source;
  if (!r.run.pipeline.empty())
    o["pipeline"] = r.run.pipeline;
  if (!r.run.blocks.empty())
    o["blocks"] = r.run.blocks;
  if (r.fastForwardedInstructions)
    o["fast_forwarded_instructions"] = int64_t(r.fastForwardedInstructions);
  if (r.sensitivity)
    o["sensitivity"] = sensitivityToJSON(*r.sensitivity);
  return o;
}

static std::string bytesStr(double b) { return formatBytes(b); }

static std::string countStr(double v) {
  if (v >= 1e12)
    return formatv("{0:f3} T", v / 1e12).str();
  if (v >= 1e9)
    return formatv("{0:f3} G", v / 1e9).str();
  if (v >= 1e6)
    return formatv("{0:f3} M", v / 1e6).str();
  return formatv("{0}", int64_t(v)).str();
}

static void printSensitivity(const SensitivityReport &s, raw_ostream &os) {
  os << formatv("\n  sensitivity: each non-published target value the run uses moved by +-{0:f0} % ({1} timing-only "
                "runs, {2:f2} s)\n",
                s.stepPct, s.runs, s.hostSeconds);
  if (s.values.empty()) {
    os << "    none: every value the run uses is published\n";
  } else {
    const ValueSensitivity &m = s.values.front();
    os << formatv("    depends most on {0} ({1}, {2}): latency {3:f1} % / {4:f1} %\n", m.field, m.kind,
                  fmt::format("{:.6g}", m.value), m.upPct, m.downPct);
    os << formatv("    {0,-34} {1,-19} {2,12} {3,9} {4,9}\n", "value", "provenance", "is", "+step", "-step");
    for (const ValueSensitivity &v : s.values)
      os << formatv("    {0,-34} {1,-19} {2,12} {3,8:f2}% {4,8:f2}%\n", v.field, v.kind,
                    fmt::format("{:.6g}", v.value), v.upPct,
                    v.downPct);
  }
  if (!s.zero.empty())
    os << "    at 0 (a relative step cannot move them): " << join(s.zero, ", ") << "\n";
}

/// What the latency is, in words that need no docs (runtime/Launch.h).
static std::string latencyMeaning(const Report &r) {
  const double launchUs = r.launchOverheadNs / 1000.0;
  if (r.latencyPredicts == "benchmark")
    return formatv("one iteration of a benchmark loop, as nki.benchmark times it (includes {0:f3} us of "
                   "launch overhead per iteration)",
                   launchUs);
  if (launchUs == 0)
    return "one execution on the device, as a profile's total_time (no launch overhead added)";
  return formatv("one execution on the device, as a profile's total_time (includes {0:f3} us of launch "
                 "overhead)",
                 launchUs);
}

/// The header: what ran (kernel, target, mode, source, pipeline, blocks).
static void printRunHeader(const Report &r, raw_ostream &os) {
  os << formatv("kernel {0} on {1} ({2})\n", r.kernel, r.target, r.functional ? "functional" : "timing only");
  const std::pair<const char *, const std::string *> lines[] = {
      {"source", &r.run.source}, {"pipeline", &r.run.pipeline}, {"blocks", &r.run.blocks}};
  for (const auto &[label, value] : lines)
    if (!value->empty())
      os << formatv("  {0,-26} {1}\n", label, *value);
}

void printReportText(const Report &r, raw_ostream &os) {
  double lat = r.latencyNs;
  printRunHeader(r, os);
  os << formatv("  {0,-26} {1:f3} us\n", "latency", lat / 1000.0);
  os << formatv("  {0,-26} {1}\n", "latency is", latencyMeaning(r));
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
    os << formatv("\n  {0,-20} {1,-12} {2,-10} {3,10} {4,12} {5,12}  {6}\n", "hotspot", "value", "unit", "count",
                  "busy (us)", "wait (us)", "source");
    for (const HotspotReport &h : r.hotspots)
      os << formatv("  {0,-20} {1,-12} {2,-10} {3,10} {4,12:f3} {5,12:f3}  {6}\n", h.opcode, h.value, h.unit,
                    h.count, h.busyNs / 1000.0, h.waitNs / 1000.0, h.source.empty() ? "-" : h.source);
  }
  if (!r.sourceLines.empty()) {
    os << formatv("\n  {0,12} {1,12} {2,12} {3,10}  {4}\n", "busy (us)", "wait (us)", "DMA bytes", "count",
                  "source line (its instructions)");
    size_t shown = std::min(r.sourceLines.size(), Report::MaxSourceLinesShown);
    for (size_t i = 0; i < shown; ++i) {
      const SourceLineReport &l = r.sourceLines[i];
      os << formatv("  {0,12:f3} {1,12:f3} {2,12} {3,10}  {4} ({5})\n", l.busyNs / 1000.0, l.waitNs / 1000.0,
                    bytesStr(double(l.dmaBytes)), l.count, l.source, join(l.opcodes, ", "));
    }
    if (shown < r.sourceLines.size())
      os << formatv("  ... {0} more source lines (--report=json lists all)\n", r.sourceLines.size() - shown);
  }
  if (r.fastForwardedInstructions)
    os << formatv("\n  fast-forward: {0} of {1} instructions advanced arithmetically (--exact: all simulated)\n",
                  r.fastForwardedInstructions, r.dynamicInstructions);
  if (r.sensitivity)
    printSensitivity(*r.sensitivity, os);
  for (const std::string &w : r.warnings)
    os << "  warning: " << w << "\n";
}

} // namespace tessel::runtime

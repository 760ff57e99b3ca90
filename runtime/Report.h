//===- runtime/Report.h - Profile report of one simulated run ---*- C++ -*-===//
//
// The numbers the Neuron profiler would show, in its vocabulary where it has
// one. JSON keys (a contract, docs/simulator.md): kernel, target, source,
// pipeline, blocks, latency_us,
// latency_predicts, launch_overhead_us, mfu,
// tensor_engine_active_pct, flops, transpose_flops, hbm_read_bytes,
// hbm_write_bytes, spill_save_bytes, spill_reload_bytes, sbuf_peak_bytes,
// sbuf_capacity_bytes, psum_peak_bytes, instructions, engines, traffic (and
// `check`, added by the driver). Beyond the contract: hotspots (each with
// the `source` it came from and the `value` involved) and source_lines (per
// source line: time and DMA bytes), and under `tessel run --sensitivity`
// `sensitivity` (runtime/ReportSensitivity.h). Definitions: docs/tasm.md,
// "Report".
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_REPORT_H
#define TESSEL_RUNTIME_REPORT_H

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tessel::runtime {

struct EngineReport {
  std::string name;       ///< tensor, vector, scalar, gpsimd, dma
  uint64_t instructions = 0;
  double busyNs = 0;      ///< time with >= 1 instruction in progress
};

struct QueueReport {
  unsigned queue = 0;
  uint64_t transfers = 0;
  uint64_t bytes = 0;
  double busyNs = 0;
};

/// Time spent by one static instruction over all its executions.
struct HotspotReport {
  unsigned line = 0;   ///< in the .tasm
  std::string opcode;  ///< e.g. "matmul", "activation.silu"
  std::string unit;    ///< engine or "dma.qN"
  uint64_t count = 0;  ///< dynamic executions
  double busyNs = 0;   ///< total time on its unit
  double waitNs = 0;   ///< total time its unit sat idle waiting for its dependencies
  /// Where it came from: "kernel.tsl:5:12", "kernel.py:23", "k.tir:9:5", or
  /// "k.tasm:14:3" for a .tasm instruction without loc(...); "" if unknown.
  std::string source;
  std::string value; ///< the HBM tensor a DMA moves, else the buffer it writes
};

/// One static instruction's totals over its executions (the timing model's).
struct InstrTotals {
  uint64_t count = 0;
  double busyNs = 0, waitNs = 0;
  uint64_t bytes = 0; ///< HBM bytes a DMA moved
};

/// The instructions that came from one source line, summed.
struct SourceLineReport {
  std::string source;       ///< "kernel.tsl:5" (Program::instrSource without the column)
  unsigned instructions = 0; ///< static instructions
  uint64_t count = 0;       ///< their dynamic executions
  double busyNs = 0;        ///< summed over their units (units overlap: may exceed the latency)
  double waitNs = 0;
  uint64_t dmaBytes = 0;    ///< HBM bytes their DMAs moved
  std::vector<std::string> opcodes; ///< distinct, in program order
};

/// How the latency moves when one non-published target value moves.
struct ValueSensitivity {
  std::string field;
  std::string kind; ///< its provenance: derived, derived-from-point, assumed, fitted, unrecorded
  double value = 0;
  double upPct = 0, downPct = 0; ///< latency change (%) with the value moved up / down by the step
  double largestPct() const { return std::max(std::fabs(upPct), std::fabs(downPct)); }
};

/// The non-published values a run's latency depends on (runtime/ReportSensitivity.h).
struct SensitivityReport {
  double stepPct = 0;
  double baseLatencyNs = 0; ///< timing-only fast-forward latency the changes are relative to
  std::vector<ValueSensitivity> values; ///< the values used, most sensitive first
  std::vector<std::string> zero;        ///< values used but 0, which a relative step cannot move
  unsigned runs = 0;                    ///< timing-only re-runs made (the unchanged target's included)
  double hostSeconds = 0;
};

/// What was run, as the driver knows it (the simulator sees only the
/// program): the report names it so a number is never read without it.
struct RunDescription {
  std::string source;   ///< the file run, as given ("-" for stdin)
  std::string pipeline; ///< "-O2", "-O0 (unoptimised; -O2 fuses)", "--passes=a,b", "as written (NKI kernel)"
  std::string blocks;   ///< "m = 512, n = 512" (ir::BlockConfig::str); "" when the kernel has none
};

struct Report {
  std::string kernel, target;
  RunDescription run; ///< empty when the driver gives none (then not printed)
  bool functional = true; ///< false under --timing-only
  double latencyNs = 0;           ///< device timeline + launchOverheadNs
  std::string latencyPredicts = "device"; ///< "device" or "benchmark" (runtime/Launch.h)
  double launchOverheadNs = 0;    ///< the target's launch term included in latencyNs
  double peakFlopsPerSec = 0;
  double mfu = 0;                 ///< flops / (latency * peak bf16), 0..1
  double hfu = 0;                 ///< (flops + transpose flops) / (latency * peak bf16)
  double tensorEngineActivePct = 0;
  uint64_t flops = 0;             ///< 2*M*N*K over matmuls (not transposes)
  uint64_t transposeFlops = 0;    ///< TensorE transposes counted as matmuls against identity
  uint64_t hbmReadBytes = 0, hbmWriteBytes = 0;
  uint64_t spillSaveBytes = 0, spillReloadBytes = 0;
  // traffic by purpose (bytes, reads + writes)
  uint64_t trafficInputs = 0, trafficOutputs = 0, trafficIntermediates = 0, trafficSpill = 0;
  int64_t sbufPeakBytes = 0, sbufCapacityBytes = 0;   ///< max end address x partitions
  int64_t psumPeakBytes = 0, psumCapacityBytes = 0;
  int64_t sbufPeakBytesPerPartition = 0, psumPeakBytesPerPartition = 0;
  std::vector<EngineReport> engines; ///< tensor, vector, scalar, gpsimd, dma (in that order)
  std::vector<QueueReport> queues;   ///< DMA queues that were used
  static constexpr size_t MaxHotspots = 10;
  std::vector<HotspotReport> hotspots; ///< top static instructions by busy time
  /// per source line, by busy time (none when no instruction has a source)
  std::vector<SourceLineReport> sourceLines;
  static constexpr size_t MaxSourceLinesShown = 10; ///< in the text report
  uint64_t dynamicInstructions = 0;
  uint64_t dmaTransfers = 0;
  double hbmBandwidthGBs = 0;
  double mbu = 0;                    ///< (read + write bytes) / latency / HBM bandwidth
  double arithmeticIntensity = 0;    ///< flops / HBM bytes
  double simSeconds = 0;             ///< host time the simulation took
  uint64_t fastForwardedInstructions = 0; ///< of dynamicInstructions, advanced arithmetically
  std::vector<std::string> warnings;
  std::optional<SensitivityReport> sensitivity; ///< --sensitivity
};

struct Program;
/// The per-source-line summary of `perInstr` (indexed like prog.instrs),
/// most busy first; lines with no executed instruction are left out.
std::vector<SourceLineReport> summarizeSourceLines(const Program &prog, const std::vector<InstrTotals> &perInstr);

llvm::json::Object reportToJSON(const Report &r);
void printReportText(const Report &r, llvm::raw_ostream &os);

} // namespace tessel::runtime

#endif

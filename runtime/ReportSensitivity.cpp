//===- runtime/ReportSensitivity.cpp - Which unpublished value a latency rests on -===//
#include "runtime/ReportSensitivity.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/ThreadPool.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>

using namespace llvm;

namespace tessel::runtime {

namespace {

/// A target value the timing model reads, and the engines whose time it sets
/// ("launch": the launch term of the latency predicted).
struct TimedField {
  const char *field;
  double Target::*member;
  StringRef engines;
  bool fraction = false; ///< at most 1
};

const TimedField timedFields[] = {
    {"tensor_clock_ghz", &Target::tensor_clock_ghz, "tensor"},
    {"matmul_min_ii_cycles", &Target::matmul_min_ii_cycles, "tensor"},
    {"fp32_matmul_slowdown", &Target::fp32_matmul_slowdown, "tensor"},
    {"load_stationary_cols_per_cycle", &Target::load_stationary_cols_per_cycle, "tensor"},
    {"tensor_pipeline_latency_cycles", &Target::tensor_pipeline_latency_cycles, "tensor"},
    {"tensor_throttle_rate", &Target::tensor_throttle_rate, "tensor", true},
    {"tensor_warmup_ns", &Target::tensor_warmup_ns, "tensor"},
    {"tensor_throttle_idle_ns", &Target::tensor_throttle_idle_ns, "tensor"},
    {"vector_clock_ghz", &Target::vector_clock_ghz, "vector"},
    {"scalar_clock_ghz", &Target::scalar_clock_ghz, "scalar"},
    {"gpsimd_clock_ghz", &Target::gpsimd_clock_ghz, "gpsimd"},
    {"vector_elems_per_cycle", &Target::vector_elems_per_cycle, "vector"},
    {"scalar_elems_per_cycle", &Target::scalar_elems_per_cycle, "scalar"},
    {"gpsimd_elems_per_cycle", &Target::gpsimd_elems_per_cycle, "gpsimd"},
    {"engine_min_ii_cycles", &Target::engine_min_ii_cycles, "vector scalar gpsimd"},
    {"engine_access_overhead_cycles", &Target::engine_access_overhead_cycles, "vector scalar gpsimd"},
    {"engine_dependent_overhead_cycles", &Target::engine_dependent_overhead_cycles, "vector scalar gpsimd"},
    {"hbm_bandwidth_gbs", &Target::hbm_bandwidth_gbs, "dma"},
    {"dma_engine_bandwidth_gbs", &Target::dma_engine_bandwidth_gbs, "dma"},
    {"dma_fixed_latency_ns", &Target::dma_fixed_latency_ns, "dma"},
    {"dma_queue_issue_ns", &Target::dma_queue_issue_ns, "dma"},
    {"dma_descriptor_overhead_bytes", &Target::dma_descriptor_overhead_bytes, "dma"},
    {"dma_transfer_overhead_ns", &Target::dma_transfer_overhead_ns, "dma"},
    {"dma_transpose_efficiency", &Target::dma_transpose_efficiency, "dma-transpose", true},
    {"launch_device_ns", &Target::launch_device_ns, "launch"},
    {"launch_benchmark_ns", &Target::launch_benchmark_ns, "launch"},
};

bool usesField(const TimedField &f, const Program &prog, const Report &r, LatencyKind latency) {
  if (f.engines == "launch")
    return StringRef(f.field) == (latency == LatencyKind::Benchmark ? "launch_benchmark_ns" : "launch_device_ns");
  if (f.engines == "dma-transpose")
    return any_of(prog.instrs, [](const Instr &in) { return in.op == Opcode::Dma && in.transpose; });
  SmallVector<StringRef, 3> engines;
  f.engines.split(engines, ' ');
  return any_of(r.engines, [&](const EngineReport &e) { return e.instructions && is_contained(engines, e.name); });
}

} // namespace

Error addLatencySensitivity(const Program &prog, const Target &t, const TargetProvenance &p, const SimOptions &base,
                            Report &r) {
  auto started = std::chrono::steady_clock::now();
  SensitivityReport out;
  out.stepPct = 100 * SensitivityStep;

  // The runs: index 0 the unchanged target, then one per (value, direction).
  struct Run {
    Target target;
    size_t value = 0;
    bool up = true;
  };
  std::vector<Run> runs{{t}};
  for (const TimedField &f : timedFields) {
    auto it = p.find(f.field);
    ProvenanceKind kind = it == p.end() ? ProvenanceKind::Unrecorded : it->second.kind;
    if (kind == ProvenanceKind::Published || !usesField(f, prog, r, base.latency))
      continue;
    double v = t.*(f.member);
    if (v == 0) {
      out.zero.push_back(f.field);
      continue;
    }
    out.values.push_back({f.field, provenanceKindName(kind).str(), v});
    if (f.engines == "launch")
      continue; // a term of the latency: moved below without re-timing
    for (bool up : {true, false}) {
      double moved = v * (up ? 1 + SensitivityStep : 1 - SensitivityStep);
      if (f.fraction)
        moved = std::min(moved, 1.0);
      if (moved == v)
        continue;
      Run run{t, out.values.size() - 1, up};
      run.target.*(f.member) = moved;
      runs.push_back(std::move(run));
    }
  }

  SimOptions o;
  o.timingOnly = true;
  o.fastForward = true;
  o.latency = base.latency;
  o.maxInstructions = base.maxInstructions;
  std::vector<double> latency(runs.size());
  std::vector<std::optional<std::string>> errors(runs.size());
  auto one = [&](size_t k) {
    Expected<SimResult> res = simulate(prog, runs[k].target, o);
    if (res)
      latency[k] = res->report.latencyNs;
    else
      errors[k] = toString(res.takeError());
  };
  {
    ThreadPool pool(hardware_concurrency(base.threads));
    for (size_t k = 0; k < runs.size(); ++k)
      pool.async(one, k);
    pool.wait();
  }
  for (size_t k = 0; k < runs.size(); ++k)
    if (errors[k])
      return createStringError(inconvertibleErrorCode(), "--sensitivity: %s%s%s",
                               k ? "with " : "", k ? (out.values[runs[k].value].field + " moved: ").c_str() : "",
                               errors[k]->c_str());
  out.baseLatencyNs = latency[0];
  out.runs = unsigned(runs.size());
  for (size_t k = 1; k < runs.size(); ++k) {
    ValueSensitivity &v = out.values[runs[k].value];
    (runs[k].up ? v.upPct : v.downPct) = 100 * (latency[k] - latency[0]) / latency[0];
  }
  for (ValueSensitivity &v : out.values)
    if (StringRef(v.field).startswith("launch_")) {
      v.upPct = 100 * SensitivityStep * v.value / latency[0];
      v.downPct = -v.upPct;
    }
  std::stable_sort(out.values.begin(), out.values.end(), [](const ValueSensitivity &a, const ValueSensitivity &b) {
    return a.largestPct() > b.largestPct();
  });
  out.hostSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  r.sensitivity = std::move(out);
  return Error::success();
}

} // namespace tessel::runtime

//===- runtime/Simulator.h - Run a program on the simulated core -*- C++ -*-===//
//
// The public API of the NeuronCore simulator:
//
//   auto prog = parseProgramFile("k.tasm");            // runtime/Program.h
//   auto target = loadTarget("trn1");                  // runtime/Target.h
//   SimOptions opts; opts.seed = 7;
//   auto result = simulate(*prog, *target, opts);      // Report + tensors
//
// Functional mode executes the numbers (bf16 data stored as 2-byte bit
// patterns, stores rounded to nearest even, fp32 PSUM accumulation, tile
// products through cblas_sgemm, independent instructions on
// SimOptions::threads threads with the same bits for any count) and times the
// program; timingOnly skips the numbers and the never-written checks.
// Any run-time error (out-of-bounds access, read of never-written SBUF/PSUM,
// PSUM bank overflow, matmul shape limits, capacity exceeded, bad inputs) is
// returned as an llvm::Error naming the instruction (opcode, file:line:col)
// and its loop iteration.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_SIMULATOR_H
#define TESSEL_RUNTIME_SIMULATOR_H

#include "runtime/BF16.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"
#include "runtime/Report.h"
#include "runtime/Target.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tessel::runtime {

struct SimOptions {
  bool timingOnly = false;
  uint64_t seed = 0;
  /// input tensor name -> .npy path (float32, rounded to bf16 for bf16 tensors; or float16)
  std::map<std::string, std::string> inputFiles;
  /// input tensor name -> row-major values (same rounding); takes precedence over files
  std::map<std::string, std::vector<float>> inputData;
  /// input tensor name -> half-width s of its random values (default: randomTensorValues)
  std::map<std::string, double> randomHalfWidth;
  /// if non-empty: one float32 `<tensor>.npy` per output tensor is written here
  std::string outputDir;
  /// if non-empty: Chrome trace-event JSON is written here
  std::string tracePath;
  /// trace slices beyond this many are dropped (the trace says so in its metadata)
  size_t traceMaxEvents = 500000;
  /// keep the per-instruction timeline in SimResult::timeline (tests, tools)
  bool recordTimeline = false;
  /// refuse, before simulating, a program that would execute more dynamic
  /// instructions than this (0: no limit); `run --max-instructions`
  uint64_t maxInstructions = DefaultMaxInstructions;
  /// about 30 minutes of timing-only simulation at 2 M instructions/s
  static constexpr uint64_t DefaultMaxInstructions = 4'000'000'000;
  /// if set: called now and then with (instructions done, instructions in all)
  std::function<void(uint64_t, uint64_t)> progress;
  /// timing-only runs without a trace or timeline: skip the steady-state
  /// iterations of loops arithmetically (runtime/FastForward.h); false: exact
  bool fastForward = false;
  /// which latency the report predicts: adds the target's launch term for it
  LatencyKind latency = LatencyKind::Device;
  /// threads of a functional run's tile products and input generation
  /// (0: the machine's hardware threads); the numbers do not depend on it
  unsigned threads = 0;
  /// the bf16 tensors of the result keep the simulator's own 2-byte storage
  /// (TensorData::bf16) instead of float32 copies of it (TensorData::data)
  bool bf16Results = false;
  /// what the driver ran (the source, pipeline, blocks), copied to the report
  RunDescription run;
};

/// A tensor's values, row-major: float32 in `data` (bf16 values for bf16
/// tensors), or, under SimOptions::bf16Results, a bf16 tensor's bit patterns
/// in `bf16` (and `data` empty).
struct TensorData {
  std::string name;
  DType dtype = DType::BF16;
  std::vector<int64_t> shape;
  std::vector<float> data;
  std::vector<uint16_t> bf16 = {};

  size_t size() const { return bf16.empty() ? data.size() : bf16.size(); }
  float at(size_t i) const { return bf16.empty() ? data[i] : bf16BitsToFloat(bf16[i]); }
};

/// Writes `t` as a float32 .npy file.
llvm::Error writeTensorNpy(llvm::StringRef path, const TensorData &t);

/// One dynamic instruction on the timeline.
struct TraceEvent {
  uint32_t instr;  ///< index into Program::instrs
  uint16_t unit;   ///< 0 tensor, 1 vector, 2 scalar, 3 gpsimd, 4+q DMA queue q
  float rows, cols; ///< tile shape (partitions x free elements) or bytes for DMA
  double startNs, durNs;
  /// A DMA transfer: the time from its issue (startNs) until its queue's
  /// previous transfer completed -- a queue completes its transfers in
  /// order, so this one's own share of the queue starts then. 0 otherwise.
  double queuedNs = 0;
};

struct SimResult {
  Report report;
  std::vector<TensorData> inputs;  ///< the inputs used, in declaration order (empty if timingOnly)
  std::vector<TensorData> outputs; ///< the `output` tensors, in declaration order (empty if timingOnly)
  std::vector<TraceEvent> timeline; ///< if SimOptions::recordTimeline: every instruction, program order
  const TensorData *output(llvm::StringRef name) const;
  const TensorData *input(llvm::StringRef name) const;
};

llvm::Expected<SimResult> simulate(const Program &prog, const Target &target, const SimOptions &opts);

/// The bytes a functional run of `prog` holds at least (its tensors' and
/// buffers' values, written flags and the float32 copies handed back); a
/// run is refused before it allocates when they exceed hostMemoryLimit().
uint64_t functionalMemoryBytes(const Program &prog, const SimOptions &opts);

/// The number of dynamic instructions `prog` executes (every loop has
/// constant bounds, so the count is exact), saturating at UINT64_MAX.
uint64_t dynamicInstructionCount(const Program &prog);

/// A SimOptions::progress that shows, on `os` (a terminal), one line updated
/// in place once the run has taken `afterSeconds`: the share done, the time
/// spent and the time left at the rate so far; the line is cleared when the
/// run ends. `what` names the kernel.
std::function<void(uint64_t, uint64_t)> terminalProgress(llvm::raw_ostream &os, std::string what,
                                                          double afterSeconds = 1.0);

/// The seeded random values used for an input that was not given: uniform in
/// [-s, s), from a generator seeded by (seed, tensor name) -- the same tensor
/// gets the same values for the same seed, whatever else the program holds.
/// Rounded to bf16 for bf16 tensors. s is `halfWidth` when given (the driver
/// knows a .tsl kernel's weights: compiler/RandomInputs.h), else
/// sqrt(3 / shape[0]) (unit variance scaled by the fan-in of a [K, N] weight).
std::vector<float> randomTensorValues(const TensorDecl &t, uint64_t seed,
                                      std::optional<double> halfWidth = std::nullopt);

/// Writes a Chrome trace (see Trace.cpp); used by simulate().
llvm::Error writeChromeTrace(llvm::StringRef path, const Program &prog, const Report &report,
                             const std::vector<TraceEvent> &events, uint64_t droppedEvents);

} // namespace tessel::runtime

#endif

//===- runtime/Target.h - Hardware (NeuronCore) descriptions ----*- C++ -*-===//
//
// A Target holds every number the simulator's timing model and run-time
// checks use. The field list is runtime/TargetFields.def (name, unit,
// constraint, meaning); the values of the built-in `trn1` target, each with
// its source in docs/hardware.md, are in Target.cpp; further targets are JSON
// files (runtime/targets/trn2.json is embedded into the binary).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_TARGET_H
#define TESSEL_RUNTIME_TARGET_H

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tessel::runtime {

struct Target {
  std::string name;
  std::string description;
#define TARGET_FIELD_Int int64_t
#define TARGET_FIELD_Real double
#define TARGET_FIELD(TYPE, NAME, CONSTRAINT, UNIT, DESC) TARGET_FIELD_##TYPE NAME = 0;
#include "runtime/TargetFields.def"
#undef TARGET_FIELD_Int
#undef TARGET_FIELD_Real

  // --- Derived quantities (not stored in JSON) ---
  /// Peak bf16 TensorE flop/s: pe_rows * pe_cols * 2 * tensor_clock.
  double peakBf16Flops() const { return double(pe_rows) * double(pe_cols) * 2.0 * tensor_clock_ghz * 1e9; }
  /// HBM bandwidth in bytes per nanosecond (GB/s == bytes/ns).
  double hbmBytesPerNs() const { return hbm_bandwidth_gbs; }
  /// Aggregate bandwidth of the DMA engine pool in bytes/ns.
  double dmaPoolBytesPerNs() const { return double(dma_engines) * dma_engine_bandwidth_gbs; }
  int64_t sbufCapacityBytes() const { return sbuf_partitions * sbuf_bytes_per_partition; }
  int64_t psumCapacityBytes() const { return sbuf_partitions * psum_bytes_per_partition; }
  /// Ridge point (flop/byte) of the bf16 roofline.
  double ridgeFlopsPerByte() const { return peakBf16Flops() / (hbm_bandwidth_gbs * 1e9); }
};

/// A target name: letters, digits, '_', '.', '-' and '+', not empty
/// ("trn1-small-sbuf"). The JSON "name" must be one, so that a .tasm
/// program's `target` line can name it.
inline bool isTargetNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-' || c == '+';
}
inline bool isTargetName(llvm::StringRef name) {
  return !name.empty() && llvm::all_of(name, isTargetNameChar);
}

/// The built-in trn1 (NeuronCore-v2) target.
const Target &trn1Target();

/// Names accepted by loadTarget without a path: "trn1" and every embedded
/// runtime/targets/*.json.
std::vector<std::string> builtinTargetNames();

/// Loads a target by built-in name ("trn1", "trn2") or from a JSON file path.
llvm::Expected<Target> loadTarget(llvm::StringRef nameOrPath);

/// Parses a target description from JSON text; `origin` names the source in
/// errors ("trn2.json: field 'hbm_bandwidth_gbs' must be > 0, got -1"). A
/// description naming a built-in `"base"` takes the fields it does not give
/// from it; one without gives every field (docs/targets.md).
llvm::Expected<Target> parseTargetJSON(llvm::StringRef text, llvm::StringRef origin);

/// The target as JSON: every field, plus "_derived" (informational, ignored
/// when loading). A good template for a new target file.
llvm::json::Value targetToJSON(const Target &t);
/// The same as pretty JSON text, fields in TargetFields.def order with their
/// unit and meaning in "_doc", numbers in shortest round-trip form.
std::string targetToJSONText(const Target &t);

/// Checks every constraint of TargetFields.def plus cross-field sanity.
llvm::Error validateTarget(const Target &t, llvm::StringRef origin);

} // namespace tessel::runtime

#endif

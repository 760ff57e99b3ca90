//===- compiler/Check.cpp - `tessel run --check` against the reference ------===//
#include "compiler/Check.h"
#include "compiler/Reference.h"

#include "llvm/Support/FormatVariadic.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace tessel::compiler {

namespace {

/// The number of Inf/NaN values of `data` and the index of the first.
std::pair<size_t, size_t> countNonFinite(const runtime::TensorData &t) {
  size_t count = 0, first = 0;
  for (size_t i = 0, n = t.size(); i < n; ++i)
    if (!std::isfinite(t.at(i)) && count++ == 0)
      first = i;
  return {count, first};
}

/// A value as the report shows it: 7 significant digits, an exponent when
/// large or small (2.724917e+38, not its first 31 digits).
std::string number(double v) { return fmt::format("{:.7g}", v); }

/// Whether a finite `finite` and an infinite `inf` of the same sign lie at
/// the edge of overflow (|finite| above FLT_MAX / 16): the rounding the
/// check allows can carry a value across it (exp of an input that bf16
/// storage rounds down by a quarter stays finite where the fp32 reference
/// overflows).
bool acrossOverflowEdge(float finite, float inf) {
  return std::isinf(inf) && std::isfinite(finite) && std::signbit(finite) == std::signbit(inf) &&
         std::fabs(finite) > std::numeric_limits<float>::max() / 16;
}

std::string position(const std::vector<int64_t> &shape, size_t index) {
  int64_t cols = shape.size() >= 2 ? shape.back() : 1, i = int64_t(index);
  if (shape.size() == 3) {
    int64_t perHead = shape[1] * cols;
    return llvm::formatv("[{0}, {1}, {2}]", i / perHead, i % perHead / cols, i % cols);
  }
  return llvm::formatv("[{0}, {1}]", i / cols, i % cols);
}

bool failWith(llvm::json::Object &check, const std::string &why) {
  check["passed"] = false;
  check["error"] = why;
  return false;
}

} // namespace

std::string checkMethod(const ast::Kernel &kernel) {
  if (allF32(kernel))
    return "error bound: each element of this fp32 kernel within 8x the reference's estimate of fp32 rounding "
           "(2^-24) at every stored intermediate and in accumulation (docs/tasm.md)";
  return "error bound: each element within 8x the reference's estimate of bf16 rounding at every stored "
         "intermediate and fp32 accumulation (docs/tasm.md)";
}

int64_t smallestContractionBlock(const ir::BlockConfig &blocks) {
  int64_t smallest = 0;
  for (const auto &[name, value] : blocks)
    if (name != ir::BlockConfig::kRowStrip && !ir::BlockConfig::isColumnBlock(name) && value > 0)
      smallest = smallest ? std::min(smallest, value) : value;
  return smallest;
}

bool checkAgainstReference(const ast::Kernel &kernel, const runtime::SimResult &result,
                           const std::string &outputName, llvm::json::Object &check, int64_t kBlock,
                           llvm::ArrayRef<float> extraError) {
  check["method"] = checkMethod(kernel);
  std::map<std::string, HostTensor> inputs;
  for (const runtime::TensorData &t : result.inputs) {
    auto [count, first] = countNonFinite(t);
    if (count)
      return failWith(check, llvm::formatv("input '{0}' holds {1} Inf/NaN values (the first at {2}); "
                                           "the comparison needs finite inputs",
                                           t.name, count, position(t.shape, first)));
    // Read in place: the reference makes no copy of the inputs.
    inputs[t.name] = HostTensor{t.shape, {}, {}, t.data, t.bf16};
  }
  auto reference = evaluateReference(kernel, inputs, kBlock);
  const runtime::TensorData *out = result.output(outputName);
  if (!reference || !out)
    return failWith(check, reference ? "the program has no output '" + outputName + "'"
                                     : llvm::toString(reference.takeError()));
  HostTensor &ref = reference->at(kReferenceResultKey);
  if (ref.data.empty() && (!ref.f32.empty() || !ref.bf16.empty())) {
    // The kernel returns an input as it is: the reference holds a view of it.
    std::vector<float> values(!ref.bf16.empty() ? ref.bf16.size() : ref.f32.size());
    for (size_t i = 0; i < values.size(); ++i)
      values[i] = ref.at(i);
    ref.data = std::move(values);
  }
  if (ref.error.size() != ref.data.size())
    ref.error.assign(ref.data.size(), 0.0f); // exact values (an input)
  if (ref.data.size() != out->size())
    return failWith(check, "output has " + std::to_string(out->size()) + " elements, reference " +
                               std::to_string(ref.data.size()));
  if (!extraError.empty()) {
    if (extraError.size() != ref.error.size())
      return failWith(check, "the extra error estimate has " + std::to_string(extraError.size()) +
                                 " elements, the output " + std::to_string(ref.error.size()));
    for (size_t i = 0; i < ref.error.size(); ++i)
      ref.error[i] = float(std::hypot(double(ref.error[i]), double(extraError[i])));
  }
  double maxAbsErr = 0, maxRef = 0, worst = 0;
  size_t worstAt = 0, nonFinite = 0, firstNonFinite = 0;
  for (size_t i = 0; i < ref.data.size(); ++i) {
    float o = out->at(i), r = ref.data[i];
    if (!std::isfinite(o) || !std::isfinite(r)) {
      // Overflow where the reference overflows too is a match.
      bool match = o == r || (std::isnan(o) && std::isnan(r)) || acrossOverflowEdge(o, r) ||
                   acrossOverflowEdge(r, o);
      if (!match && nonFinite++ == 0)
        firstNonFinite = i;
      continue;
    }
    double diff = std::fabs(double(o) - double(r));
    maxAbsErr = std::max(maxAbsErr, diff);
    maxRef = std::max(maxRef, std::fabs(double(ref.data[i])));
    // The smallest normal float: an exact zero may come out as a flushed subnormal.
    double allowed = kErrorBoundFactor * double(ref.error[i]) + std::numeric_limits<float>::min();
    double ratio = diff / allowed;
    if (ratio > worst) {
      worst = ratio;
      worstAt = i;
    }
  }
  bool passed = worst <= 1;
  check["max_abs_err"] = maxAbsErr;
  check["max_rel_err"] = maxRef > 0 ? maxAbsErr / maxRef : maxAbsErr;
  check["max_abs_reference"] = maxRef;
  if (nonFinite)
    return failWith(check, llvm::formatv("{0} output values are Inf/NaN where the reference is not, "
                                         "or the other way round (the first at {1}: {2} against {3})",
                                         nonFinite, position(ref.shape, firstNonFinite),
                                         number(out->at(firstNonFinite)), number(ref.data[firstNonFinite])));
  check["max_err_over_bound"] = worst;
  if (!passed)
    check["worst_element"] = llvm::formatv("{0}: {1} against {2} (allowed +-{3})",
                                           position(ref.shape, worstAt), number(out->at(worstAt)),
                                           number(ref.data[worstAt]),
                                           number(kErrorBoundFactor * double(ref.error[worstAt])))
                                 .str();
  check["passed"] = passed;
  return passed;
}

} // namespace tessel::compiler

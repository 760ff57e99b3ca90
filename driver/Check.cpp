#include "driver/Check.h"
#include "driver/Reference.h"

#include <cmath>

namespace tessel::driver {

bool checkAgainstReference(const ast::Kernel &kernel, const runtime::SimResult &result,
                           const std::string &outputName, llvm::json::Object &check) {
  std::map<std::string, HostTensor> inputs;
  for (const runtime::TensorData &t : result.inputs)
    inputs[t.name] = HostTensor{t.shape, t.data};
  auto reference = evaluateReference(kernel, inputs);
  const runtime::TensorData *out = result.output(outputName);
  check["tolerance"] = kCheckTolerance;
  if (!reference || !out) {
    check["passed"] = false;
    check["error"] = reference ? "the program has no output '" + outputName + "'"
                               : llvm::toString(reference.takeError());
    return false;
  }
  const HostTensor &ref = reference->at(kReferenceResultKey);
  if (ref.data.size() != out->data.size()) {
    check["passed"] = false;
    check["error"] = "output has " + std::to_string(out->data.size()) + " elements, reference " +
                     std::to_string(ref.data.size());
    return false;
  }
  double maxAbsErr = 0, maxRef = 0;
  bool finite = true;
  for (size_t i = 0; i < ref.data.size(); ++i) {
    double diff = std::fabs(double(out->data[i]) - double(ref.data[i]));
    finite &= std::isfinite(double(out->data[i]));
    maxAbsErr = std::max(maxAbsErr, diff);
    maxRef = std::max(maxRef, std::fabs(double(ref.data[i])));
  }
  double maxRelErr = maxRef > 0 ? maxAbsErr / maxRef : maxAbsErr;
  bool passed = finite && maxRelErr <= kCheckTolerance;
  check["max_abs_err"] = maxAbsErr;
  check["max_rel_err"] = maxRelErr;
  check["max_abs_reference"] = maxRef;
  check["passed"] = passed;
  return passed;
}

} // namespace tessel::driver

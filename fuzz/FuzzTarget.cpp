//===- fuzz/FuzzTarget.cpp - target description JSON ----------------------===//
#include "fuzz/FuzzUtil.h"

#include "runtime/Target.h"

using namespace tessel;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto target = fuzz::accepted(runtime::parseTargetJSON(fuzz::asText(data, size), "fuzz.json"));
  if (!target)
    return 0;
  // An accepted target prints to JSON that is accepted again, unchanged.
  std::string printed = runtime::targetToJSONText(*target);
  auto again = fuzz::accepted(runtime::parseTargetJSON(printed, "printed.json"));
  fuzz::checkFixedPoint(printed, again ? std::optional<std::string>(runtime::targetToJSONText(*again))
                                       : std::nullopt);
  return 0;
}

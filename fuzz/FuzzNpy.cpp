//===- fuzz/FuzzNpy.cpp - NumPy .npy bytes ---------------------------------===//
#include "fuzz/FuzzUtil.h"

#include "runtime/Npy.h"

using namespace tessel;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto array = fuzz::accepted(runtime::parseNpy(fuzz::asText(data, size), "fuzz.npy"));
  if (!array)
    return 0;
  size_t elements = 1;
  for (int64_t d : array->shape)
    elements *= size_t(d);
  if (elements != array->data.size())
    fuzz::invariantFailed("the shape does not match the data", runtime::formatShape(array->shape),
                          std::to_string(array->data.size()));
  return 0;
}

//===- fuzz/FuzzTuneCache.cpp - the tune cache file ------------------------===//
#include "fuzz/FuzzUtil.h"

#include "tune/TuneCache.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tessel::tune::parseCacheText(tessel::fuzz::asText(data, size));
  return 0;
}

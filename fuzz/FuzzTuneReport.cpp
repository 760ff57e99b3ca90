//===- fuzz/FuzzTuneReport.cpp - tune --report=json shards (tune merge) ---===//
#include "fuzz/FuzzUtil.h"

#include "tune/TuneReport.h"

using namespace tessel;

static std::string write(const tune::TuneReport &report) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << tune::reportToJSON(report);
  return os.str();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto report = fuzz::accepted(tune::parseReportJSON(fuzz::asText(data, size), "fuzz.json"));
  if (!report)
    return 0;
  fuzz::accepted(tune::checkShardResults(*report, "fuzz.json")); // may reject it, never crash
  // An accepted report written out reads back to the same report.
  std::string written = write(*report);
  auto again = fuzz::accepted(tune::parseReportJSON(written, "written.json"));
  fuzz::checkFixedPoint(written, again ? std::optional<std::string>(write(*again)) : std::nullopt);
  return 0;
}

//===- fuzz/FuzzTasm.cpp - .tasm programs: parser and printer -------------===//
#include "fuzz/FuzzUtil.h"

#include "runtime/Program.h"

using namespace tessel;

static std::string print(const runtime::Program &prog) {
  std::string s;
  llvm::raw_string_ostream os(s);
  runtime::printProgram(prog, os);
  return os.str();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto prog = fuzz::accepted(runtime::parseProgram(fuzz::asText(data, size), "fuzz.tasm"));
  if (!prog)
    return 0;
  std::string printed = print(*prog);
  auto again = fuzz::accepted(runtime::parseProgram(printed, "printed.tasm"));
  fuzz::checkFixedPoint(printed, again ? std::optional<std::string>(print(*again)) : std::nullopt);
  return 0;
}

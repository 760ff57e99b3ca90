//===- driver/OptionChecks.cpp - Options given without effect -------------===//
#include "driver/OptionChecks.h"

#include "llvm/Support/WithColor.h"

namespace tessel::driver {

bool rejectEmptyValue(const llvm::cl::opt<std::string> &opt) {
  if (!opt.getNumOccurrences() || !opt.getValue().empty())
    return true;
  llvm::WithColor::error(llvm::errs(), "tessel")
      << "--" << opt.ArgStr << " was given an empty value; give " << opt.ValueStr
      << " or leave the option out\n";
  return false;
}

} // namespace tessel::driver

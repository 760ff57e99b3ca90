//===- driver/OptionChecks.cpp - Options given without effect -------------===//
#include "driver/OptionChecks.h"

#include "llvm/Support/FileSystem.h"
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

bool rejectInputAsOutput(llvm::StringRef flag, llvm::StringRef output, llvm::ArrayRef<std::string> inputs) {
  if (output.empty() || output == "-")
    return true;
  for (const std::string &input : inputs) {
    bool same = false;
    if (input == "-" || llvm::sys::fs::equivalent(input, output, same) || !same)
      continue;
    llvm::WithColor::error(llvm::errs(), "tessel")
        << flag << " " << output << " is the input '" << input
        << "': writing it would replace the input; choose another file\n";
    return false;
  }
  return true;
}

} // namespace tessel::driver

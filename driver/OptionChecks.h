//===- driver/OptionChecks.h - Options given without effect ----*- C++ -*-===//
//
// An option that is given but would do nothing is an error, never silently
// ignored: `--target=` or `--output-dir ""` (an empty value).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_DRIVER_OPTIONCHECKS_H
#define TESSEL_DRIVER_OPTIONCHECKS_H

#include "llvm/Support/CommandLine.h"

#include <string>

namespace tessel::driver {

/// False (after reporting "--NAME= needs a value") when `opt` was given with
/// an empty value.
bool rejectEmptyValue(const llvm::cl::opt<std::string> &opt);

} // namespace tessel::driver

#endif

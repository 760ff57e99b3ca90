//===- driver/OptionChecks.h - Options given without effect ----*- C++ -*-===//
//
// An option that is given but would do nothing is an error, never silently
// ignored: `--target=` or `--output-dir ""` (an empty value). An output that
// would replace one of the command's inputs is an error too.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_DRIVER_OPTIONCHECKS_H
#define TESSEL_DRIVER_OPTIONCHECKS_H

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace tessel::driver {

/// False (after reporting "--NAME= needs a value") when `opt` was given with
/// an empty value.
bool rejectEmptyValue(const llvm::cl::opt<std::string> &opt);

/// `text`, the value of the count option `flag` ("--budget"), as a number.
/// The option is read as text because LLVM's own parser reports a negative
/// or non-numeric value as "'-1' value invalid for ulong argument!"; here
/// the error names the option and the value and then says `what` (e.g. "the
/// budget is a positive count of configurations to simulate, e.g. --budget 20").
llvm::Expected<uint64_t> parseCount(llvm::StringRef flag, llvm::StringRef text, llvm::StringRef what);

/// False (after reporting) when two -D flags set one name: which value wins
/// would be a guess, as with a --block parameter given twice. `defines` are
/// the -D values as typed ("M=8192"); malformed ones are left to the parser.
bool rejectRepeatedDefines(llvm::ArrayRef<std::string> defines);

/// False (after reporting) when `output`, the value of `flag`, is the same
/// file as one of `inputs`: compared by file identity, so another spelling
/// of the path or a link to it counts. '-' and files that do not exist yet
/// are never inputs.
bool rejectInputAsOutput(llvm::StringRef flag, llvm::StringRef output, llvm::ArrayRef<std::string> inputs);

/// The file --target=`name` reads: `name`, or "" for a built-in target
/// (resolved before any file of that name).
std::string targetFile(llvm::StringRef name);

/// A file the command writes, and the flag that names it.
struct NamedOutput {
  std::string flag, path;
};

/// False (after reporting) when an output would replace one of `inputs`
/// (rejectInputAsOutput) or another output (one of the two would be lost);
/// outputs that are empty or '-' are not files.
bool rejectClashingOutputs(llvm::ArrayRef<NamedOutput> outputs, llvm::ArrayRef<std::string> inputs);

/// False (after reporting) when an output file cannot be written where it
/// is named: a directory, or in a directory that does not exist; '-' is
/// refused for outputs that are never stdout (`allowStdout` false). Checked
/// before the work, so a long run does not end in "cannot write".
bool rejectUnwritableOutput(const NamedOutput &output, bool allowStdout = true);

} // namespace tessel::driver

#endif

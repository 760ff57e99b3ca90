//===- driver/CommonOptions.h - Options shared by tessel commands -*- C++ -*-===//
//
// Option groups a command constructs as local objects before parsing the
// command line (see Commands.h).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_DRIVER_COMMONOPTIONS_H
#define TESSEL_DRIVER_COMMONOPTIONS_H

#include "frontend/Frontend.h"

#include "llvm/Support/CommandLine.h"

#include <string>
#include <vector>

namespace tessel::driver {

llvm::cl::OptionCategory &toolCategory();

/// Parses argv after hiding LLVM's own library options, so --help shows only
/// the command's options. Returns false (after printing) on a bad flag.
bool parseCommandLine(int argc, char **argv, const char *overview);

/// Options of commands that read .tsl source: -k, -D.
struct SourceOptions {
  llvm::cl::opt<std::string> kernel{
      "k", llvm::cl::desc("Kernel to compile (may be omitted when the file has one kernel)"),
      llvm::cl::value_desc("KERNEL"), llvm::cl::cat(toolCategory())};
  llvm::cl::list<std::string> defines{
      "D", llvm::cl::desc("Override a `const` of the source, e.g. -D M=8192 (repeatable)"),
      llvm::cl::value_desc("NAME=INT"), llvm::cl::Prefix, llvm::cl::cat(toolCategory())};

  /// Splits the -D flags into name/value pairs; reports a malformed one.
  bool collectDefines(std::vector<Define> &out) const;
};

} // namespace tessel::driver

#endif

//===- driver/Commands.h - The `tessel` subcommands ------------*- C++ -*-===//
//
// Each subcommand is an llvm::cl::SubCommand declared here and defined with
// its own options in <Name>Command.cpp; options shared by several commands
// live in CommonOptions.cpp. Every command returns the process exit status:
// 0 success, 1 user error (already reported on stderr).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_DRIVER_COMMANDS_H
#define TESSEL_DRIVER_COMMANDS_H

#include "llvm/Support/CommandLine.h"

namespace tessel::driver {

extern llvm::cl::SubCommand CompileCmd;
extern llvm::cl::SubCommand OptCmd;
extern llvm::cl::SubCommand RunCmd;

int runCompileCommand();
int runOptCommand();
int runRunCommand();

} // namespace tessel::driver

#endif

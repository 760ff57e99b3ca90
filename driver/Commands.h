//===- driver/Commands.h - The `tessel` subcommands ------------*- C++ -*-===//
//
// `main` dispatches on the first argument; each subcommand lives in
// <Name>Command.cpp and is called with argv[0] = "tessel <name>". A command
// holds its llvm::cl options in one LOCAL options struct (the option groups
// and SharedOptions of CommonOptions.h among them) with a validate() for their
// checks, then calls parseCommandLine, so each command's --help lists exactly
// its own options and no static-initialisation order is involved. It reads
// its input through loadProgram (LoadProgram.h). docs/architecture.md, "A new
// command".
// Every command returns the process exit status: 0 success, 1 user error
// (already reported on stderr).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_DRIVER_COMMANDS_H
#define TESSEL_DRIVER_COMMANDS_H

namespace tessel::driver {

int runCompileCommand(int argc, char **argv);
int runOptCommand(int argc, char **argv);
int runRunCommand(int argc, char **argv);
/// `tessel tune` (and `tessel tune merge`, dispatched on argv[1]).
int runTuneCommand(int argc, char **argv);
/// `tessel factorize`: low-rank factors of a weight .npy.
int runFactorizeCommand(int argc, char **argv);
int runCalibrateCommand(int argc, char **argv);
/// `tessel model`: an LLM's prefill and decode latency from its config.json.
int runModelCommand(int argc, char **argv);

} // namespace tessel::driver

#endif

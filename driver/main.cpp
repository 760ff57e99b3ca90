//===- driver/main.cpp - The `tessel` command-line tool ------------------===//
#include "driver/Commands.h"
#include "runtime/BlasThreads.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

using namespace tessel::driver;

static const char *kUsage =
    "OVERVIEW: tessel: a kernel compiler and NeuronCore simulator for Trainium-style accelerators\n"
    "\n"
    "USAGE: tessel <command> [options] FILE\n"
    "\n"
    "COMMANDS:\n"
    "  compile   compile a .tsl kernel to its AST, tile IR or simulator program\n"
    "  opt       read tile IR text (.tir), verify it and print it back\n"
    "  run       run a kernel (.tsl, .tir or .tasm) on the NeuronCore simulator\n"
    "  tune      find a kernel's fastest block configuration (and `tune merge` of shards)\n"
    "  factorize split a weight .npy into tile-aligned low-rank factors U, V (SVD)\n"
    "  calibrate fit a target's free timing parameters to measured latencies\n"
    "  model     predict an LLM's prefill and decode latency from its config.json\n"
    "\n"
    "  tessel <command> --help   lists a command's options\n"
    "  tessel --version          prints the version\n";

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  tessel::runtime::releaseIdleBlasThreads();
  if (argc < 2) {
    llvm::errs() << kUsage;
    return 1;
  }
  llvm::StringRef command = argv[1];
  if (command == "--help" || command == "-help" || command == "-h" || command == "help") {
    llvm::outs() << kUsage;
    return 0;
  }
  if (command == "--version" || command == "-version") {
    llvm::outs() << "tessel version " TESSEL_VERSION_STRING "\n";
    return 0;
  }

  // Re-form argv so the command sees "tessel <command>" as its program name.
  std::string programName = std::string("tessel ") + argv[1];
  std::vector<char *> args{programName.data()};
  for (int i = 2; i < argc; ++i)
    args.push_back(argv[i]);
  int subArgc = static_cast<int>(args.size());
  args.push_back(nullptr);

  if (command == "compile")
    return runCompileCommand(subArgc, args.data());
  if (command == "opt")
    return runOptCommand(subArgc, args.data());
  if (command == "run")
    return runRunCommand(subArgc, args.data());
  if (command == "tune")
    return runTuneCommand(subArgc, args.data());
  if (command == "factorize")
    return runFactorizeCommand(subArgc, args.data());
  if (command == "calibrate")
    return runCalibrateCommand(subArgc, args.data());
  if (command == "model")
    return runModelCommand(subArgc, args.data());
  llvm::WithColor::error(llvm::errs(), "tessel")
      << "unknown command '" << command << "'; expected compile, opt, run, tune, factorize, calibrate or model (see tessel --help)\n";
  return 1;
}

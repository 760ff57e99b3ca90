//===- driver/main.cpp - The `tessel` command-line tool ------------------===//
#include "driver/Commands.h"

#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace tessel::driver;

static void printVersion(llvm::raw_ostream &os) {
  os << "tessel version " TESSEL_VERSION_STRING "\n"
     << "  kernel compiler and NeuronCore simulator for Trainium-style accelerators\n"
     << "  default target: trn1 (NeuronCore-v2)\n";
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  llvm::cl::SetVersionPrinter(printVersion);
  if (argc < 2) {
    llvm::errs() << "usage: tessel <compile|opt|run> [options] FILE\n"
                    "       tessel --help      for the commands\n"
                    "       tessel <command> --help   for a command's options\n";
    return 1;
  }
  if (!llvm::cl::ParseCommandLineOptions(
          argc, argv,
          "tessel: a kernel compiler for Trainium-style accelerators\n\n"
          "  tessel compile FILE.tsl   compile a kernel to tile IR or a simulator program\n"
          "  tessel opt FILE.tir       run passes on tile IR text (and verify it)\n"
          "  tessel run FILE           run a kernel on the NeuronCore simulator\n",
          &llvm::errs()))
    return 1;
  if (CompileCmd)
    return runCompileCommand();
  if (OptCmd)
    return runOptCommand();
  if (RunCmd)
    return runRunCommand();
  llvm::WithColor::error(llvm::errs(), "tessel")
      << "no command given; expected one of: compile, opt, run (see tessel --help)\n";
  return 1;
}

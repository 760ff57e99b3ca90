//===- driver/main.cpp - The `tessel` command-line tool ------------------===//
#include "driver/Commands.h"
#include "runtime/BlasThreads.h"
#include "support/Suggest.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

using namespace tessel::driver;

namespace {

/// The commands, in the order `tessel --help` lists them: one registration
/// gives the dispatch, the usage text and the unknown-command suggestion.
struct Command {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
};

const Command kCommands[] = {
    {"compile", runCompileCommand, "compile a .tsl kernel to its AST, tile IR or simulator program"},
    {"opt", runOptCommand, "read tile IR text (.tir), verify it and print it back"},
    {"run", runRunCommand, "run a kernel (.tsl, .tir or .tasm) on the NeuronCore simulator"},
    {"tune", runTuneCommand, "find a kernel's fastest block configuration (and `tune merge` of shards)"},
    {"factorize", runFactorizeCommand, "split a weight .npy into tile-aligned low-rank factors U, V (SVD)"},
    {"calibrate", runCalibrateCommand, "fit a target's free timing parameters to measured latencies"},
    {"model", runModelCommand, "predict an LLM's prefill and decode latency from its config.json"},
};

void printUsage(llvm::raw_ostream &os) {
  os << "OVERVIEW: tessel: a kernel compiler and NeuronCore simulator for Trainium-style "
        "accelerators\n\nUSAGE: tessel <command> [options] FILE\n\nCOMMANDS:\n";
  for (const Command &c : kCommands)
    os << llvm::formatv("  {0,-9} {1}\n", c.name, c.summary);
  os << "\n  tessel <command> --help   lists a command's options\n"
        "  tessel --version          prints the version\n";
}

int unknownCommand(llvm::StringRef command) {
  std::vector<llvm::StringRef> names;
  for (const Command &c : kCommands)
    names.push_back(c.name);
  std::string hint = tessel::closestName(command, names);
  llvm::WithColor::error(llvm::errs(), "tessel")
      << "unknown command '" << command << "'"
      << (hint.empty() ? "; expected " + llvm::join(names, ", ") : "; did you mean '" + hint + "'?")
      << " (see tessel --help)\n";
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  tessel::runtime::releaseIdleBlasThreads();
  if (argc < 2) {
    printUsage(llvm::errs());
    return 1;
  }
  llvm::StringRef command = argv[1];
  if (command == "--help" || command == "-help" || command == "-h" || command == "help") {
    printUsage(llvm::outs());
    return 0;
  }
  if (command == "--version" || command == "-version") {
    llvm::outs() << "tessel version " TESSEL_VERSION_STRING "\n";
    return 0;
  }
  // The command sees "tessel <command>" as its program name.
  std::string programName = std::string("tessel ") + argv[1];
  std::vector<char *> args{programName.data()};
  for (int i = 2; i < argc; ++i)
    args.push_back(argv[i]);
  int subArgc = static_cast<int>(args.size());
  args.push_back(nullptr);
  for (const Command &c : kCommands)
    if (command == c.name)
      return c.run(subArgc, args.data());
  return unknownCommand(command);
}

//===- driver/CompileCommand.cpp - `tessel compile` -----------------------===//
#include "driver/Commands.h"
#include "driver/CommonOptions.h"
#include "driver/Compile.h"
#include "driver/TensorParallel.h"
#include "driver/NkiInput.h"

#include "ir/Printer.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

namespace cl = llvm::cl;

namespace tessel::driver {

namespace {
enum class EmitKind { AST, TIR, TASM };
} // namespace

int runCompileCommand(int argc, char **argv) {
  cl::opt<std::string> input(cl::Positional, cl::desc("<kernel source .tsl ('-' for stdin), or an NKI kernel .py>"),
                             cl::cat(toolCategory()));
  SourceOptions source;
  PipelineOptions pipeline;
  NkiOptions nki;
  cl::opt<EmitKind> emit(
      "emit", cl::desc("What to print (default: tir)"), cl::init(EmitKind::TIR),
      cl::values(clEnumValN(EmitKind::AST, "ast", "the typed AST, with shapes and locations"),
                 clEnumValN(EmitKind::TIR, "tir", "the verified tile IR (round-trips through tessel opt)"),
                 clEnumValN(EmitKind::TASM, "tasm", "the simulator program (run it with tessel run)")),
      cl::cat(toolCategory()));
  cl::opt<std::string> targetName("target",
                                  cl::desc("Hardware description: trn1 (default), trn2, or a JSON file"),
                                  cl::value_desc("trn1|trn2|FILE.json"), cl::init("trn1"),
                                  cl::cat(toolCategory()));
  cl::opt<std::string> output("o", cl::desc("Write the output to FILE ('-' for stdout)"),
                              cl::value_desc("FILE"), cl::init("-"), cl::cat(toolCategory()));
  if (!parseCommandLine(argc, argv,
                        "tessel compile: compile a .tsl kernel description\n\n"
                        "Parses and type-checks the source, binds constants (-D), and lowers the\n"
                        "selected kernel to tile IR in the straightforward form (DESIGN §4), then\n"
                        "runs the pass pipeline (-O0 by default: no passes; docs/passes.md).\n"))
    return 1;
  int status = 0;
  if (pipeline.handleInfoFlags(status))
    return status;
  if (input.empty()) {
    llvm::WithColor::error(llvm::errs(), "tessel")
        << "no input file (usage: tessel compile [options] FILE.tsl; see tessel compile --help)\n";
    return 1;
  }

  if (isNkiSource(input) || !nki.args.empty())
    return compileNkiKernel({input, source.kernel, {nki.args.begin(), nki.args.end()}, {}}, targetName,
                            emit == EmitKind::TASM, output,
                            !source.defines.empty() || !pipeline.compileFlagsGiven().empty() ||
                                emit == EmitKind::AST || source.tp != 1);

  std::vector<Define> defines;
  if (!source.collectDefines(defines))
    return 1;
  Frontend fe;
  if (!runFrontend(fe, input, defines, source.kernel))
    return 1;

  std::string flags = pipeline.compileFlagsGiven();
  if (emit == EmitKind::AST && source.tp != 1)
    flags += std::string(flags.empty() ? "" : ", ") + "--tp";
  if (emit == EmitKind::AST && !flags.empty()) {
    llvm::WithColor::error(llvm::errs(), "tessel")
        << flags << ": --emit=ast prints the source's AST, before any lowering or pass\n";
    return 1;
  }
  // The output is built in memory and written only on success, so a failed
  // compile leaves an existing -o file as it was.
  std::string text;
  llvm::raw_string_ostream os(text);
  if (emit == EmitKind::AST) {
    printAST(*fe.module, fe.sourceMgr, os);
  } else {
    auto target = runtime::loadTarget(targetName);
    if (!target) {
      llvm::WithColor::error(llvm::errs(), "tessel") << llvm::toString(target.takeError()) << "\n";
      return 1;
    }
    frontend::TensorParallelPlan tpPlan;
    if (source.tp != 1 && !shardForTensorParallel(fe, source.tp, *target, tpPlan))
      return 1;
    CompileOptions options;
    if (!resolveCompileOptions(fe, pipeline, *target, options))
      return 1;
    auto kernel = compileKernel(fe, options, *target);
    if (!kernel)
      return 1;
    if (emit == EmitKind::TIR) {
      if (source.tp != 1)
        os << describeTensorParallel(tpPlan, *fe.kernel, *target);
      ir::printKernel(*kernel, os);
    } else {
      auto program = emitProgram(*kernel, *target);
      if (!program) {
        llvm::WithColor::error(llvm::errs(), "tessel") << llvm::toString(program.takeError()) << "\n";
        return 1;
      }
      runtime::printProgram(*program, os);
    }
  }
  std::error_code ec;
  llvm::ToolOutputFile out(output, ec, llvm::sys::fs::OF_Text);
  if (ec) {
    llvm::WithColor::error(llvm::errs(), "tessel")
        << "cannot write '" << output << "': " << ec.message() << "\n";
    return 1;
  }
  out.os() << os.str();
  out.keep();
  return 0;
}

} // namespace tessel::driver

//===- driver/CompileCommand.cpp - `tessel compile` -----------------------===//
#include "driver/Commands.h"
#include "driver/CommonOptions.h"
#include "driver/CompileOptions.h"
#include "compiler/Compile.h"
#include "compiler/TensorParallel.h"
#include "compiler/NkiInput.h"
#include "compiler/InputFormat.h"
#include "driver/OptionChecks.h"
#include "tune/TuneCache.h"
#include "compiler/TirInput.h"

#include "backend/NkiEmitter.h"
#include "ir/Printer.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

namespace cl = llvm::cl;

namespace tessel::driver {
using namespace compiler;
using namespace tune;

namespace {

enum class EmitKind { AST, TIR, TASM, NKI, NKI_BENCH };

void error(const llvm::Twine &msg) {
  // Located errors (the parser's, the backend's) already say "file:line:col: error:".
  std::string text = msg.str();
  if (llvm::StringRef(text).contains(": error: "))
    llvm::errs() << text << "\n";
  else
    llvm::WithColor::error(llvm::errs(), "tessel") << text << "\n";
}

/// Writes `text` to `output` ('-': stdout); false after reporting.
bool writeOutput(const std::string &output, llvm::StringRef text) {
  std::error_code ec;
  llvm::ToolOutputFile out(output, ec, llvm::sys::fs::OF_Text);
  if (ec) {
    error("cannot write '" + output + "': " + ec.message());
    return false;
  }
  out.os() << text;
  out.keep();
  return true;
}

/// `tessel compile x.tir`: the pipeline on tile IR (as tessel opt runs it),
/// then the IR or the program.
int compileTir(std::unique_ptr<llvm::MemoryBuffer> buffer, EmitKind emit, const SourceOptions &source,
               const PipelineOptions &pipeline, const std::string &targetName, const std::string &output,
               const std::string &nkiApi, const std::string &command) {
  if (emit == EmitKind::AST) {
    error("--emit=ast needs a .tsl source; tile IR has no AST");
    return 1;
  }
  if (!source.defines.empty()) {
    error("-D applies to .tsl sources only (tile IR has its shapes bound)");
    return 1;
  }
  auto target = runtime::loadTarget(targetName);
  if (!target) {
    error(llvm::toString(target.takeError()));
    return 1;
  }
  TirInput tir;
  CompileOptions tirOptions;
  if (!resolveTirOptions(pipeline, tirOptions) ||
      !loadTirKernel(tir, std::move(buffer), source.kernel, tirOptions, *target))
    return 1;
  std::string text;
  llvm::raw_string_ostream os(text);
  if (emit == EmitKind::NKI || emit == EmitKind::NKI_BENCH) {
    auto nkiText = backend::compileToNki(*tir.kernel, *target, &tir.sourceMgr, nkiApi, command, "",
                                         emit == EmitKind::NKI_BENCH);
    if (!nkiText) {
      error(llvm::toString(nkiText.takeError()));
      return 1;
    }
    os << *nkiText;
  } else if (emit == EmitKind::TIR) {
    ir::printKernel(*tir.kernel, os);
  } else {
    auto program = emitProgram(*tir.kernel, *target, &tir.sourceMgr);
    if (!program) {
      error(llvm::toString(program.takeError()));
      return 1;
    }
    runtime::printProgram(*program, os);
  }
  return writeOutput(output, os.str()) ? 0 : 1;
}

} // namespace

int runCompileCommand(int argc, char **argv) {
  cl::opt<std::string> input(cl::Positional,
                             cl::desc("<kernel source .tsl, tile IR .tir for --emit=tir|tasm, or an NKI "
                                      "kernel .py ('-' for stdin)>"),
                             cl::cat(toolCategory()));
  SourceOptions source;
  PipelineOptions pipeline;
  NkiOptions nki;
  cl::opt<EmitKind> emit(
      "emit", cl::desc("What to print (default: tir)"), cl::init(EmitKind::TIR),
      cl::values(clEnumValN(EmitKind::AST, "ast", "the typed AST, with shapes and locations"),
                 clEnumValN(EmitKind::TIR, "tir", "the verified tile IR (round-trips through tessel opt)"),
                 clEnumValN(EmitKind::TASM, "tasm", "the simulator program (run it with tessel run)"),
                 clEnumValN(EmitKind::NKI, "nki", "an NKI kernel (Python; docs/nki.md, \"Emitting NKI\")"),
                 clEnumValN(EmitKind::NKI_BENCH, "nki-bench", "the NKI kernel and a runner measuring it on a device")),
      cl::cat(toolCategory()));
  cl::opt<std::string> targetName("target",
                                  cl::desc("Hardware description: trn1 (default), trn2, or a JSON file"),
                                  cl::value_desc("trn1|trn2|FILE.json"), cl::init("trn1"),
                                  cl::cat(toolCategory()));
  cl::opt<std::string> nkiApi("nki-api",
                              cl::desc("--emit=nki: the NKI API generation (default: legacy on trn1, else current)"),
                              cl::value_desc("current|legacy"), cl::cat(toolCategory()));
  cl::opt<std::string> output("o", cl::desc("Write the output to FILE ('-' for stdout)"),
                              cl::value_desc("FILE"), cl::init("-"), cl::cat(toolCategory()));
  if (!parseCommandLine(argc, argv,
                        "tessel compile: compile a .tsl kernel description\n\n"
                        "Parses and type-checks the source, binds constants (-D), and lowers the\n"
                        "selected kernel to tile IR in the straightforward form (DESIGN §4), then\n"
                        "runs the pass pipeline (-O0 by default: no passes; docs/passes.md).\n"))
    return 1;
  std::string command = "tessel compile";
  for (int i = 1; i < argc; ++i)
    command += std::string(" ") + argv[i];
  int status = 0;
  if (pipeline.handleInfoFlags(status))
    return status;
  if (input.empty()) {
    llvm::WithColor::error(llvm::errs(), "tessel")
        << "no input file (usage: tessel compile [options] FILE.tsl|FILE.tir; see tessel compile "
           "--help)\n";
    return 1;
  }
  std::vector<std::string> read{input, targetFile(targetName)};
  if (pipeline.tuned)
    read.push_back(pipeline.tuneCache.empty() ? defaultTuneCachePath() : pipeline.tuneCache.getValue());
  if (!rejectEmptyValue(targetName) || !rejectInputAsOutput("-o", output, read))
    return 1;
  if ((isNkiSource(input) || !nki.args.empty()) && (emit == EmitKind::NKI || emit == EmitKind::NKI_BENCH)) {
    error("--emit=nki: '" + input + "' is an NKI kernel already");
    return 1;
  }
  if (isNkiSource(input) || !nki.args.empty())
    return compileNkiKernel({input, source.kernel, {nki.args.begin(), nki.args.end()}, {}}, targetName,
                            emit == EmitKind::TASM, output,
                            !source.defines.empty() || !pipeline.compileFlagsGiven().empty() ||
                                emit == EmitKind::AST || source.tp != 1);

  llvm::Expected<ProgramInput> programInput = readProgramInput(input);
  if (!programInput) {
    llvm::WithColor::error(llvm::errs(), "tessel") << llvm::toString(programInput.takeError()) << "\n";
    return 1;
  }
  if (programInput->format == InputFormat::Tasm) {
    llvm::WithColor::error(llvm::errs(), "tessel")
        << "'" << input << "' is a .tasm program, which is compiled already (run it with tessel "
        << "run); tessel compile reads a .tsl kernel source or .tir tile IR\n";
    return 1;
  }
  if (programInput->format == InputFormat::Tir && source.tp != 1) {
    llvm::WithColor::error(llvm::errs(), "tessel")
        << "--tp splits a .tsl kernel; tile IR (.tir) is one core's kernel already\n";
    return 1;
  }
  if (programInput->format == InputFormat::Tir)
    return compileTir(std::move(programInput->buffer), emit, source, pipeline, targetName, output, nkiApi, command);

  std::vector<Define> defines;
  if (!source.collectDefines(defines))
    return 1;
  Frontend fe;
  // runFrontend reads the buffer already loaded (stdin can be read once).
  fe.sourceMgr.AddNewSourceBuffer(std::move(programInput->buffer), llvm::SMLoc());
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
    if (emit == EmitKind::NKI || emit == EmitKind::NKI_BENCH) {
      auto nkiText = backend::compileToNki(
          *kernel, *target, &fe.sourceMgr, nkiApi, command,
          source.tp != 1 ? describeTensorParallel(tpPlan, *fe.kernel, *target) : "", emit == EmitKind::NKI_BENCH);
      if (!nkiText) {
        error(llvm::toString(nkiText.takeError()));
        return 1;
      }
      os << *nkiText;
    } else if (emit == EmitKind::TIR) {
      if (source.tp != 1)
        os << describeTensorParallel(tpPlan, *fe.kernel, *target);
      ir::printKernel(*kernel, os);
    } else {
      auto program = emitProgram(*kernel, *target, &fe.sourceMgr);
      if (!program) {
        llvm::WithColor::error(llvm::errs(), "tessel") << llvm::toString(program.takeError()) << "\n";
        return 1;
      }
      runtime::printProgram(*program, os);
    }
  }
  return writeOutput(output, os.str()) ? 0 : 1;
}

} // namespace tessel::driver

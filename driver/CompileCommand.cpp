//===- driver/CompileCommand.cpp - `tessel compile` -----------------------===//
#include "driver/Commands.h"
#include "driver/CommonOptions.h"
#include "driver/CompileOptions.h"
#include "compiler/Compile.h"
#include "compiler/TensorParallel.h"
#include "compiler/NkiInput.h"
#include "driver/LoadProgram.h"
#include "driver/OptionChecks.h"
#include "tune/TuneCache.h"
#include "compiler/TirInput.h"

#include "backend/NkiEmitter.h"
#include "ir/Printer.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
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

/// The options of `tessel compile` and their checks (validate, validateFor).
struct CompileCommandOptions {
  cl::opt<std::string> input{cl::Positional,
                             cl::desc("<kernel source .tsl, tile IR .tir for --emit=tir|tasm, or an NKI "
                                      "kernel .py ('-' for stdin)>"),
                             cl::cat(toolCategory())};
  SourceOptions source;
  PipelineOptions pipeline;
  NkiOptions nki;
  SharedOptions shared{"tessel"};
  cl::opt<EmitKind> emit{
      "emit",
      cl::desc("What to write (default: as -o's extension says, .tir, .tasm or .py (nki); else tir)"),
      cl::init(EmitKind::TIR),
      cl::values(clEnumValN(EmitKind::AST, "ast", "the typed AST, with shapes and locations"),
                 clEnumValN(EmitKind::TIR, "tir", "the verified tile IR (round-trips through tessel opt)"),
                 clEnumValN(EmitKind::TASM, "tasm", "the simulator program (run it with tessel run)"),
                 clEnumValN(EmitKind::NKI, "nki", "an NKI kernel (Python; docs/nki.md, \"Emitting NKI\")"),
                 clEnumValN(EmitKind::NKI_BENCH, "nki-bench", "the NKI kernel and a runner measuring it on a device")),
      cl::cat(toolCategory())};
  cl::opt<std::string> nkiApi{"nki-api",
                              cl::desc("--emit=nki: the NKI API generation (default: legacy on trn1, else current)"),
                              cl::value_desc("current|legacy"), cl::cat(toolCategory())};
  /// The command as typed, for the header of an emitted NKI kernel.
  std::string commandLine = "tessel compile";

  CompileCommandOptions() {
    shared.addTarget("Default: trn1");
    shared.addOutput("Write the output to FILE ('-' for stdout); a .tir, .tasm or .py FILE gets that "
                     "format unless --emit says otherwise");
  }

  /// What is written: --emit, else -o's extension, else tile IR (validate).
  EmitKind emitAs = EmitKind::TIR;
  bool emitsNki() const { return emitAs == EmitKind::NKI || emitAs == EmitKind::NKI_BENCH; }
  /// The checks of the options alone, before the input is read. Returns
  /// false after reporting.
  bool validate();
  /// --emit against -o's extension; sets emitAs. False after reporting.
  bool resolveEmit();
  /// The checks that depend on the input's kind.
  bool validateFor(ProgramKind kind) const;
};

bool fail(const llvm::Twine &msg) {
  error(msg);
  return false;
}

/// The format an output file's extension names, if it names one.
std::optional<EmitKind> emitOfExtension(llvm::StringRef path) {
  llvm::StringRef ext = llvm::sys::path::extension(path);
  if (ext == ".tir")
    return EmitKind::TIR;
  if (ext == ".tasm")
    return EmitKind::TASM;
  if (ext == ".py")
    return EmitKind::NKI;
  return std::nullopt;
}

const char *emitName(EmitKind kind) {
  switch (kind) {
  case EmitKind::AST: return "ast";
  case EmitKind::TIR: return "tir";
  case EmitKind::TASM: return "tasm";
  case EmitKind::NKI: return "nki";
  case EmitKind::NKI_BENCH: return "nki-bench";
  }
  return "";
}

/// What `kind` writes, in words.
const char *emitWhat(EmitKind kind) {
  switch (kind) {
  case EmitKind::AST: return "the AST";
  case EmitKind::TIR: return "tile IR";
  case EmitKind::TASM: return "a .tasm program";
  case EmitKind::NKI:
  case EmitKind::NKI_BENCH: return "an NKI kernel (Python)";
  }
  return "";
}

bool CompileCommandOptions::resolveEmit() {
  std::optional<EmitKind> named = emitOfExtension(shared.output());
  emitAs = emit.getNumOccurrences() || !named ? emit.getValue() : *named;
  if (!named || !emit.getNumOccurrences() || *named == emitAs ||
      (*named == EmitKind::NKI && emitAs == EmitKind::NKI_BENCH))
    return true;
  return fail(llvm::formatv("-o {0} names {1} but --emit={2} writes {3}; drop --emit (the extension then "
                            "decides) or rename the output",
                            shared.output(), emitWhat(*named), emitName(emitAs), emitWhat(emitAs)));
}

bool CompileCommandOptions::validate() {
  if (input.empty())
    return fail("no input file (usage: tessel compile [options] FILE.tsl|FILE.tir; see tessel compile "
                "--help)");
  std::vector<std::string> read{input, shared.targetFile()};
  if (pipeline.tuned)
    read.push_back(pipeline.tuneCache.empty() ? defaultTuneCachePath() : pipeline.tuneCache.getValue());
  if (!shared.validate() || !rejectInputAsOutput("-o", shared.output(), read) ||
      !rejectRepeatedDefines(source.defines) || !resolveEmit())
    return false;
  return true;
}

bool CompileCommandOptions::validateFor(ProgramKind kind) const {
  if (kind == ProgramKind::Nki && emitsNki())
    return fail(llvm::formatv("--emit={0}: '{1}' is an NKI kernel already", emitName(emitAs), input));
  switch (kind) {
  case ProgramKind::Tasm:
    return fail("'" + input + "' is a .tasm program, which is compiled already (run it with tessel "
                "run); tessel compile reads a .tsl kernel source or .tir tile IR");
  case ProgramKind::Tir:
    if (source.tp != 1)
      return fail("--tp splits a .tsl kernel; tile IR (.tir) is one core's kernel already");
    if (emitAs == EmitKind::AST)
      return fail("--emit=ast needs a .tsl source; tile IR has no AST");
    if (!source.defines.empty())
      return fail("-D applies to .tsl sources only (tile IR has its shapes bound)");
    return true;
  case ProgramKind::Tsl: {
    std::string flags = pipeline.compileFlagsGiven();
    if (emitAs == EmitKind::AST && source.tp != 1)
      flags += std::string(flags.empty() ? "" : ", ") + "--tp";
    if (emitAs == EmitKind::AST && !flags.empty())
      return fail(flags + ": --emit=ast prints the source's AST, before any lowering or pass");
    return true;
  }
  case ProgramKind::Nki:
    return true;
  }
  return true;
}

/// An NKI kernel traced and compiled (compiler/NkiInput.h); the exit status.
int compileNki(const CompileCommandOptions &o, const LoadedProgram &in) {
  return compileNkiKernel({in.path, o.source.kernel, {o.nki.args.begin(), o.nki.args.end()}, {}, {}, o.nki.grid},
                          o.shared.targetName(), o.emitAs == EmitKind::TASM, o.shared.output(),
                          !o.source.defines.empty() || !o.pipeline.compileFlagsGiven().empty() ||
                              o.emitAs == EmitKind::AST || o.source.tp != 1);
}

/// The --tp note as .tasm comments ('#'), saying the program is one core's:
/// `tessel run` of it simulates that core alone, without the AllReduce.
std::string tasmComment(llvm::StringRef tpNote) {
  if (tpNote.empty())
    return "";
  std::string out;
  llvm::SmallVector<llvm::StringRef, 4> lines;
  tpNote.split(lines, '\n', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef line : lines)
    out += "#" + line.drop_front(2).str() + "\n";
  return out + "# [tensor-parallel] this is one core's program: `tessel run` of it times that core alone, "
               "without the AllReduce; `tessel run` of the .tsl with the same --tp runs every core\n";
}

/// Prints the compiled `kernel` as --emit says: tile IR (after `tpNote`, the
/// --tp split), its program, or NKI. False after reporting.
bool emitKernel(const CompileCommandOptions &o, ir::Kernel &kernel, const runtime::Target &target,
                const llvm::SourceMgr &sm, const std::string &tpNote, llvm::raw_ostream &os) {
  if (o.emitsNki()) {
    auto nkiText = backend::compileToNki(kernel, target, &sm, o.nkiApi, o.commandLine, tpNote,
                                         o.emitAs == EmitKind::NKI_BENCH);
    if (!nkiText)
      return fail(llvm::toString(nkiText.takeError()));
    os << *nkiText;
  } else if (o.emitAs == EmitKind::TIR) {
    os << tpNote;
    ir::printKernel(kernel, os);
  } else {
    auto program = emitProgram(kernel, target, &sm);
    if (!program)
      return fail(llvm::toString(program.takeError()));
    os << tasmComment(tpNote);
    runtime::printProgram(*program, os);
  }
  return true;
}

/// `tessel compile x.tir`: the pipeline on tile IR (as tessel opt runs it),
/// then the IR or the program.
bool compileTir(const CompileCommandOptions &o, LoadedProgram &in, llvm::raw_ostream &os) {
  auto target = o.shared.loadTarget();
  if (!target)
    return fail(llvm::toString(target.takeError()));
  TirInput tir;
  CompileOptions tirOptions;
  return resolveTirOptions(o.pipeline, tirOptions) &&
         loadTirKernel(tir, std::move(in.buffer), o.source.kernel, tirOptions, *target) &&
         emitKernel(o, *tir.kernel, *target, tir.sourceMgr, "", os);
}

/// `tessel compile x.tsl`: its AST, or the kernel compiled (split under --tp).
bool compileTsl(const CompileCommandOptions &o, LoadedProgram &in, llvm::raw_ostream &os) {
  std::vector<Define> defines;
  if (!o.source.collectDefines(defines))
    return false;
  Frontend fe;
  // runFrontend reads the buffer already loaded (stdin can be read once).
  fe.sourceMgr.AddNewSourceBuffer(std::move(in.buffer), llvm::SMLoc());
  if (!runFrontend(fe, o.input, defines, o.source.kernel))
    return false;
  if (o.emitAs == EmitKind::AST) {
    printAST(*fe.module, fe.sourceMgr, os);
    return true;
  }
  auto target = o.shared.loadTarget();
  if (!target)
    return fail(llvm::toString(target.takeError()));
  frontend::TensorParallelPlan tpPlan;
  if (o.source.tp != 1 && !shardForTensorParallel(fe, o.source.tp, *target, tpPlan))
    return false;
  CompileOptions options;
  if (!resolveCompileOptions(fe, o.pipeline, *target, options))
    return false;
  auto kernel = compileKernel(fe, options, *target);
  return kernel && emitKernel(o, *kernel, *target, fe.sourceMgr,
                              o.source.tp != 1 ? describeTensorParallel(tpPlan, *fe.kernel, *target) : "", os);
}

} // namespace

int runCompileCommand(int argc, char **argv) {
  CompileCommandOptions o;
  if (!parseCommandLine(argc, argv,
                        "tessel compile: compile a .tsl kernel description\n\n"
                        "Parses and type-checks the source, binds constants (-D), and lowers the\n"
                        "selected kernel to tile IR in the straightforward form (docs/architecture.md),\n"
                        "then runs the pass pipeline (-O0 by default: no passes; docs/passes.md).\n"))
    return 1;
  for (int i = 1; i < argc; ++i)
    o.commandLine += std::string(" ") + argv[i];
  int status = 0;
  if (o.pipeline.handleInfoFlags(status))
    return status;
  if (!o.validate())
    return 1;
  llvm::Expected<LoadedProgram> in = loadProgram(o.input);
  if (!in)
    return fail(llvm::toString(in.takeError())), 1;
  if (!o.validateFor(in->kind))
    return 1;
  if (in->kind == ProgramKind::Nki)
    return compileNki(o, *in);
  if (!o.nki.args.empty())
    return fail("--arg applies to NKI kernels (.py) only"), 1;
  if (!o.nki.grid.empty())
    return fail("--grid applies to NKI kernels (.py) only"), 1;
  // The output is built in memory and written only on success, so a failed
  // compile leaves an existing -o file as it was.
  std::string text;
  llvm::raw_string_ostream os(text);
  bool ok = in->kind == ProgramKind::Tir ? compileTir(o, *in, os) : compileTsl(o, *in, os);
  return ok && writeOutput(o.shared.output(), os.str()) ? 0 : 1;
}

} // namespace tessel::driver

//===- driver/OptCommand.cpp - `tessel opt`: read, verify, print tile IR ---===//
//
// tessel opt FILE.tir [-o OUT] [--passes=a,b | --pipeline=NAME | -O0|-O2]
//                     [--verify-roundtrip] [--verify-diagnostics] [--no-verify]
//                     [--split-input-file]
//                     [IR dump flags: docs/passes.md]
//
// 1. Read FILE (`-` = stdin) into a SourceMgr and parse it (ir/Parser.h).
// 2. Verify every kernel (ir/Verifier.h) unless --no-verify.
// 3. Run the pass pipeline on each kernel (none unless asked for: opt runs
//    exactly the passes it is given).
// 4. Print the module. --verify-roundtrip re-parses and re-prints the printed
//    text and fails if the two prints differ.
//
// --verify-diagnostics (MLIR style) checks the diagnostics against
// expectations written in the input's comments instead of printing them:
//   // expected-error {{substring}}       same line
//   // expected-error@+1 {{substring}}    next line (@-N, @+N: relative lines)
// and likewise expected-warning / expected-note. Every diagnostic must match
// an expectation (line, kind and substring) and every expectation must be
// met; both unexpected and missing ones are reported. Exit 0 iff all match.
//
// --split-input-file (MLIR style) runs steps 1-4 on each chunk of FILE between
// `// -----` lines on its own, in the file's line numbers, and separates the
// chunks' outputs by `// -----`. A failing chunk does not stop the others; the
// exit status is 1 if any failed.
//
//===----------------------------------------------------------------------===//
#include "driver/Commands.h"
#include "driver/CommonOptions.h"
#include "driver/CompileOptions.h"
#include "compiler/Compile.h"
#include "driver/LoadProgram.h"
#include "driver/OptionChecks.h"

#include "ir/Diagnostics.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "passes/TargetGeometry.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

#include <string>
#include <vector>

namespace cl = llvm::cl;
using namespace tessel;

namespace tessel::driver {
using namespace compiler;
namespace {

//===----------------------------------------------------------------------===//
// --verify-diagnostics
//===----------------------------------------------------------------------===//

struct Expectation {
  llvm::SourceMgr::DiagKind kind;
  unsigned line;
  std::string substring;
  llvm::SMLoc loc; // of the `expected-...` text
  bool matched = false;
};

struct CollectedDiagnostic {
  llvm::SMDiagnostic diag;
  bool inMainBuffer;
  unsigned line;
};

llvm::StringRef kindName(llvm::SourceMgr::DiagKind k) {
  switch (k) {
  case llvm::SourceMgr::DK_Error: return "error";
  case llvm::SourceMgr::DK_Warning: return "warning";
  case llvm::SourceMgr::DK_Note: return "note";
  case llvm::SourceMgr::DK_Remark: return "remark";
  }
  return "?";
}

/// The SourceMgr handler: records diagnostics instead of printing them.
struct DiagnosticCollector {
  llvm::SourceMgr *sm;
  std::vector<CollectedDiagnostic> seen;

  static void handle(const llvm::SMDiagnostic &d, void *ctx) {
    auto *self = static_cast<DiagnosticCollector *>(ctx);
    bool inMain = d.getLoc().isValid() &&
                  self->sm->FindBufferContainingLoc(d.getLoc()) == self->sm->getMainFileID();
    self->seen.push_back({d, inMain, inMain ? unsigned(d.getLineNo()) : 0});
  }
};

/// Scans the main buffer for expectations; reports malformed ones.
bool collectExpectations(llvm::SourceMgr &sm, std::vector<Expectation> &out) {
  const llvm::MemoryBuffer *buf = sm.getMemoryBuffer(sm.getMainFileID());
  llvm::StringRef text = buf->getBuffer();
  bool ok = true;
  unsigned lineNo = 0;
  while (!text.empty()) {
    ++lineNo;
    auto [line, rest] = text.split('\n');
    text = rest;
    size_t pos = 0;
    while ((pos = line.find("expected-", pos)) != llvm::StringRef::npos) {
      llvm::StringRef s = line.drop_front(pos);
      llvm::SMLoc loc = llvm::SMLoc::getFromPointer(s.data());
      pos += 9;
      s = s.drop_front(9);
      Expectation e{llvm::SourceMgr::DK_Error, lineNo, "", loc};
      if (s.consume_front("error"))
        e.kind = llvm::SourceMgr::DK_Error;
      else if (s.consume_front("warning"))
        e.kind = llvm::SourceMgr::DK_Warning;
      else if (s.consume_front("note"))
        e.kind = llvm::SourceMgr::DK_Note;
      else
        continue;
      if (s.consume_front("@")) {
        bool plus = s.consume_front("+");
        bool minus = !plus && s.consume_front("-");
        unsigned offset = 0;
        if ((!plus && !minus) || s.consumeInteger(10, offset)) {
          sm.PrintMessage(loc, llvm::SourceMgr::DK_Error,
                          "malformed expectation: expected '@+N' or '@-N' after the kind");
          ok = false;
          continue;
        }
        if (minus && offset >= lineNo) {
          sm.PrintMessage(loc, llvm::SourceMgr::DK_Error,
                          "expectation refers to a line before the start of the file");
          ok = false;
          continue;
        }
        e.line = plus ? lineNo + offset : lineNo - offset;
      }
      s = s.ltrim();
      size_t close;
      if (!s.consume_front("{{") || (close = s.find("}}")) == llvm::StringRef::npos) {
        sm.PrintMessage(loc, llvm::SourceMgr::DK_Error,
                        "malformed expectation: expected '{{substring}}'");
        ok = false;
        continue;
      }
      e.substring = s.take_front(close).str();
      out.push_back(e);
    }
  }
  return ok;
}

/// Matches collected diagnostics against expectations; prints mismatches.
bool checkExpectations(llvm::SourceMgr &sm, std::vector<Expectation> &expected,
                       std::vector<CollectedDiagnostic> &seen) {
  bool ok = true;
  for (CollectedDiagnostic &d : seen) {
    bool matched = false;
    if (d.inMainBuffer) {
      for (Expectation &e : expected) {
        if (e.matched || e.line != d.line || e.kind != d.diag.getKind() ||
            !llvm::StringRef(d.diag.getMessage()).contains(e.substring))
          continue;
        e.matched = matched = true;
        break;
      }
    }
    if (matched)
      continue;
    ok = false;
    std::string msg = ("unexpected " + kindName(d.diag.getKind()) + ": " + d.diag.getMessage()).str();
    if (d.diag.getLoc().isValid())
      sm.PrintMessage(d.diag.getLoc(), llvm::SourceMgr::DK_Error, msg);
    else
      llvm::WithColor::error(llvm::errs(), "tessel opt") << msg << "\n";
  }
  for (const Expectation &e : expected) {
    if (e.matched)
      continue;
    ok = false;
    sm.PrintMessage(e.loc, llvm::SourceMgr::DK_Error,
                    "expected " + kindName(e.kind) + " \"" + e.substring + "\" on line " +
                        llvm::Twine(e.line) + " was not produced");
  }
  return ok;
}

//===----------------------------------------------------------------------===//
// --verify-roundtrip
//===----------------------------------------------------------------------===//

std::string printToString(const ir::Module &module) {
  std::string s;
  llvm::raw_string_ostream os(s);
  ir::printModule(module, os);
  return os.str();
}

/// Re-parses and re-prints `printed`; reports the first differing line.
bool checkRoundTrip(const std::string &printed, const ir::TileGeometry &geometry,
                    DiagnosticEngine &diags) {
  auto reparsed = ir::parseModuleString(printed, "<printed IR>", diags, geometry);
  if (!reparsed) {
    diags.error(llvm::SMLoc(), "round trip failed: the printed IR does not parse back");
    return false;
  }
  std::string reprinted = printToString(*reparsed);
  if (reprinted == printed)
    return true;
  llvm::SmallVector<llvm::StringRef, 64> a, b;
  llvm::StringRef(printed).split(a, '\n');
  llvm::StringRef(reprinted).split(b, '\n');
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i])
    ++i;
  diags.error(llvm::SMLoc(), "round trip is not a fixed point: printed line " + llvm::Twine(i + 1) +
                                 " differs\n  printed:   " + (i < a.size() ? a[i] : "<end>") +
                                 "\n  reprinted: " + (i < b.size() ? b[i] : "<end>"));
  return false;
}


//===----------------------------------------------------------------------===//
// One buffer: parse, verify, run the passes, print
//===----------------------------------------------------------------------===//

struct OptSettings {
  bool verifyRoundtrip, verifyDiagnostics, noVerify;
  const runtime::Target &target;
  ir::TileGeometry geometry; // the text does not carry the target: --target's
  CompileOptions compileOptions;
};

/// Processes one input (the whole file, or one `// -----` chunk of it):
/// appends the printed module to `printed` and returns whether it succeeded
/// (under --verify-diagnostics: whether the diagnostics matched).
bool processBuffer(std::unique_ptr<llvm::MemoryBuffer> buf, const OptSettings &s,
                   std::string &printed) {
  llvm::SourceMgr sm;
  unsigned mainId = sm.AddNewSourceBuffer(std::move(buf), llvm::SMLoc());
  DiagnosticEngine diags(sm);

  std::vector<Expectation> expected;
  DiagnosticCollector collector{&sm, {}};
  if (s.verifyDiagnostics) {
    if (!collectExpectations(sm, expected))
      return false;
    sm.setDiagHandler(DiagnosticCollector::handle, &collector);
  }

  auto module = ir::parseBuffer(mainId, diags, s.geometry);
  bool ok = module != nullptr;
  if (ok && !s.noVerify)
    ok = ir::verifyModule(*module, diags);
  if (ok) {
    bool several = module->kernels.size() > 1;
    for (auto &kernel : module->kernels)
      if (!(ok = runPipeline(*kernel, s.compileOptions, s.target, diags,
                             several ? kernel->name : "")))
        break;
  }
  if (ok) {
    std::string text = printToString(*module);
    if (s.verifyRoundtrip && !checkRoundTrip(text, s.geometry, diags))
      ok = false;
    else
      printed += text;
  }

  if (!s.verifyDiagnostics)
    return ok;
  sm.setDiagHandler(nullptr, nullptr);
  unsigned capturedErrors = 0;
  for (const CollectedDiagnostic &d : collector.seen)
    capturedErrors += d.diag.getKind() == llvm::SourceMgr::DK_Error;
  bool matched = checkExpectations(sm, expected, collector.seen);
  if (diags.errorCount() > capturedErrors) {
    llvm::WithColor::error(llvm::errs(), "tessel opt")
        << "unexpected error(s) without a location (see above)\n";
    matched = false;
  }
  return matched;
}

//===----------------------------------------------------------------------===//
// --split-input-file
//===----------------------------------------------------------------------===//

/// The separator: a line that is `// -----` and nothing else (the IR dump
/// banners `// -----// IR Dump ...` are not separators).
bool isSplitMarker(llvm::StringRef line) { return line.trim() == "// -----"; }

/// The chunks of `text` between separator lines, each preceded by as many
/// newlines as there are lines before it in `text`, so that its diagnostics
/// carry the original file's line numbers.
std::vector<std::string> splitInput(llvm::StringRef text) {
  std::vector<std::string> chunks;
  std::string current;
  unsigned lineNo = 0;
  while (!text.empty()) {
    auto [line, rest] = text.split('\n');
    text = rest;
    ++lineNo;
    if (isSplitMarker(line)) {
      chunks.push_back(std::move(current));
      current = std::string(lineNo, '\n');
      continue;
    }
    current += line.str() + "\n";
  }
  chunks.push_back(std::move(current));
  return chunks;
}

/// The options of `tessel opt` and their checks (validate).
struct OptOptions {
  cl::opt<std::string> input{cl::Positional, cl::desc("<input .tir file, - for stdin>"), cl::init("-"),
                             cl::value_desc("FILE"), cl::cat(toolCategory())};
  SharedOptions shared{"tessel opt"};
  cl::opt<bool> verifyRoundtrip{
      "verify-roundtrip",
      cl::desc("Check that printing is a fixed point: parse, print, re-parse, re-print, compare"),
      cl::cat(toolCategory())};
  cl::opt<bool> verifyDiagnostics{
      "verify-diagnostics",
      cl::desc("Check diagnostics against `// expected-error@+N {{...}}` comments in the input "
               "instead of printing them"),
      cl::cat(toolCategory())};
  cl::opt<bool> splitInputFile{
      "split-input-file",
      cl::desc("Process each chunk between `// -----` lines on its own (diagnostics keep the "
               "file's line numbers; outputs are separated by `// -----`)"),
      cl::cat(toolCategory())};
  cl::opt<bool> noVerify{"no-verify", cl::desc("Skip the IR verifier"), cl::cat(toolCategory())};
  PipelineOptions pipeline;

  OptOptions() {
    shared.addTarget("The one whose geometry the passes read (default: trn1)");
    shared.addOutput("Write the output to FILE ('-' for stdout, the default)");
  }

  /// Returns false after reporting.
  bool validate() const { return shared.validate() && rejectInputAsOutput("-o", shared.output(), {input}); }
};

bool fail(const llvm::Twine &msg) {
  llvm::WithColor::error(llvm::errs(), "tessel opt") << msg << "\n";
  return false;
}

/// The tile IR text; another kind of program is refused by name (text of no
/// known kind is parsed as tile IR, whose parser locates the error).
std::unique_ptr<llvm::MemoryBuffer> readTileIR(const std::string &path) {
  llvm::Expected<LoadedProgram> in = loadProgram(path, ProgramKind::Tir);
  if (!in)
    return fail(llvm::toString(in.takeError())), nullptr;
  if (in->kind == ProgramKind::Tir)
    return std::move(in->buffer);
  std::string name = path == "-" ? "<stdin>" : path;
  if (in->kind == ProgramKind::Tasm)
    return fail("'" + name + "' is a .tasm program, compiled already: tessel opt reads tile IR (.tir)"), nullptr;
  fail(llvm::formatv("'{0}' is {1}: tessel opt reads tile IR (.tir), which `tessel compile {2} --emit=tir` "
                     "prints",
                     name, in->kind == ProgramKind::Tsl ? "a .tsl kernel source" : "an NKI kernel (.py)", path));
  return nullptr;
}

/// Runs `s` on the whole input, or on each `// -----` chunk of it: every
/// chunk runs even after one fails, and a failed chunk prints nothing.
bool processInput(std::unique_ptr<llvm::MemoryBuffer> buffer, bool split, const OptSettings &s,
                  std::string &printed) {
  if (!split)
    return processBuffer(std::move(buffer), s, printed);
  bool ok = true;
  llvm::StringRef name = buffer->getBufferIdentifier();
  std::vector<std::string> chunks = splitInput(buffer->getBuffer());
  for (size_t i = 0; i < chunks.size(); ++i) {
    if (i)
      printed += "// -----\n";
    ok &= processBuffer(llvm::MemoryBuffer::getMemBufferCopy(chunks[i], name), s, printed);
  }
  return ok;
}

} // namespace

int runOptCommand(int argc, char **argv) {
  OptOptions o;
  if (!parseCommandLine(argc, argv,
                        "tessel opt: read tile IR (.tir), verify it, run passes on it and print it\n\n"
                        "Runs no passes unless given --passes=a,b,c, --pipeline=NAME or -O2\n"
                        "(docs/passes.md); the IR dump flags print to stderr.\n"))
    return 1;
  int status = 0;
  if (o.pipeline.handleInfoFlags(status))
    return status;
  if (!o.validate())
    return 1;
  auto target = o.shared.loadTarget();
  if (!target)
    return fail(llvm::toString(target.takeError())), 1;
  OptSettings settings{o.verifyRoundtrip, o.verifyDiagnostics, o.noVerify, *target,
                       passes::geometryFor(*target), {}};
  if (!resolveTirOptions(o.pipeline, settings.compileOptions))
    return 1;
  std::unique_ptr<llvm::MemoryBuffer> buffer = readTileIR(o.input);
  if (!buffer)
    return 1;
  std::string printed;
  bool ok = processInput(std::move(buffer), o.splitInputFile, settings, printed);
  // --verify-diagnostics prints no IR; without --split-input-file a failed
  // input writes nothing.
  if (o.verifyDiagnostics || (!ok && !o.splitInputFile))
    return ok ? 0 : 1;
  std::error_code ec;
  llvm::ToolOutputFile out(o.shared.output(), ec, llvm::sys::fs::OF_Text);
  if (ec)
    return fail("cannot write '" + o.shared.output() + "': " + ec.message()), 1;
  out.os() << printed;
  out.keep();
  return ok ? 0 : 1;
}

} // namespace tessel::driver

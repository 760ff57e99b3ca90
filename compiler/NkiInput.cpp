//===- compiler/NkiInput.cpp - NKI kernels (.py) as tessel input ------------===//
//
// The tracer is python/nki_trace.py (python/tessel_nki), found through
// $TESSEL_PYTHON_DIR, else the source tree this tessel was configured from,
// else next to the executable (../../python from build/bin,
// ../share/tessel/python when installed). It is run with `-B` by $TESSEL_PYTHON,
// else the python configured at build time, else python3 on PATH, so a run
// writes no bytecode into the source tree.
//
//===----------------------------------------------------------------------===//
#include "compiler/NkiInput.h"
#include "compiler/Check.h"
#include "compiler/Compile.h"

#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "passes/TargetGeometry.h"
#include "runtime/Npy.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

#include <algorithm>
#include <cstdlib>
#include <map>

namespace cl = llvm::cl;

namespace tessel::compiler {

/// --check of an NKI kernel: the largest difference from the traced reference
/// (double precision, bf16 stores) allowed, relative to the largest reference
/// magnitude (bf16's 8-bit mantissa over the products' accumulation).
constexpr double kNkiCheckTolerance = 2e-2;
namespace {

bool fail(const llvm::Twine &msg) {
  llvm::WithColor::error(llvm::errs(), "tessel") << msg << "\n";
  return false;
}

std::string tracerScript() {
  std::vector<std::string> candidates;
  if (const char *env = std::getenv("TESSEL_PYTHON_DIR"))
    candidates.push_back(env);
#ifdef TESSEL_PYTHON_DIR
  candidates.push_back(TESSEL_PYTHON_DIR);
#endif
  std::string exe = llvm::sys::fs::getMainExecutable(nullptr, nullptr);
  if (!exe.empty()) {
    llvm::StringRef bin = llvm::sys::path::parent_path(exe);
    candidates.push_back((bin + "/../../python").str());
    candidates.push_back((bin + "/../share/tessel/python").str());
  }
  for (const std::string &dir : candidates) {
    std::string script = dir + "/nki_trace.py";
    if (llvm::sys::fs::exists(script))
      return script;
  }
  return "";
}

std::string geometryArg(const runtime::Target &target) {
  ir::TileGeometry g = passes::geometryFor(target);
  return llvm::formatv("partitions={0},max_contraction={1},max_stationary={2},max_moving={3},"
                       "psum_bank_bytes={4},psum_bytes={5},sbuf_bytes={6},sbuf_align_bytes={7}",
                       g.partitions, g.maxContraction, g.maxStationary, g.maxMoving, g.psumBankBytes,
                       g.psumBytes, g.sbufBytes, g.sbufAlignBytes)
      .str();
}

/// The --arg specs, completed from the --input files: `NAME=bf16` takes the
/// file's shape, and an input without --arg takes its dtype from the file
/// (float16 -> bf16, float32 -> f32).
bool completeArgs(const NkiSource &src, std::vector<std::string> &out) {
  std::map<std::string, std::string> given;
  for (const std::string &spec : src.args) {
    auto [name, type] = llvm::StringRef(spec).split('=');
    if (name.empty() || type.empty())
      return fail("malformed --arg '" + spec +
                  "': expected NAME=DTYPE[D0,D1,...] (a tensor, e.g. lhsT=bf16[128,512]) or NAME=VALUE");
    if (!given.emplace(name.str(), type.str()).second)
      return fail("--arg " + name + " given twice");
  }
  for (const auto &[name, file] : src.inputFiles) {
    auto it = given.find(name);
    if (it != given.end() && it->second.find('[') != std::string::npos)
      continue; // the simulator checks the file against the declared shape
    llvm::Expected<runtime::NpyArray> npy = runtime::readNpy(file);
    if (!npy)
      return fail("input '" + name + "': " + llvm::toString(npy.takeError()));
    if (npy->shape.empty() || llvm::is_contained(npy->shape, 0))
      return fail("--input " + name + "=" + file + ": the array has shape " + runtime::formatShape(npy->shape) +
                  "; a kernel argument has at least one dimension, each at least 1");
    std::string dtype = it != given.end() ? it->second : npy->descr == "<f2" ? "bf16" : "f32";
    given[name] = dtype + runtime::formatShape(npy->shape);
  }
  for (const auto &[name, type] : given)
    out.push_back(name + "=" + type);
  return true;
}

} // namespace

std::string tracerPython() {
  if (const char *env = std::getenv("TESSEL_PYTHON"); env && *env) {
    llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName(env);
    if (!found || !llvm::sys::fs::can_execute(*found))
      return fail(llvm::Twine("TESSEL_PYTHON=") + env + " is not an executable python"), "";
    return *found;
  }
#ifdef TESSEL_PYTHON_EXE
  if (llvm::StringRef configured = TESSEL_PYTHON_EXE; !configured.empty() && llvm::sys::fs::can_execute(configured))
    return configured.str();
#endif
  llvm::ErrorOr<std::string> python = llvm::sys::findProgramByName("python3");
  if (!python)
    return fail("NKI kernels are traced with python3, which is not on PATH (set TESSEL_PYTHON to a python3 "
                "that has numpy)"),
           "";
  return *python;
}

namespace {

/// Runs the tracer with `extra` arguments; its stdout is returned in `out`.
bool runTracer(const NkiSource &src, const runtime::Target &target, llvm::ArrayRef<std::string> extra,
               std::string &out) {
  std::string script = tracerScript();
  if (script.empty())
    return fail("cannot find tessel's NKI tracer (python/nki_trace.py); set TESSEL_PYTHON_DIR to the "
                "python/ directory of the tessel sources");
  std::string python = tracerPython();
  if (python.empty())
    return false;
  std::vector<std::string> args = {python, "-B", script, src.path, "--geometry", geometryArg(target)};
  if (!src.kernel.empty())
    args.insert(args.end(), {"-k", src.kernel});
  if (!src.grid.empty())
    args.insert(args.end(), {"--grid", src.grid});
  std::vector<std::string> specs;
  if (!completeArgs(src, specs))
    return false;
  for (const std::string &s : specs)
    args.insert(args.end(), {"--arg", s});
  args.insert(args.end(), extra.begin(), extra.end());
  // A kernel whose own code never returns (an endless loop) must not hang
  // tessel: tracing even the largest published kernels takes seconds.
  // $TESSEL_NKI_TRACE_TIMEOUT (seconds) overrides the limit; the tracer is
  // told it, to say so in its progress lines.
  unsigned kTraceTimeoutSeconds = 600;
  if (const char *env = std::getenv("TESSEL_NKI_TRACE_TIMEOUT"))
    if (unsigned v = 0; !llvm::StringRef(env).getAsInteger(10, v) && v > 0)
      kTraceTimeoutSeconds = v;
  args.insert(args.end(), {"--time-limit", std::to_string(kTraceTimeoutSeconds)});

  llvm::SmallString<128> outFile;
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile("tessel-nki", "out", outFile))
    return fail("cannot create a temporary file: " + ec.message());
  auto remover = llvm::make_scope_exit([&] { llvm::sys::fs::remove(outFile); });
  std::vector<llvm::StringRef> argRefs(args.begin(), args.end());
  // stdin from /dev/null, stdout to the file, stderr (the tracer's located errors) inherited.
  llvm::Optional<llvm::StringRef> redirects[] = {llvm::StringRef(""), llvm::StringRef(outFile), llvm::None};
  std::string execError;
  int status =
      llvm::sys::ExecuteAndWait(python, argRefs, llvm::None, redirects, kTraceTimeoutSeconds, 0, &execError);
  if (status != 0) {
    // -2 is a timeout or a signal; only the former says "timed out".
    if (status == -2 && llvm::StringRef(execError).contains("timed out"))
      return fail(llvm::formatv("tracing {0} took over {1} s and was stopped: does the kernel's code "
                                "loop without end?",
                                src.path, kTraceTimeoutSeconds)
                      .str());
    if (!execError.empty())
      return fail(llvm::formatv("the NKI tracer stopped while tracing {0}: {1}", src.path, execError).str());
    if (status == 1)
      return false; // the tracer printed a located error
    // Only an exit the tracer could not catch (posix._exit) gets here.
    return fail(llvm::formatv("the NKI tracer exited with status {0} on {1} without reporting an "
                              "error (did the kernel's code call posix._exit?)",
                              status, src.path)
                    .str());
  }
  auto buffer = llvm::MemoryBuffer::getFile(outFile);
  if (!buffer)
    return fail("cannot read the NKI tracer's output: " + buffer.getError().message());
  out = (*buffer)->getBuffer().str();
  return true;
}

} // namespace

bool isNkiSource(llvm::StringRef path) { return path.endswith(".py"); }

void assignNkiDmaQueues(runtime::Program &program, const runtime::Target &target) {
  std::map<std::pair<uint32_t, bool>, uint32_t> queueOf; // (HBM tensor, load) -> queue
  const uint32_t queues = uint32_t(std::max<int64_t>(1, target.dma_queues));
  for (runtime::Instr &in : program.instrs) {
    if (in.op != runtime::Opcode::Dma || in.srcs.empty())
      continue;
    bool load = in.srcs.front().isTensor();
    const runtime::Access &hbm = load ? in.srcs.front() : in.dst;
    auto it = queueOf.try_emplace({hbm.id, load}, uint32_t(queueOf.size() % queues)).first;
    in.queue = it->second;
    in.queueSpan = 1;
  }
}

llvm::Expected<runtime::Program> emitNkiProgram(ir::Kernel &kernel, const runtime::Target &target,
                                                const llvm::SourceMgr *sources) {
  llvm::Expected<runtime::Program> program = emitProgram(kernel, target, sources);
  if (!program)
    return program;
  program->slotReuse = runtime::SlotReuse::Whole;
  assignNkiDmaQueues(*program, target);
  return program;
}

std::unique_ptr<ir::Kernel> traceNkiKernel(const NkiSource &src, const runtime::Target &target,
                                           llvm::SourceMgr &sm) {
  std::string text;
  if (!runTracer(src, target, {}, text))
    return nullptr;
  if (llvm::StringRef(text).trim().empty())
    return fail("the NKI tracer printed no kernel for " + src.path +
                " (did the kernel's code end the process, e.g. with posix._exit(0)?)"),
           nullptr;
  DiagnosticEngine diags(sm);
  auto module = ir::parseModuleString(text, src.path + " (traced tile IR)", diags, passes::geometryFor(target));
  if (!module || module->kernels.size() != 1)
    return nullptr;
  if (!ir::verifyModule(*module, diags))
    return nullptr;
  return std::move(module->kernels.front());
}

int compileNkiKernel(const NkiSource &src, const std::string &targetName, bool tasm,
                     const std::string &output, bool otherFlags) {
  if (!isNkiSource(src.path))
    return fail("--arg applies to NKI kernels (.py) only"), 1;
  if (otherFlags)
    return fail("-D, --tp, compile flags and --emit=ast do not apply to NKI kernels (.py): they are traced and "
                "compiled as written"),
           1;
  auto target = runtime::loadTarget(targetName);
  if (!target)
    return fail(llvm::toString(target.takeError())), 1;
  llvm::SourceMgr sm;
  std::unique_ptr<ir::Kernel> kernel = traceNkiKernel(src, *target, sm);
  if (!kernel)
    return 1;
  std::string text;
  llvm::raw_string_ostream os(text);
  if (tasm) {
    auto program = emitNkiProgram(*kernel, *target, &sm);
    if (!program)
      return fail(llvm::toString(program.takeError())), 1;
    runtime::printProgram(*program, os);
  } else {
    ir::printKernel(*kernel, os);
  }
  std::error_code ec;
  llvm::ToolOutputFile out(output, ec, llvm::sys::fs::OF_Text);
  if (ec)
    return fail("cannot write '" + output + "': " + ec.message()), 1;
  out.os() << os.str();
  out.keep();
  return 0;
}

bool checkNkiKernel(const NkiSource &src, const runtime::Target &target, const runtime::SimResult &result,
                    llvm::json::Object &check) {
  check["passed"] = false;
  llvm::SmallString<128> dir;
  if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("tessel-nki-check", dir)) {
    check["error"] = "cannot create a temporary directory: " + ec.message();
    return false;
  }
  auto cleanup = llvm::make_scope_exit([&] { llvm::sys::fs::remove_directories(dir); });
  for (llvm::StringRef sub : {"in", "out"})
    llvm::sys::fs::create_directory(dir + "/" + sub);
  auto write = [&](llvm::StringRef sub, const runtime::TensorData &t) {
    if (llvm::Error err = runtime::writeTensorNpy((dir + "/" + sub + "/" + t.name + ".npy").str(), t)) {
      check["error"] = llvm::toString(std::move(err));
      return false;
    }
    return true;
  };
  for (const runtime::TensorData &t : result.inputs)
    if (!write("in", t))
      return false;
  for (const runtime::TensorData &t : result.outputs)
    if (!write("out", t))
      return false;
  std::string out;
  std::vector<std::string> extra = {"--reference", dir.str().str(), "--tolerance",
                                    llvm::formatv("{0}", kNkiCheckTolerance).str()};
  if (!src.reference.empty())
    extra.insert(extra.end(), {"--user-reference", src.reference});
  if (!runTracer(src, target, extra, out)) {
    check["error"] = "the reference failed (see above)";
    return false;
  }
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(out);
  if (!json || !json->getAsObject()) {
    check["error"] = "the numpy reference printed no check object";
    if (!json)
      llvm::consumeError(json.takeError());
    return false;
  }
  check = std::move(*json->getAsObject());
  return check.getBoolean("passed").getValueOr(false);
}

} // namespace tessel::compiler

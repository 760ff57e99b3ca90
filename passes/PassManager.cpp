//===- passes/PassManager.cpp - Run passes with dumps and checks ----------===//
#include "passes/PassManager.h"

#include "passes/PassRegistry.h"

#include "ir/Printer.h"
#include "ir/Verifier.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatAdapters.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <chrono>
#include <cstdio>

namespace tessel::passes {

std::string dumpBanner(llvm::StringRef when, llvm::StringRef pass, llvm::StringRef kernel,
                       bool unchanged) {
  std::string text = when.str();
  if (!pass.empty())
    text += " " + pass.str();
  text += " on @" + kernel.str();
  if (unchanged)
    text += " (unchanged)";
  return "// -----// IR Dump " + text + " //----- //";
}

std::string dumpFileName(unsigned index, llvm::StringRef pass) {
  char number[16];
  std::snprintf(number, sizeof number, "%02u", index);
  return (llvm::Twine(number) + "-" + (index == 0 ? llvm::StringRef("input") : pass) + ".tir").str();
}

PassManager::PassManager(InstrumentationOptions options, llvm::raw_ostream &dumpStream)
    : options(std::move(options)), dumpStream(dumpStream) {}

void PassManager::addPass(std::unique_ptr<Pass> pass) { passes.push_back(std::move(pass)); }

bool PassManager::addPass(llvm::StringRef name) {
  const PassInfo *info = lookupPass(name);
  if (!info)
    return false;
  passes.push_back(info->create());
  return true;
}

std::string PassManager::pipelineString() const {
  std::vector<std::string> names;
  for (const auto &p : passes)
    names.push_back(p->name().str());
  return joinPassList(names);
}

void PassManager::dump(llvm::StringRef banner, const ir::Kernel &kernel) {
  dumpStream << banner << "\n";
  ir::printKernel(kernel, dumpStream);
  dumpStream << "\n";
  dumpStream.flush();
}

bool PassManager::writeDumpFile(unsigned index, llvm::StringRef pass, const ir::Kernel &kernel,
                                DiagnosticEngine &diags) {
  if (std::error_code ec = llvm::sys::fs::create_directories(options.dumpDir)) {
    diags.error(llvm::SMLoc(), "cannot create dump directory '" + options.dumpDir + "': " + ec.message());
    return false;
  }
  llvm::SmallString<128> path(options.dumpDir);
  llvm::sys::path::append(path, dumpFileName(index, pass));
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_Text);
  if (ec) {
    diags.error(llvm::SMLoc(), "cannot write '" + path.str() + "': " + ec.message());
    return false;
  }
  ir::printKernel(kernel, os);
  return true;
}

namespace {
/// Names `pass` as the maker of the loops it created (serial >= `first`).
void creditNewLoops(ir::Kernel &kernel, uint64_t first, llvm::StringRef pass) {
  for (auto &op : kernel.body.ops)
    ir::walkOp(*op, [&](ir::Op &o) {
      if (auto *loop = llvm::dyn_cast<ir::ForOp>(&o))
        if (loop->serial >= first && loop->madeBy.empty())
          loop->madeBy = pass.str();
    });
}
} // namespace

bool PassManager::run(ir::Kernel &kernel, PassContext &ctx) {
  lastRun.clear();
  const InstrumentationOptions &o = options;
  if (o.printChanged)
    dump(dumpBanner("At Start", "", kernel.name), kernel);
  if (!o.dumpDir.empty() && !writeDumpFile(0, "", kernel, ctx.diags))
    return false;
  unsigned index = unsigned(o.takenBefore.size());
  if (index) {
    // The kernel the passes start from is the steps' result.
    const std::string &last = o.takenBefore.back();
    if (o.printIRAfterAll || o.printIRAfter.count(last))
      dump(dumpBanner("After", last, kernel.name), kernel);
    if (!o.dumpDir.empty() && !writeDumpFile(index, last, kernel, ctx.diags))
      return false;
  }

  for (const auto &pass : passes) {
    ++index;
    llvm::StringRef name = pass->name();
    if (o.printIRBefore.count(name.str()))
      dump(dumpBanner("Before", name, kernel.name), kernel);

    unsigned errorsBefore = ctx.diags.errorCount();
    collector.activate(name);
    auto start = std::chrono::steady_clock::now();
    uint64_t firstNewLoop = ir::ForOp::nextSerial(/*peek=*/true);
    PassResult result = pass->run(kernel, ctx);
    creditNewLoops(kernel, firstNewLoop, name);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    collector.deactivate();
    lastRun.push_back({name.str(), result, seconds});

    if (result == PassResult::Failed) {
      if (ctx.diags.errorCount() == errorsBefore)
        ctx.diags.error(kernel.loc, "pass '" + name + "' failed on kernel @" + kernel.name);
      return false;
    }
    bool changed = result == PassResult::Changed;
    bool wantAfter = o.printIRAfterAll || o.printIRAfter.count(name.str());
    if (o.printChanged) {
      if (changed)
        dump(dumpBanner("After", name, kernel.name), kernel);
      else
        dumpStream << dumpBanner("After", name, kernel.name, /*unchanged=*/true) << "\n";
    } else if (wantAfter) {
      dump(dumpBanner("After", name, kernel.name), kernel);
    }
    if (!o.dumpDir.empty() && !writeDumpFile(index, name, kernel, ctx.diags))
      return false;
    // An unchanged kernel was valid before the pass, so it needs no check.
    if (o.verifyEach && changed && !ir::verifyKernel(kernel, ctx.diags)) {
      ctx.diags.error(kernel.loc, "pass '" + name + "' produced invalid IR for kernel @" +
                                         kernel.name + " (verifier errors above)");
      return false;
    }
  }
  return true;
}

void PassManager::printTimings(llvm::raw_ostream &os) const {
  double total = 0;
  for (const PassRecord &r : lastRun)
    total += r.seconds;
  size_t width = 4;
  for (const PassRecord &r : lastRun)
    width = std::max(width, r.name.size());
  os << "// ===------------------------------------------------------------===\n"
     << "//                      ... Pass execution timing report ...\n"
     << "// ===------------------------------------------------------------===\n"
     << llvm::formatv("//   Total Execution Time: {0:F6} seconds\n", total)
     << "//   Wall Time (ms)   %     Pass           Result\n";
  for (const PassRecord &r : lastRun) {
    llvm::StringRef what = r.result == PassResult::Changed     ? "changed"
                           : r.result == PassResult::Unchanged ? "unchanged"
                                                               : "failed";
    os << llvm::formatv("//   {0,14:F3} {1,5:F1}  {2}  {3}\n", r.seconds * 1e3,
                        total > 0 ? 100.0 * r.seconds / total : 0.0,
                        llvm::fmt_align(r.name, llvm::AlignStyle::Left, width), what);
  }
}

} // namespace tessel::passes

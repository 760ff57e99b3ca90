//===- tests/unit/analysis/FastForwardAgreementTest.cpp - Skipped vs exact ===//
//
// Loop fast-forward (runtime/FastForward.h) must give the figures of the
// exact simulation: every counter (instructions, bytes, FLOPs) equal, every
// time (latency, per-engine busy time, hotspots' busy time) within 0.1%, on
// every example at several sequence lengths (with and without a partial
// edge strip), -O0 and -O2.
//
//===----------------------------------------------------------------------===//
#include "CompileUtil.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cmath>

using namespace tessel;

namespace {

/// The examples whose rows are `const M` (decode_attention's size is its KV
/// cache length L: its sweep is tests/lit/target-sweep/decode_attention.test).
std::vector<std::string> exampleFiles() {
  std::vector<std::string> files;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(TESSEL_EXAMPLES_DIR, ec), end; it != end && !ec; it.increment(ec)) {
    if (llvm::sys::path::extension(it->path()) != ".tsl")
      continue;
    auto text = llvm::MemoryBuffer::getFile(it->path());
    if (text && (*text)->getBuffer().contains("\nconst M = "))
      files.push_back(llvm::sys::path::filename(it->path()).str());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::optional<runtime::Report> simulate(const runtime::Program &program, const runtime::Target &target,
                                        bool fastForward) {
  runtime::SimOptions options;
  options.timingOnly = true;
  options.fastForward = fastForward;
  auto result = runtime::simulate(program, target, options);
  if (!result) {
    ADD_FAILURE() << llvm::toString(result.takeError());
    return std::nullopt;
  }
  return result->report;
}

double relDiff(double a, double b) { return a == b ? 0.0 : std::abs(a - b) / std::max(std::abs(a), std::abs(b)); }

} // namespace

TEST(FastForwardAgreement, EveryExampleMatchesExact) {
  const runtime::Target &target = runtime::trn1Target();
  std::vector<std::string> files = exampleFiles();
  ASSERT_GE(files.size(), 5u);
  double worst = 0;
  std::string worstCase;
  uint64_t skipped = 0, total = 0;
  for (const std::string &file : files)
    for (int64_t rows : {640, 2048, 4224})
      for (const char *pipeline : {"O0", "O2"}) {
        SCOPED_TRACE(file + " M=" + std::to_string(rows) + " -" + pipeline);
        test::Source source(file, rows);
        ASSERT_TRUE(source.valid());
        auto kernel = source.tileIR(0, target);
        auto passes = passes::buildPipeline(pipeline);
        ASSERT_TRUE(kernel && passes);
        ASSERT_TRUE(source.run(*kernel, *passes, target));
        auto program = compiler::emitProgram(*kernel, target);
        ASSERT_TRUE(bool(program)) << llvm::toString(program.takeError());
        auto exact = simulate(*program, target, false), fast = simulate(*program, target, true);
        ASSERT_TRUE(exact && fast);
        EXPECT_EQ(exact->fastForwardedInstructions, 0u);
        skipped += fast->fastForwardedInstructions;
        total += fast->dynamicInstructions;

        EXPECT_EQ(fast->dynamicInstructions, exact->dynamicInstructions);
        EXPECT_EQ(fast->flops, exact->flops);
        EXPECT_EQ(fast->transposeFlops, exact->transposeFlops);
        EXPECT_EQ(fast->hbmReadBytes, exact->hbmReadBytes);
        EXPECT_EQ(fast->hbmWriteBytes, exact->hbmWriteBytes);
        EXPECT_EQ(fast->trafficIntermediates, exact->trafficIntermediates);
        EXPECT_EQ(fast->spillSaveBytes + fast->spillReloadBytes, exact->spillSaveBytes + exact->spillReloadBytes);
        ASSERT_EQ(fast->engines.size(), exact->engines.size());
        ASSERT_EQ(fast->queues.size(), exact->queues.size());
        std::vector<std::pair<std::string, double>> diffs = {{"latency", relDiff(fast->latencyNs, exact->latencyNs)}};
        for (size_t e = 0; e < exact->engines.size(); ++e) {
          EXPECT_EQ(fast->engines[e].instructions, exact->engines[e].instructions) << exact->engines[e].name;
          diffs.push_back({exact->engines[e].name + " busy", relDiff(fast->engines[e].busyNs, exact->engines[e].busyNs)});
        }
        for (size_t q = 0; q < exact->queues.size(); ++q) {
          EXPECT_EQ(fast->queues[q].transfers, exact->queues[q].transfers);
          EXPECT_EQ(fast->queues[q].bytes, exact->queues[q].bytes);
          diffs.push_back({"queue " + std::to_string(exact->queues[q].queue) + " busy",
                           relDiff(fast->queues[q].busyNs, exact->queues[q].busyNs)});
        }
        for (const auto &[what, d] : diffs) {
          EXPECT_LT(d, 1e-3) << what;
          if (d > worst) {
            worst = d;
            worstCase = file + " M=" + std::to_string(rows) + " -" + pipeline;
          }
        }
      }
  // Fast-forward has to do something for the agreement to mean anything.
  EXPECT_GT(skipped, total / 4);
  std::printf("fast-forward: %llu of %llu instructions skipped; worst relative difference %.3g (%s)\n",
              (unsigned long long)skipped, (unsigned long long)total, worst, worstCase.c_str());
}

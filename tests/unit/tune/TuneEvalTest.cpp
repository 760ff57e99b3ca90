//===- tests/unit/tune/TuneEvalTest.cpp - the tuner builds through compileKernel -===//
//
// A configuration the tuner measures is the program `tessel compile
// --block ...` builds with the same pipeline: both go through compileKernel.
//
//===----------------------------------------------------------------------===//
#include "compiler/Compile.h"
#include "tune/TuneEval.h"

#include "passes/Pipelines.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace tessel;
using namespace tessel::compiler;
using namespace tessel::tune;

namespace {

const char *kSource = "kernel up(X: bf16[1024, 2048], U: bf16[2048, 512], V: bf16[512, 4096])"
                      " -> bf16[1024, 4096] {\n  return X @ U @ V\n}\n";

std::string printed(const runtime::Program &program) {
  std::string text;
  llvm::raw_string_ostream os(text);
  runtime::printProgram(program, os);
  return os.str();
}

/// kSource through the front end.
void parseSource(Frontend &fe) {
  fe.sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(kSource, "up.tsl"),
                                  llvm::SMLoc());
  fe.diags = std::make_unique<DiagnosticEngine>(fe.sourceMgr);
  fe.module = parseAndCheck(*fe.diags, {});
  fe.kernel = fe.module->findKernel("up");
}

/// `tessel compile -O2 --block <config> --emit=tasm`, in process.
std::string compiledDirectly(const BlockConfig &config) {
  Frontend fe;
  parseSource(fe);
  CompileOptions options;
  options.passes = *passes::buildPipeline("O2");
  options.blocks = config;
  auto kernel = compileKernel(fe, options, runtime::trn1Target());
  EXPECT_TRUE(kernel);
  if (!kernel)
    return "";
  auto program = emitProgram(*kernel, runtime::trn1Target());
  EXPECT_TRUE(bool(program));
  return program ? printed(*program) : "";
}

/// Tuning kSource's kernel with -O2.
TuneJob upJob() {
  TuneJob job;
  job.path = "up.tsl";
  job.sourceText = kSource;
  job.kernelName = "up";
  job.target = runtime::trn1Target();
  Frontend fe;
  parseSource(fe);
  job.blockParams = tileGenBlockParams(fe, job.target);
  job.passes = *passes::buildPipeline("O2");
  return job;
}

TEST(TuneEval, MeasuresTheProgramCompileBuilds) {
  TuneJob job = upJob();
  for (const BlockConfig &config :
       {BlockConfig{{"m", 256}, {"n", 512}}, BlockConfig{{"m", 1024}, {"n", 128}}}) {
    CompiledConfig c = compileConfig(job, config);
    ASSERT_TRUE(c.program) << config.str() << ": " << c.error;
    EXPECT_EQ(printed(*c.program), compiledDirectly(config)) << config.str();
  }
}

TEST(TuneEval, RejectsWhatCompileRejects) {
  TuneJob job = upJob();
  CompiledConfig c = compileConfig(job, {{"m", 2048}, {"n", 512}});
  EXPECT_FALSE(c.program);
  EXPECT_NE(c.error.find("--block m=2048"), std::string::npos) << c.error;
}

} // namespace

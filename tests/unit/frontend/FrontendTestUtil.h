//===- tests/unit/frontend/FrontendTestUtil.h - Compile a string, capture diagnostics -===//
#ifndef TESSEL_TESTS_UNIT_FRONTEND_UTIL_H
#define TESSEL_TESTS_UNIT_FRONTEND_UTIL_H

#include "frontend/Frontend.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace tessel::testutil {

/// The two kernels of docs/language.md, exactly as written there.
inline const char *kDesignKernels = R"(# DeepSeek-V3 up_proj after SVD: W[7168,18432] ~ U[7168,4096] V[4096,18432]
const M = 4096                      # overridable from the command line: -D M=8192

kernel up_proj(X: bf16[M, 7168], U: bf16[7168, 4096], V: bf16[4096, 18432]) -> bf16[M, 18432] {
  return X @ U @ V
}

kernel mlp(X: bf16[M, 2048],
           Ug: bf16[2048, 512], Vg: bf16[512, 8192],
           Uu: bf16[2048, 512], Vu: bf16[512, 8192],
           Ud: bf16[8192, 512], Vd: bf16[512, 2048]) -> bf16[M, 2048] {
  h = silu(X @ Ug @ Vg) * (X @ Uu @ Vu)
  return h @ Ud @ Vd
}
)";

/// The result of running the front end on a string named "t.tsl".
struct Compiled {
  std::unique_ptr<llvm::SourceMgr> sm;
  std::unique_ptr<ast::Module> module;
  std::string diags; // every diagnostic as printed, located ones with source line and caret
  unsigned errors = 0;

  std::string ast() const {
    std::string s;
    llvm::raw_string_ostream os(s);
    if (module)
      printAST(*module, *sm, os);
    return os.str();
  }
};

inline Compiled compile(llvm::StringRef src, std::vector<Define> defines = {}) {
  Compiled c;
  c.sm = std::make_unique<llvm::SourceMgr>();
  c.sm->AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(src, "t.tsl"), llvm::SMLoc());
  c.sm->setDiagHandler(
      [](const llvm::SMDiagnostic &d, void *ctx) {
        llvm::raw_string_ostream os(*static_cast<std::string *>(ctx));
        d.print(nullptr, os, /*ShowColors=*/false);
      },
      &c.diags);
  DiagnosticEngine diags(*c.sm);
  // Diagnostics without a location bypass the SourceMgr and go to stderr.
  testing::internal::CaptureStderr();
  c.module = parseAndCheck(diags, defines);
  c.diags += testing::internal::GetCapturedStderr();
  c.errors = diags.errorCount();
  return c;
}

/// Number of occurrences of "error:" in the diagnostics.
inline unsigned countErrors(const std::string &diags) {
  unsigned n = 0;
  for (size_t pos = diags.find("error:"); pos != std::string::npos; pos = diags.find("error:", pos + 1))
    ++n;
  return n;
}

} // namespace tessel::testutil

#endif

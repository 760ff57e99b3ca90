//===- tests/unit/ir/IRTestUtil.h - Parse/verify text, capture diagnostics -===//
#ifndef TESSEL_TESTS_UNIT_IR_IRTESTUTIL_H
#define TESSEL_TESTS_UNIT_IR_IRTESTUTIL_H

#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "tests/unit/TestGeometry.h"

#include "llvm/Support/SourceMgr.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace tessel::ir::test {

/// Parses and verifies text, capturing located diagnostics as
/// "line:col: kind: message".
class IRFixture {
public:
  IRFixture() { sm.setDiagHandler(&IRFixture::handle, this); }

  std::unique_ptr<Module> parse(llvm::StringRef text) {
    return parseModuleString(text, "test.tir", diags, geometry);
  }

  /// Parses (must succeed) and verifies; returns the verifier's verdict.
  bool verify(llvm::StringRef text, const VerifierOptions &opts = {}) {
    module = parse(text);
    EXPECT_TRUE(module) << "parse failed:\n" << all();
    if (!module)
      return false;
    return verifyModule(*module, diags, opts);
  }

  bool has(llvm::StringRef substring) const {
    for (const std::string &m : messages)
      if (llvm::StringRef(m).contains(substring))
        return true;
    return false;
  }

  unsigned count(llvm::StringRef kind) const {
    unsigned n = 0;
    for (const std::string &m : messages)
      n += llvm::StringRef(m).contains(": " + kind.str() + ": ");
    return n;
  }

  std::string all() const {
    std::string s;
    for (const std::string &m : messages)
      s += m + "\n";
    return s;
  }

  llvm::SourceMgr sm;
  DiagnosticEngine diags{sm};
  TileGeometry geometry = tessel::test::trn1Geometry();
  std::vector<std::string> messages;
  std::unique_ptr<Module> module;

private:
  static void handle(const llvm::SMDiagnostic &d, void *ctx) {
    auto *self = static_cast<IRFixture *>(ctx);
    const char *kind = d.getKind() == llvm::SourceMgr::DK_Error     ? "error"
                       : d.getKind() == llvm::SourceMgr::DK_Warning ? "warning"
                                                                    : "note";
    self->messages.push_back(std::to_string(d.getLineNo()) + ":" +
                             std::to_string(d.getColumnNo() + 1) + ": " + kind + ": " +
                             d.getMessage().str());
  }
};

/// The matmul example of docs/tile-ir.md (with kernel-unique loop names).
inline const char *kMatmulExample = R"(kernel @mm(%A: hbm<bf16, [M:647, K:256]>, %B: hbm<bf16, [K:256, N:512]>) -> (%C: hbm<bf16, [M:647, N:512]>) attributes {block = {m = 512, n = 512}} {
  %T = alloc hbm<bf16, [M:647, N:512]>
  for %m = 0 to 647 step 128 {
    %aT = alloc sbuf<bf16, [K:256, M:128]>
    for %k0 = 0 to 256 step 128 {
      %a = alloc sbuf<bf16, [M:128, K:128]> bufs 2
      dma %a[0 +: min(128, 647 - %m), 0 +: 128] <- %A[%m +: min(128, 647 - %m), %k0 +: 128]
      %p = alloc psum<f32, [K:128, M:128]> bufs 2
      transpose %p[0 +: 128, 0 +: min(128, 647 - %m)] <- %a[0 +: min(128, 647 - %m), 0 +: 128]
      copy %aT[%k0 +: 128, 0 +: min(128, 647 - %m)] <- %p[0 +: 128, 0 +: min(128, 647 - %m)]
    }
    for %n = 0 to 512 step 512 {
      %acc = alloc psum<f32, [M:128, N:512]> bufs 2
      for %k = 0 to 256 step 128 {
        %b = alloc sbuf<bf16, [K:128, N:512]> bufs 2
        dma %b[0 +: 128, 0 +: 512] <- %B[%k +: 128, %n +: 512]
        matmul %acc[0 +: min(128, 647 - %m), 0 +: 512] <- %aT[%k +: 128, 0 +: min(128, 647 - %m)], %b[0 +: 128, 0 +: 512] reset(%k)
      }
      %c = alloc sbuf<bf16, [M:128, N:512]> bufs 2
      copy %c[0 +: min(128, 647 - %m), 0 +: 512] <- %acc[0 +: min(128, 647 - %m), 0 +: 512]
      dma %C[%m +: min(128, 647 - %m), %n +: 512] <- %c[0 +: min(128, 647 - %m), 0 +: 512]
    }
  }
}
)";

} // namespace tessel::ir::test

#endif

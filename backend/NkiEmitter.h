//===- backend/NkiEmitter.h - Tile IR to NKI Python -------------*- C++ -*-===//
//
// `tessel compile --emit=nki`: a scheduled, allocated kernel printed as one
// `@nki.jit` Python function (docs/nki.md, "Emitting NKI"). Each IR op
// becomes the NKI call documented for it in the chosen API generation:
//  - current (the `nki` package, NKI 0.7/0.8, trn2 and later): destination
//    first, `nisa.dma_copy(dst=, src=)`, `nisa.nc_matmul(dst=, ..., accumulate=)`;
//  - legacy (`neuronxcc.nki`, trn1): tiles returned and assigned,
//    `nl.load`/`nl.store`, `acc[...] += nisa.nc_matmul(stationary, moving)`.
// Loops become nl.affine_range / nl.sequential_range over their trip counts;
// buffers nl.ndarray in nl.sbuf / nl.psum (a partition dimension larger than
// the partitions folds into a free dimension of partition groups). The
// function's docstring holds the block parameters, the pass notes and the
// predicted latency; each loop nest gets one comment naming its source line
// and the pass that made it. An IR construct with no NKI equivalent is an
// error located at its op. backend/NkiSignatures.h lists every call and
// argument name the emitter writes, per generation, with its documentation
// page.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_BACKEND_NKIEMITTER_H
#define TESSEL_BACKEND_NKIEMITTER_H

#include "ir/Kernel.h"
#include "ir/LoopDeps.h"
#include "runtime/Target.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/SourceMgr.h"

#include <optional>
#include <string>
#include <vector>

namespace tessel::backend {

enum class NkiApi { Current, Legacy };

/// The API generation a target runs: legacy `neuronxcc.nki` on trn1
/// (NeuronCore-v2), the `nki` package on every other target.
NkiApi defaultNkiApi(const runtime::Target &target);
/// "current" / "legacy"; nullopt for anything else.
std::optional<NkiApi> parseNkiApi(llvm::StringRef name);

struct NkiEmitOptions {
  NkiApi api = NkiApi::Current;
  /// The command that made the kernel (for the module docstring).
  std::string command;
  /// Tessel's predicted latency of the kernel, in microseconds (docstring).
  std::optional<double> latencyUs;
  /// `// ` comment lines about the kernel (a --tp split), written as `# `
  /// comments after the module docstring.
  std::string preamble;
};

/// The kernel as a Python module holding one `@nki.jit` function. `sources`
/// (the SourceMgr the kernel's locations point into) gives the loop comments
/// their source lines and errors their locations.
llvm::Expected<std::string> emitNki(const ir::Kernel &kernel, const runtime::Target &target,
                                    const llvm::SourceMgr *sources, const NkiEmitOptions &options);

using ir::extentBound; // ir/LoopDeps.h

/// Whether NKI may run `loop` as nl.affine_range: no loop-carried
/// dependence other than a matmul accumulation group (backend/NkiLoops.cpp).
bool nkiLoopIsParallel(const ir::ForOp &loop);

/// `tessel compile --emit=nki`: places the buffers, predicts the latency
/// with the simulator (timing only) and emits the kernel for `apiName`
/// ("" = the target's generation). Errors name the option or the op.
llvm::Expected<std::string> compileToNki(ir::Kernel &kernel, const runtime::Target &target,
                                         const llvm::SourceMgr *sources, llvm::StringRef apiName,
                                         const std::string &command, const std::string &preamble = "",
                                         bool bench = false);

/// --emit=nki-bench: the `__main__` block appended to the kernel that
/// measures it on a device (nki.benchmark) or NKI's CPU simulator, compares
/// it with tessel's outputs and prints a `tessel calibrate` CSV row
/// (backend/NkiBench.cpp).
std::string nkiBenchRunner(const ir::Kernel &kernel, const runtime::Target &target, NkiApi api);

} // namespace tessel::backend

#endif

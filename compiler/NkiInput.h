//===- compiler/NkiInput.h - NKI kernels (.py) as tessel input ----*- C++ -*-===//
//
// `tessel run kernel.py` and `tessel compile kernel.py` trace an `nki.jit`
// kernel with the stand-in NKI modules of python/tessel_nki (docs/nki.md):
// python3 runs python/nki_trace.py, which prints the kernel's tile IR; it is
// parsed and verified like any .tir, then lowered and simulated. Argument
// shapes and dtypes come from --arg NAME=DTYPE[D0,D1,...] or the --input
// files, other parameters' values from --arg NAME=VALUE. Under --check, a
// numpy reference of the kernel's math (--reference ref.py:FUNC), else the
// same trace re-executed in Python, is compared with the simulator's outputs.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_COMPILER_NKIINPUT_H
#define TESSEL_COMPILER_NKIINPUT_H

#include "ir/Diagnostics.h"
#include "ir/Kernel.h"
#include "runtime/Simulator.h"
#include "runtime/Target.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/SourceMgr.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tessel::compiler {

/// Whether `path` names an NKI kernel (a .py file).
bool isNkiSource(llvm::StringRef path);

/// What tracing needs: the file, the kernel (-k, may be empty), the --arg
/// specs and the --input files (whose shapes complete the --arg specs);
/// `reference` is --check's FILE.py:FUNCTION (empty: the trace re-executed).
struct NkiSource {
  std::string path;
  std::string kernel;
  std::vector<std::string> args;
  std::map<std::string, std::string> inputFiles;
  std::string reference;
  std::string grid; ///< --grid G0,G1,...: the SPMD launch grid (empty: the file's, or none)
};

/// The python that runs the tracer: $TESSEL_PYTHON, else the configured one
/// (CMake's TESSEL_PYTHON, which has numpy), else python3 on PATH. Empty
/// after reporting when none is found.
std::string tracerPython();

/// Traces `src` for `target` and returns the verified kernel. Tracer errors
/// (file:line of the kernel) and IR errors are printed; returns null then.
/// `sm` must outlive the kernel (it holds the traced IR text).
std::unique_ptr<ir::Kernel> traceNkiKernel(const NkiSource &src, const runtime::Target &target,
                                           llvm::SourceMgr &sm);

/// The DMA queues of a traced NKI kernel (docs/nki.md, "DMA queues"): one
/// queue per stream, the transfers between one HBM tensor and the on-chip
/// buffers in one direction, whatever statements issue them. A stream's
/// transfers run in program order on its queue (DMA-OV: in order within a
/// queue), one per the queue's issue time; distinct streams take the queues
/// round-robin in the order they first appear (wrapping past the target's
/// dma_queues), so they overlap. A stream is the same whether the kernel
/// writes its tiles with a loop, a list of tiles or one statement per tile.
void assignNkiDmaQueues(runtime::Program &program, const runtime::Target &target);

/// The simulator program of a traced kernel: emitProgram's, with the buffer
/// reuse of NKI's allocator (runtime::SlotReuse::Whole): a slot's next
/// occupant waits for every access to the previous one (docs/nki.md), and
/// the DMA queues of assignNkiDmaQueues (one per stream, not rotating).
llvm::Expected<runtime::Program> emitNkiProgram(ir::Kernel &kernel, const runtime::Target &target,
                                                const llvm::SourceMgr *sources = nullptr);

/// `tessel compile kernel.py`: prints the traced tile IR, or the program when
/// `tasm`, to `output`. `otherFlags` (-D, compile flags, --emit=ast) is an
/// error: an NKI kernel is compiled as written. Returns the exit status.
int compileNkiKernel(const NkiSource &src, const std::string &targetName, bool tasm,
                     const std::string &output, bool otherFlags);

/// --check for a traced kernel: with `src.reference`, that numpy function of
/// the kernel's inputs (the kernel's math); else the trace re-executed in
/// Python on the simulator's inputs (the lowering only). Fills `check` like
/// the .tsl check and returns whether it passed.
bool checkNkiKernel(const NkiSource &src, const runtime::Target &target,
                    const runtime::SimResult &result, llvm::json::Object &check);

} // namespace tessel::compiler

#endif

//===- backend/NkiLoops.cpp - Which loops NKI may run as affine_range -----===//
//
// nl.affine_range declares a loop without loop-carried dependences (matmul
// accumulation into one PSUM tile is allowed); nl.sequential_range keeps the
// iteration order. A loop is parallel when every buffer its body writes and
// does not allocate itself is written at places disjoint between iterations
// (or accumulated by matmuls whose group the loop is) and is not also read in
// the body. Conservative: anything else stays sequential.
//
//===----------------------------------------------------------------------===//
#include "backend/NkiEmitter.h"

#include "ir/LoopDeps.h"

namespace tessel::backend {

bool nkiLoopIsParallel(const ir::ForOp &loop) { return ir::iterationsIndependent(loop); }

} // namespace tessel::backend

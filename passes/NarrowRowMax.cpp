//===- passes/NarrowRowMax.cpp - Row maxima kept in bf16 ------------------===//
//
// `narrow-row-max`: TileGen gives every partial reduction an fp32 tile, as a
// sum needs. A maximum (or minimum) of bf16 values is one of them, so a tile
// written only by `tensor_reduce max|min` of bf16 sources holds bf16 values
// whatever its dtype: it is made bf16,
//   %part = alloc sbuf<f32, [M:128, B:1]>
//   tensor_reduce max %part[r, 0 +: 1] <- %S[r, %n +: 512]      (S bf16)
// becomes `%part = alloc sbuf<bf16, ...>`, and the vector engine reduces
// bf16 to bf16 at twice the rate (NKI ISA tensor_reduce: N/2 cycles with bf16
// in and out, add or max; docs/hardware.md §4.2). Softmax's row max on an
// SBUF strip is the case. The values read back are the same: every reader
// computes in fp32, and the bf16 tile holds exactly the fp32 values it held.
// Only tiles read by vector or scalar engine instructions change (a DMA or a
// matmul would move or multiply other bytes).
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Casting.h"
#include "llvm/Support/FormatVariadic.h"

namespace tessel::passes {
namespace {

using namespace ir;

/// Whether `op` writes a bf16 value into `dst` whatever `dst`'s dtype.
bool writesBf16Values(Op &op) {
  auto *reduce = llvm::dyn_cast<TensorReduceOp>(&op);
  return reduce && (reduce->alu == AluOp::Max || reduce->alu == AluOp::Min) &&
         reduce->src.base->type.dtype == DType::BF16;
}

/// Whether `op` reads its operands as fp32 values on the vector or scalar engine.
bool readsAsValues(const Op &op) {
  return llvm::isa<TensorReduceOp, TensorTensorOp, TensorScalarOp, CopyOp, ActivationOp>(&op);
}

/// Makes bf16 every SBUF fp32 tile whose accesses allow it; returns how many.
unsigned narrowOnce(Kernel &kernel) {
  // Per SBUF fp32 buffer: whether every access keeps it a candidate, and
  // whether it is written at all.
  struct State {
    bool ok = true, written = false;
  };
  llvm::DenseMap<const Value *, State> state;
  walk(kernel.body, [&](Op &op, llvm::ArrayRef<ForOp *>) {
    if (auto *alloc = llvm::dyn_cast<AllocOp>(&op)) {
      const TensorType &t = alloc->result->type;
      if (t.space == MemSpace::SBUF && t.dtype == DType::F32)
        state.try_emplace(alloc->result);
      return;
    }
    for (Access *w : op.writes())
      if (auto it = state.find(w->base); it != state.end()) {
        it->second.ok = it->second.ok && op.writes().size() == 1 && writesBf16Values(op);
        it->second.written = true;
      }
    for (Access *r : op.reads())
      if (auto it = state.find(r->base); it != state.end())
        it->second.ok = it->second.ok && readsAsValues(op);
  });
  unsigned narrowed = 0;
  walk(kernel.body, [&](Op &op, llvm::ArrayRef<ForOp *>) {
    auto *alloc = llvm::dyn_cast<AllocOp>(&op);
    if (!alloc)
      return;
    auto it = state.find(alloc->result);
    if (it != state.end() && it->second.ok && it->second.written) {
      alloc->result->type.dtype = DType::BF16;
      ++narrowed;
    }
  });
  return narrowed;
}

class NarrowRowMaxPass : public Pass {
public:
  llvm::StringRef name() const override { return "narrow-row-max"; }
  llvm::StringRef description() const override {
    return "keep a partial row max of bf16 values in bf16: the vector engine reduces bf16 to bf16 "
           "at twice the rate";
  }
  PassResult run(Kernel &kernel, PassContext &) override {
    // A narrowed tile's own max is bf16 values too: until nothing changes.
    unsigned narrowed = 0;
    while (unsigned n = narrowOnce(kernel))
      narrowed += n;
    if (!narrowed)
      return PassResult::Unchanged;
    kernel.notes.push_back(llvm::formatv("[narrow-row-max] {0} partial row max tile(s) kept in bf16 (the "
                                         "vector engine's bf16-to-bf16 reduction rate)",
                                         narrowed));
    return PassResult::Changed;
  }
};

} // namespace

std::unique_ptr<Pass> createNarrowRowMaxPass() { return std::make_unique<NarrowRowMaxPass>(); }

} // namespace tessel::passes

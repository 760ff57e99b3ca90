//===- backend/StackAddresses.cpp - Scope-based on-chip addresses ---------===//
//
// The simplest correct placement: a buffer is live while the block holding
// its alloc runs, so each block pushes its allocs on a per-space stack and
// pops them on exit. Straightforward-form kernels fit easily; the `allocate`
// pass does better (and spills) for the fused pipeline.
//
//===----------------------------------------------------------------------===//
#include "backend/Backend.h"

#include "llvm/Support/Casting.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

namespace tessel::backend {
namespace {

using namespace ir;

bool foldsFitBanks(int64_t base, int64_t fold, int64_t slot, int64_t bufs, int64_t bank) {
  for (int64_t copy = 0; copy < bufs; ++copy)
    for (int64_t f = copy * slot; f < (copy + 1) * slot; f += fold)
      if ((base + f) / bank != (base + f + fold - 1) / bank)
        return false;
  return true;
}

int64_t firstBankSafeOffset(int64_t from, int64_t fold, int64_t slot, int64_t bufs, int64_t bank) {
  for (int64_t candidate = llvm::alignTo(from, 4); candidate < from + bank; candidate += 4)
    if (foldsFitBanks(candidate, fold, slot, bufs, bank))
      return candidate;
  return llvm::alignTo(from, bank); // a fold wider than a bank (the verifier rejects those)
}

struct StackState {
  int64_t sbufTop = 0, psumTop = 0;
  int64_t sbufPeak = 0, psumPeak = 0;
  const AllocOp *sbufLargest = nullptr, *psumLargest = nullptr; ///< the largest alloc of each
};

/// Keeps in `largest` the alloc of more bytes per partition.
void keepLargest(const AllocOp *&largest, const AllocOp *alloc, int64_t bytes, int64_t partitions) {
  if (!largest || bytes > largest->result->type.bytesPerPartition(partitions) * largest->bufs)
    largest = alloc;
}

void place(Block &block, StackState &st, const TileGeometry &geometry) {
  StackState saved = st;
  for (auto &op : block.ops) {
    if (auto *alloc = llvm::dyn_cast<AllocOp>(op.get())) {
      const TensorType &t = alloc->result->type;
      if (t.space == MemSpace::HBM || alloc->address)
        continue;
      const int64_t copyBytes = t.bytesPerPartition(geometry.partitions);
      int64_t bytes = copyBytes * alloc->bufs;
      if (t.space == MemSpace::SBUF) {
        alloc->address = llvm::alignTo(st.sbufTop, geometry.sbufAlignBytes);
        st.sbufTop = *alloc->address + bytes;
        keepLargest(st.sbufLargest, alloc, bytes, geometry.partitions);
        st.sbufPeak = std::max(st.sbufPeak, st.sbufTop);
      } else {
        // The lowest offset at which no fold of any copy -- one accumulation
        // tile -- straddles two PSUM banks.
        alloc->address = firstBankSafeOffset(st.psumTop, copyBytes / t.partitionFolds(geometry.partitions),
                                             copyBytes, alloc->bufs, geometry.psumBankBytes);
        st.psumTop = *alloc->address + bytes;
        keepLargest(st.psumLargest, alloc, bytes, geometry.partitions);
        st.psumPeak = std::max(st.psumPeak, st.psumTop);
      }
    } else if (auto *loop = llvm::dyn_cast<ForOp>(op.get())) {
      place(loop->body, st, geometry);
    }
  }
  saved.sbufPeak = st.sbufPeak;
  saved.psumPeak = st.psumPeak;
  saved.sbufLargest = st.sbufLargest;
  saved.psumLargest = st.psumLargest;
  st = saved;
}

} // namespace

static llvm::Error checkCapacity(const Kernel &kernel, const runtime::Target &target,
                                 llvm::StringRef space, int64_t peak, const AllocOp *largest,
                                 int64_t capacity, const llvm::SourceMgr *sources) {
  if (peak <= capacity)
    return llvm::Error::success();
  std::string hint = shorterRowStripAdvice(kernel, "use smaller or fewer buffers");
  const int64_t partitions = kernel.geometry.partitions;
  std::string msg = llvm::formatv("kernel '{0}' needs {1} bytes of {2} per partition, but target "
                                  "'{3}' has {4}; the largest buffer is %{5} ({6} bytes per "
                                  "partition); {7}",
                                  kernel.name, peak, space, target.name, capacity,
                                  largest ? largest->result->name : "?",
                                  largest ? largest->result->type.bytesPerPartition(partitions) * largest->bufs : 0,
                                  hint)
                        .str();
  return locatedError(sources, largest ? largest->loc : kernel.loc, msg);
}

llvm::Error assignStackAddresses(Kernel &kernel, const runtime::Target &target,
                                 const llvm::SourceMgr *sources) {
  StackState st;
  place(kernel.body, st, kernel.geometry);
  if (auto err = checkCapacity(kernel, target, "SBUF", st.sbufPeak, st.sbufLargest,
                               target.sbuf_bytes_per_partition, sources))
    return err;
  return checkCapacity(kernel, target, "PSUM", st.psumPeak, st.psumLargest, target.psum_bytes_per_partition,
                       sources);
}

} // namespace tessel::backend

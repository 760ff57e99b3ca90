//===- runtime/NumericExecutor.h - The numbers of a program run -*- C++ -*-===//
//
// Internal to the runtime. Holds every HBM tensor and buffer slot -- bf16
// objects as bf16 bit patterns (2 bytes an element, rounded to nearest even
// on every store), f32 objects as float32 -- with a written-flag per element,
// and executes the arithmetic of one instruction on tile views that the
// caller has evaluated and checked (shapes, bounds, never-written reads
// through firstUnwritten). Tiles are converted to float32 only while an
// instruction computes on them. It knows nothing of time.
//
// The arithmetic of every instruction is a task of a TaskGraph: independent
// instructions (tile products of different PSUM slots, loads of other
// buffers) run on several threads, each on exactly the values it would see
// in program order -- one cblas_sgemm call per tile product, as on one
// thread -- so the results are bit-identical for any number of threads. The
// written-flags are kept by the caller's thread as it submits. Converted
// matmul operands are kept in a cache the threads share (TileCache.h).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_NUMERICEXECUTOR_H
#define TESSEL_RUNTIME_NUMERICEXECUTOR_H

#include "runtime/HugePages.h"
#include "runtime/Program.h"
#include "runtime/TaskGraph.h"
#include "runtime/TileCache.h"
#include "runtime/TileView.h"

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <unordered_set>
#include <vector>

namespace tessel::runtime {

class NumericExecutor {
public:
  /// Zeroed, never-written storage for every tensor and buffer slot; the
  /// arithmetic runs on `threads` threads (0: the machine's).
  explicit NumericExecutor(const Program &P, unsigned threads = 1);

  /// Gives input tensor `id` its values: float32 for an f32 tensor, bf16 bit
  /// patterns for a bf16 one.
  void setInput(uint32_t id, std::vector<float> values) { ten[id].f32 = std::move(values); }
  void setInputBits(uint32_t id, std::vector<uint16_t> bits) { ten[id].bf16 = std::move(bits); }
  /// Gives input tensor `id` the values fill(f32, bf16) writes into its
  /// storage (f32: float32 of an f32 tensor, bf16: bit patterns of a bf16
  /// one; the other is null), computed as a task (in parallel with other
  /// inputs').
  void fillInput(uint32_t id, std::function<void(float *f32, uint16_t *bf16)> fill);
  /// Takes tensor `id`'s values out (the run is over), as float32.
  std::vector<float> takeTensor(uint32_t id);
  /// Takes bf16 tensor `id`'s bit patterns out (the run is over): no copy.
  std::vector<uint16_t> takeBits(uint32_t id);
  /// Elements of tensor `id` never written.
  size_t unwrittenElements(uint32_t id) const;
  /// A fresh allocation of `slot` of buffer `id` holds no data the program wrote for it.
  void allocate(uint32_t id, int64_t slot);
  /// The row-major index within the tile of the first element of `v` never
  /// written, or -1 (inputs count as written).
  int64_t firstUnwritten(const TileView &v) const;

  void dma(const TileView &dst, const TileView &src, bool transpose);
  /// dst (+)= st^T @ mv in fp32 (reset: overwrite).
  void matmul(const TileView &dst, const TileView &st, const TileView &mv, bool reset);
  void transpose(const TileView &dst, const TileView &src);
  /// Activation, tensor_tensor, tensor_scalar, copy, memset, tensor_reduce,
  /// iota, affine_select; `offset`: iota's and affine_select's affine
  /// offset at this iteration. srcs: as Instr::srcs (an activation's
  /// accumulator last).
  void elementwise(const Instr &in, const TileView &dst, const TileView *srcs, int64_t offset = 0);

private:
  /// One object's elements: `bf16` holds a bf16 object, `f32` an f32 one.
  struct Store {
    std::vector<float> f32;
    std::vector<uint16_t> bf16;
    ZeroPages<uint8_t> init; ///< written-flags (not kept for inputs)
  };
  /// Float32 tiles of one thread.
  struct Scratch {
    std::vector<float> a, b, c;
    std::vector<uint16_t> bits, bitsT;
    std::vector<Run> runs;
  };

  /// OpenBLAS on one thread while the executor lives (a tile product is at
  /// most 128 x 128 x 512: BLAS's own threads would only spin on it; the
  /// executor's threads run products side by side); the setting is restored.
  struct OneBlasThread {
    int saved = 1;
    OneBlasThread();
    ~OneBlasThread();
  };

  /// A view's placement and shape: the key of a view found fully written.
  struct ViewKey {
    std::array<int64_t, 4 + 2 * MaxDims> f{};
    explicit ViewKey(const TileView &v);
    bool operator==(const ViewKey &o) const { return f == o.f; }
  };
  struct ViewKeyHash {
    size_t operator()(const ViewKey &k) const;
  };

  const Program &P;
  OneBlasThread blasThreads;
  std::vector<Store> ten, buf;
  /// Per buffer and tensor, views firstUnwritten found fully written since
  /// the buffer's last allocate (flags only go from unwritten to written in
  /// between): a tile read again -- a moving tile feeding several products,
  /// the strip a blocked kernel reads for every column block -- is checked once.
  mutable std::vector<std::unordered_set<ViewKey, ViewKeyHash>> writtenViews[2];
  /// Per tensor and buffer: instructions submitted that write it (TileCache's generation).
  std::vector<uint64_t> tenWrites, bufWrites;
  std::vector<Scratch> scratch; ///< per thread
  TileCache operands;           ///< matmul operands converted to float32, shared by the threads
  TaskGraph tasks;              ///< declared last: destroyed (its tasks finished) first

  Store &store(const TileView &v) { return v.isBuffer ? buf[v.id] : ten[v.id]; }
  const Store &store(const TileView &v) const { return v.isBuffer ? buf[v.id] : ten[v.id]; }
  bool isInput(const TileView &v) const { return !v.isBuffer && P.tensors[v.id].role == TensorRole::Input; }
  /// Writes the tile's values, row-major, to out[0, P*F).
  void gather(const TileView &v, float *out) const;
  void gather(const TileView &v, std::vector<float> &out) const {
    out.resize(size_t(v.P * v.F));
    gather(v, out.data());
  }
  /// Stores in[0, P*F) into the tile's elements (bf16: rounded to nearest even).
  void scatter(const TileView &v, const float *in);
  void setWritten(const TileView &v);
  static bool sameObject(const TileView &a, const TileView &b) { return a.isBuffer == b.isBuffer && a.id == b.id; }
  /// dst = src (another object), converted run by run: a DMA or copy
  /// without a float32 or bits copy of the tile in between.
  void copyTile(const TileView &dst, const TileView &src, Scratch &s);
  uint64_t &generation(const TileView &v) { return v.isBuffer ? bufWrites[v.id] : tenWrites[v.id]; }
  /// `v` (at write generation `gen`) as a float32 matrix for BLAS, with its
  /// leading dimension: in place when the storage is float32 with contiguous
  /// rows, else a converted copy from the operand cache, which `pin` holds.
  const float *matrixOperand(const TileView &v, uint64_t gen, std::optional<TileCache::Pin> &pin, int &ld);
  /// The arithmetic of matmul; gens[0], gens[1]: st's and mv's write generations.
  void runMatmul(const TileView &dst, const TileView &st, const TileView &mv, const uint64_t *gens, bool reset,
                 Scratch &s);
  void runElementwise(const Instr &in, const TileView &dst, const TileView *srcs, int64_t offset, Scratch &s);
  /// Instructions with per-partition tiles (Instr::tiles).
  void withTiles(const Instr &in, const TileView &dst, const TileView *srcs);
  void runWithTiles(const Instr &in, const TileView &dst, const TileView *srcs, Scratch &s);
};

} // namespace tessel::runtime

#endif

//===- runtime/NumericExecutor.h - The numbers of a program run -*- C++ -*-===//
//
// Internal to the runtime. Holds every HBM tensor and buffer slot as float32
// values (bf16 values rounded to nearest even on every store) with a
// written-flag per element, and executes the arithmetic of one instruction
// on tile views that the caller has evaluated and checked (shapes, bounds,
// never-written reads through firstUnwritten). It knows nothing of time.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_NUMERICEXECUTOR_H
#define TESSEL_RUNTIME_NUMERICEXECUTOR_H

#include "runtime/Program.h"
#include "runtime/TileView.h"

#include <cstdint>
#include <vector>

namespace tessel::runtime {

class NumericExecutor {
public:
  /// Zeroed, never-written storage for every tensor and buffer slot.
  explicit NumericExecutor(const Program &P);

  /// Gives input tensor `id` its values (already rounded to its dtype).
  void setInput(uint32_t id, std::vector<float> values);
  /// Takes tensor `id`'s values out (the run is over).
  std::vector<float> takeTensor(uint32_t id) { return std::move(tenData[id]); }
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
  /// Activation, tensor_tensor, tensor_scalar, copy, memset.
  void elementwise(const Instr &in, const TileView &dst, const TileView *srcs);

private:
  const Program &P;
  std::vector<std::vector<float>> tenData, bufData;
  std::vector<std::vector<uint8_t>> tenInit, bufInit;
  std::vector<float> tA, tB, tC; ///< scratch tiles

  float *storage(const TileView &v) { return v.isBuffer ? bufData[v.id].data() : tenData[v.id].data(); }
  DType dtypeOf(const TileView &v) const {
    return v.isBuffer ? P.buffers[v.id].dtype : P.tensors[v.id].dtype;
  }
  void gather(const TileView &v, std::vector<float> &out);
  void scatter(const TileView &v, const float *in);
  void setWritten(const TileView &v);
  /// out = the [P, F] tile `in` transposed to [F, P].
  static void transposeTile(const std::vector<float> &in, int64_t P, int64_t F, std::vector<float> &out);
};

} // namespace tessel::runtime

#endif

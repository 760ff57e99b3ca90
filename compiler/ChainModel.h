//===- compiler/ChainModel.h - Analytic cost of a fused chain -*- C++ -*-===//
//
// The chain model of docs/cost-models.md, on shapes alone: the cost of a row-strip fused kernel for
// Y = X @ W1 @ ... @ Wn, as a function of the strip height bs. The strip of
// X is read once, Y written once, and every weight re-read once per strip:
//
//   FLOPs   = 2 M Σ K(i-1) Ki
//   traffic = b (M K0 + M Kn + ceil(M / bs) Σ K(i-1) Ki)
//   AI(bs)  = FLOPs / traffic,   roofline(bs) = max(FLOPs / peak, traffic / bandwidth)
//
// The general constructor takes any set of row-strip matmuls (a SwiGLU block:
// the gate, up and down factors, X read once), which is the traffic of the
// ideal fused kernel; KernelCost gives what the pipeline actually builds.
// Definitions and what is exact: docs/cost-models.md.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_COMPILER_CHAINMODEL_H
#define TESSEL_COMPILER_CHAINMODEL_H

#include "runtime/Target.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace tessel::compiler {

/// A weight operand [rows, cols] of a row-strip matmul.
struct WeightShape {
  int64_t rows = 0, cols = 0;
  int64_t elements() const { return rows * cols; }
};

class ChainModel {
public:
  /// M rows; `inputCols` the widths of the [M, c] operands read once; each
  /// weight [K, N] multiplies a [M, K] operand of the strip; `outputCols` the
  /// widths of the [M, c] results written once; `elementBytes` per element.
  ChainModel(int64_t rows, std::vector<int64_t> inputCols, std::vector<WeightShape> weights,
             std::vector<int64_t> outputCols, int64_t elementBytes);

  /// X [rows, dims[0]] @ W1 [dims[0], dims[1]] @ ... @ Wn [dims[n-1], dims[n]].
  static ChainModel chain(int64_t rows, llvm::ArrayRef<int64_t> dims, int64_t elementBytes);

  int64_t rows() const { return numRows; }
  uint64_t flops() const;
  /// HBM bytes of the fused kernel with strips of `stripRows` rows.
  uint64_t trafficBytes(int64_t stripRows) const;
  /// flops / trafficBytes(stripRows), flop per byte.
  double arithmeticIntensity(int64_t stripRows) const;
  /// max(flops / peak bf16 flops, traffic / HBM bandwidth), microseconds.
  double rooflineUs(int64_t stripRows, const runtime::Target &target) const;
  /// max(flops / peak bf16 flops, traffic / the bandwidth every DMA shares
  /// (the smaller of the HBM share and the DMA engine pool)), microseconds:
  /// no kernel moving that traffic is predicted or simulated faster (each
  /// transfer holds the shared bandwidth for its bytes, runtime/DmaModel.h).
  double streamBoundUs(int64_t stripRows, const runtime::Target &target) const;

  /// The smallest strip height, a multiple of the target's partition tile and at
  /// most the rows rounded up to it, whose intensity reaches the target's
  /// ridge point (compute bound); none if even one strip of all rows is
  /// memory bound.
  std::optional<int64_t> smallestStripClearingRidge(const runtime::Target &target) const;

  /// The paper's eq. 11 SBUF model for the chain X @ W1 @ ... @ Wn (`dims`
  /// = the widths of X, W1, ..., Wn), in bytes per partition of `partitions`:
  /// the max over phases i = 1..n of what phase i holds -- its input (one
  /// X^T block [P, bs] for i = 1, else the strip [bs, d(i-1)]), one block
  /// [P, n] of Wi, and its output (the strip [bs, di], or one output block
  /// [P, n] for i = n). Blocks are one tile deep (P = the partitions), as
  /// the K-blocked form streams them.
  static int64_t eq11SbufBytes(llvm::ArrayRef<int64_t> dims, int64_t stripRows,
                               int64_t columnBlock, int64_t partitions, int64_t elementBytes);

private:
  int64_t numRows;
  std::vector<int64_t> inputCols, outputCols;
  std::vector<WeightShape> weights;
  int64_t elementBytes;
};

} // namespace tessel::compiler

#endif

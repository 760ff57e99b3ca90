//===- compiler/ChainModel.cpp - Analytic cost of a fused chain ----===//
#include "compiler/ChainModel.h"

#include "ir/Types.h"
#include "passes/TargetGeometry.h"
#include "runtime/DmaModel.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cassert>

namespace tessel::compiler {
using passes::geometryFor;

ChainModel::ChainModel(int64_t rows, std::vector<int64_t> inputCols, std::vector<WeightShape> weights,
                       std::vector<int64_t> outputCols, int64_t elementBytes)
    : numRows(rows), inputCols(std::move(inputCols)), outputCols(std::move(outputCols)),
      weights(std::move(weights)), elementBytes(elementBytes) {
  assert(rows > 0 && elementBytes > 0 && "a chain has rows and elements");
}

ChainModel ChainModel::chain(int64_t rows, llvm::ArrayRef<int64_t> dims, int64_t elementBytes) {
  assert(dims.size() >= 2 && "a chain has at least one weight");
  std::vector<WeightShape> weights;
  for (size_t i = 1; i < dims.size(); ++i)
    weights.push_back({dims[i - 1], dims[i]});
  return ChainModel(rows, {dims.front()}, std::move(weights), {dims.back()}, elementBytes);
}

int64_t ChainModel::eq11SbufBytes(llvm::ArrayRef<int64_t> dims, int64_t stripRows,
                                  int64_t columnBlock, int64_t partitions, int64_t elementBytes) {
  auto strip = [&](int64_t cols) { return (cols + partitions - 1) / partitions * stripRows; };
  int64_t peak = 0;
  for (size_t i = 1; i < dims.size(); ++i) {
    int64_t input = i == 1 ? stripRows : strip(dims[i - 1]);
    int64_t output = i + 1 == dims.size() ? columnBlock : strip(dims[i]);
    peak = std::max(peak, input + columnBlock + output);
  }
  return peak * elementBytes;
}

uint64_t ChainModel::flops() const {
  uint64_t perRow = 0;
  for (const WeightShape &w : weights)
    perRow += uint64_t(w.elements());
  return 2 * uint64_t(numRows) * perRow;
}

uint64_t ChainModel::trafficBytes(int64_t stripRows) const {
  assert(stripRows > 0 && "a strip has rows");
  uint64_t rowElements = 0, weightElements = 0;
  for (int64_t c : inputCols)
    rowElements += uint64_t(numRows) * uint64_t(c);
  for (int64_t c : outputCols)
    rowElements += uint64_t(numRows) * uint64_t(c);
  for (const WeightShape &w : weights)
    weightElements += uint64_t(w.elements());
  uint64_t strips = uint64_t(llvm::divideCeil(numRows, stripRows));
  return uint64_t(elementBytes) * (rowElements + strips * weightElements);
}

double ChainModel::arithmeticIntensity(int64_t stripRows) const {
  return double(flops()) / double(trafficBytes(stripRows));
}

double ChainModel::rooflineUs(int64_t stripRows, const runtime::Target &target) const {
  double computeSec = double(flops()) / target.peakBf16Flops();
  double memorySec = double(trafficBytes(stripRows)) / (target.hbm_bandwidth_gbs * 1e9);
  return std::max(computeSec, memorySec) * 1e6;
}

double ChainModel::streamBoundUs(int64_t stripRows, const runtime::Target &target) const {
  double computeNs = double(flops()) / target.peakBf16Flops() * 1e9;
  double streamNs = double(trafficBytes(stripRows)) / runtime::DmaModel(target).sharedBytesPerNs();
  return std::max(computeNs, streamNs) * 1e-3;
}

std::optional<int64_t> ChainModel::smallestStripClearingRidge(const runtime::Target &target) const {
  // Intensity never falls as strips grow (fewer weight re-reads), so the
  // first strip over the ridge is the smallest.
  double ridge = target.ridgeFlopsPerByte();
  const int64_t tile = geometryFor(target).partitions;
  const int64_t largest = llvm::alignTo(numRows, tile);
  for (int64_t bs = tile; bs <= largest; bs += tile)
    if (arithmeticIntensity(bs) >= ridge)
      return bs;
  return std::nullopt;
}

} // namespace tessel::compiler

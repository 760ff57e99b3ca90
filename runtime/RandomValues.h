//===- runtime/RandomValues.h - The seeded random input values ---*- C++ -*-===//
//
// Internal to the runtime. The values of randomTensorValues (Simulator.h):
// std::mt19937_64's sequence, seeded by (seed, tensor name), drawn a block of
// 312 at a time by loops the compiler vectorizes (inputs of a 70B-size layer
// hold hundreds of millions of values), each mapped to [-s, s).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_RANDOMVALUES_H
#define TESSEL_RUNTIME_RANDOMVALUES_H

#include "runtime/Program.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace tessel::runtime {

/// std::mt19937_64's outputs, 312 at a time.
class MersenneTwister64 {
public:
  static constexpr size_t BlockSize = 312;
  explicit MersenneTwister64(uint64_t seed);
  /// Writes the next BlockSize outputs.
  void nextBlock(uint64_t *out);

private:
  uint64_t mt[BlockSize];
};

/// As float32 values (rounded to bf16 for a bf16 tensor).
std::vector<float> randomFloats(const TensorDecl &t, uint64_t seed, std::optional<double> halfWidth);
/// As the bf16 bit patterns of the same values.
std::vector<uint16_t> randomBF16Bits(const TensorDecl &t, uint64_t seed, std::optional<double> halfWidth);
/// The same values written to out[0, numElements) (storage the caller placed).
void randomFloats(const TensorDecl &t, uint64_t seed, std::optional<double> halfWidth, float *out);
void randomBF16Bits(const TensorDecl &t, uint64_t seed, std::optional<double> halfWidth, uint16_t *out);

} // namespace tessel::runtime

#endif

//===- runtime/RandomValues.cpp - The seeded random input values ----------===//
#include "runtime/RandomValues.h"

#include "runtime/BF16.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace tessel::runtime {

namespace {
constexpr size_t N = MersenneTwister64::BlockSize, M = 156;
constexpr uint64_t MatrixA = 0xB5026F5AA96619E9ull, Upper = ~uint64_t(0) << 31, Lower = ~Upper;

// The loops run over whole blocks (TESSEL_AVX2_CLONES, BF16.h): at -O2 the
// compiler vectorizes loops of a constant trip count.

double bitsDouble(uint64_t u) {
  double d;
  std::memcpy(&d, &u, 8);
  return d;
}

/// 2u - 1 for u = (raw >> 11) / 2^53 in [0, 1), exactly as computed by
/// double arithmetic: the 52 low bits of x = raw >> 11 make 1 + f (f = low /
/// 2^52), and f + (top bit of x) - 1 needs no rounding. Integer and double
/// operations only, which vectorize (a 64-bit integer to double conversion
/// does not before AVX-512).
inline double signedUnit(uint64_t raw) {
  const uint64_t x = raw >> 11;
  const double f = bitsDouble(0x3FF0000000000000ull | (x & 0xFFFFFFFFFFFFFull)) - 1.0;
  return f + bitsDouble((x >> 52) ? 0 : 0xBFF0000000000000ull); // + 0 or - 1
}

/// values[i] = float(signedUnit(raw[i]) * s) for a whole block.
TESSEL_AVX2_CLONES void blockValues(const uint64_t *raw, double s, float *values) {
  for (size_t i = 0; i < N; ++i)
    values[i] = float(signedUnit(raw[i]) * s);
}

TESSEL_AVX2_CLONES void blockBF16Bits(const float *values, uint16_t *bits) { floatsToBF16Bits(values, bits, N); }

inline uint64_t twisted(uint64_t self, uint64_t next, uint64_t far) {
  uint64_t y = (self & Upper) | (next & Lower);
  return far ^ (y >> 1) ^ ((uint64_t(0) - (y & 1)) & MatrixA);
}

/// The generator of tensor `t`: (seed, FNV-1a of the name), stable across platforms and runs.
MersenneTwister64 generatorFor(const TensorDecl &t, uint64_t seed) {
  uint64_t h = 1469598103934665603ull;
  for (char c : t.name) {
    h ^= uint8_t(c);
    h *= 1099511628211ull;
  }
  return MersenneTwister64(h ^ (seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull));
}

/// Every value of tensor `t`, uniform in [-s, s), through store(index, value).
template <class Store> void drawValues(const TensorDecl &t, uint64_t seed, std::optional<double> halfWidth, Store store) {
  MersenneTwister64 rng = generatorFor(t, seed);
  const double s = halfWidth ? *halfWidth : std::sqrt(3.0 / double(t.shape.empty() ? 1 : t.shape[0]));
  const size_t n = size_t(t.numElements());
  uint64_t raw[N];
  float values[N];
  for (size_t at = 0; at < n; at += N) {
    rng.nextBlock(raw);
    blockValues(raw, s, values);
    store(at, values, std::min(N, n - at));
  }
}

/// The state's next block: twist and temper (std::mt19937_64's algorithm).
TESSEL_AVX2_CLONES void twistAndTemper(uint64_t *mt, uint64_t *out) {
  for (size_t i = 0; i < N - M; ++i)
    mt[i] = twisted(mt[i], mt[i + 1], mt[i + M]);
  for (size_t i = N - M; i < N - 1; ++i)
    mt[i] = twisted(mt[i], mt[i + 1], mt[i + M - N]);
  mt[N - 1] = twisted(mt[N - 1], mt[0], mt[M - 1]);
  for (size_t i = 0; i < N; ++i) {
    uint64_t y = mt[i];
    y ^= (y >> 29) & 0x5555555555555555ull;
    y ^= (y << 17) & 0x71D67FFFEDA60000ull;
    y ^= (y << 37) & 0xFFF7EEE000000000ull;
    out[i] = y ^ (y >> 43);
  }
}
} // namespace

MersenneTwister64::MersenneTwister64(uint64_t seed) {
  mt[0] = seed;
  for (size_t i = 1; i < N; ++i)
    mt[i] = 6364136223846793005ull * (mt[i - 1] ^ (mt[i - 1] >> 62)) + i;
}

void MersenneTwister64::nextBlock(uint64_t *out) { twistAndTemper(mt, out); }

void randomFloats(const TensorDecl &t, uint64_t seed, std::optional<double> halfWidth, float *out) {
  const bool bf16 = t.dtype == DType::BF16;
  drawValues(t, seed, halfWidth, [&](size_t at, const float *values, size_t len) {
    for (size_t i = 0; i < len; ++i)
      out[at + i] = bf16 ? roundToBF16(values[i]) : values[i];
  });
}

void randomBF16Bits(const TensorDecl &t, uint64_t seed, std::optional<double> halfWidth, uint16_t *out) {
  uint16_t bits[N];
  drawValues(t, seed, halfWidth, [&](size_t at, const float *values, size_t len) {
    blockBF16Bits(values, bits);
    std::memcpy(out + at, bits, len * sizeof(uint16_t));
  });
}

std::vector<float> randomFloats(const TensorDecl &t, uint64_t seed, std::optional<double> halfWidth) {
  std::vector<float> v(size_t(t.numElements()));
  randomFloats(t, seed, halfWidth, v.data());
  return v;
}

std::vector<uint16_t> randomBF16Bits(const TensorDecl &t, uint64_t seed, std::optional<double> halfWidth) {
  std::vector<uint16_t> v(size_t(t.numElements()));
  randomBF16Bits(t, seed, halfWidth, v.data());
  return v;
}

} // namespace tessel::runtime

//===- runtime/BF16.h - bfloat16 rounding ------------------------*- C++ -*-===//
//
// The numeric executor holds bf16 buffers and tensors as bf16 bit patterns;
// every store into one goes through floatToBF16Bits (round to nearest, ties
// to even, as the hardware's fp32 -> bf16 conversion), and a tile computes
// in float32 after bf16BitsToFloat. NaN stays NaN (quietened), +-Inf stays
// Inf, finite values that round past the largest bf16 become +-Inf.
// roundToBF16 gives the same value as a float32 (inputs, the API).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_BF16_H
#define TESSEL_RUNTIME_BF16_H

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace tessel::runtime {

inline uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

/// fp32 -> bf16 bit pattern, round to nearest even.
inline uint16_t floatToBF16Bits(float f) {
  uint32_t u = floatBits(f);
  if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu)) // NaN: keep sign, quiet
    return uint16_t((u >> 16) | 0x0040u);
  uint32_t lsb = (u >> 16) & 1u;
  u += 0x7fffu + lsb;
  return uint16_t(u >> 16);
}

inline float bf16BitsToFloat(uint16_t b) { return bitsFloat(uint32_t(b) << 16); }

/// floatToBF16Bits and bf16BitsToFloat over arrays, written without branches
/// so that the compiler vectorizes them (tiles convert on every access).
inline void floatsToBF16Bits(const float *in, uint16_t *out, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    uint32_t u = floatBits(in[i]);
    uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16, quietNaN = (u >> 16) | 0x0040u;
    out[i] = uint16_t((u & 0x7fffffffu) > 0x7f800000u ? quietNaN : rounded);
  }
}
inline void bf16BitsToFloats(const uint16_t *in, float *out, size_t n) {
  for (size_t i = 0; i < n; ++i)
    out[i] = bitsFloat(uint32_t(in[i]) << 16);
}

// Marks a function of whole-array loops to be compiled for AVX2 as well as
// the baseline ISA, the version chosen when the program loads (the compiler
// vectorizes those loops; AVX2's lanes are twice SSE2's). Only on
// definitions in .cpp files: a clone set must not be inline.
#if defined(__x86_64__) && defined(__GNUC__) && defined(__ELF__)
#define TESSEL_AVX2_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define TESSEL_AVX2_CLONES
#endif

/// Rounds an fp32 value to the nearest bf16 value (ties to even).
inline float roundToBF16(float f) { return bf16BitsToFloat(floatToBF16Bits(f)); }

/// IEEE half -> float (for .npy float16 inputs).
inline float halfBitsToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    if (mant == 0)
      return bitsFloat(sign);
    // subnormal: value = mant * 2^-24
    float v = float(mant) * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  if (exp == 31)
    return bitsFloat(sign | 0x7f800000u | (mant << 13));
  return bitsFloat(sign | ((exp + 112) << 23) | (mant << 13));
}

} // namespace tessel::runtime

#endif

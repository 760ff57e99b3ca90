//===- runtime/Npy.h - NumPy .npy reading and writing ------------*- C++ -*-===//
//
// Reads little-endian, C-order float32 ('<f4') and float16 ('<f2') arrays
// (format versions 1.0-3.0) into float32; writes float32 ('<f4', v1.0), from
// float32 values or bf16 bit patterns.
// Errors name the file and what was expected vs found (dtype, byte order,
// fortran order, truncated data, not an npy file).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_NPY_H
#define TESSEL_RUNTIME_NPY_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tessel::runtime {

struct NpyArray {
  std::vector<int64_t> shape;
  std::vector<float> data; ///< row-major, converted to float32
  std::string descr;       ///< dtype as found in the file, e.g. "<f4"
};

/// Parses .npy bytes; `origin` (the file name) prefixes error messages.
llvm::Expected<NpyArray> parseNpy(llvm::StringRef bytes, llvm::StringRef origin);
llvm::Expected<NpyArray> readNpy(llvm::StringRef path);

/// Serialises a float32 array as .npy v1.0 bytes.
std::string serializeNpy(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<float> data);
llvm::Error writeNpy(llvm::StringRef path, llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<float> data);
/// Writes bf16 bit patterns as a float32 array (converted a chunk at a time).
llvm::Error writeNpyFromBF16(llvm::StringRef path, llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<uint16_t> bf16);

/// "[640, 256]"
std::string formatShape(llvm::ArrayRef<int64_t> shape);

} // namespace tessel::runtime

#endif

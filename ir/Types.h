//===- ir/Types.h - Dtypes, memory spaces and tensor types ------*- C++ -*-===//
//
// A tensor type is a memory space, a dtype and a list of labelled dimensions.
// Labels name the logical dimension (M, K, R, N...), so layout is part of the
// type: for an on-chip buffer the FIRST dimension lies on the partitions
// (folded over groups of the target's partition count when larger), and a
// matmul whose operands do not both carry the contraction label there is a
// type error.
// HBM tensors are row-major and have no partition dimension.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_IR_TYPES_H
#define TESSEL_IR_TYPES_H

#include "support/DType.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>
#include <string>

namespace tessel::ir {

// Dtypes are registered in support/DTypes.def.
using tessel::DType;
using tessel::dtypeBytes;
using tessel::dtypeName;
using tessel::parseDType;
enum class MemSpace { HBM, SBUF, PSUM };

llvm::StringRef memSpaceName(MemSpace s);
std::optional<MemSpace> parseMemSpace(llvm::StringRef s);

struct Dim {
  std::string label;
  int64_t size = 0;
  bool operator==(const Dim &o) const { return label == o.label && size == o.size; }
};

struct TensorType {
  MemSpace space = MemSpace::HBM;
  DType dtype = DType::BF16;
  llvm::SmallVector<Dim, 3> dims;

  int64_t numElements() const;
  /// Bytes per partition for one copy of an on-chip buffer (partition dim
  /// folded over groups of `partitions`, the target's TileGeometry); total
  /// bytes for an HBM tensor.
  int64_t bytesPerPartition(int64_t partitions) const;
  int64_t partitionFolds(int64_t partitions) const;
  bool operator==(const TensorType &o) const {
    return space == o.space && dtype == o.dtype && dims == o.dims;
  }
  void print(llvm::raw_ostream &os) const;
  std::string str() const;
};

} // namespace tessel::ir

#endif

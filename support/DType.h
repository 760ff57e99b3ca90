//===- support/DType.h - Element types, from DTypes.def ---------*- C++ -*-===//
#ifndef TESSEL_SUPPORT_DTYPE_H
#define TESSEL_SUPPORT_DTYPE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>

namespace tessel {

enum class DType : uint8_t {
#define TESSEL_DTYPE(ENUM, NAME, BYTES) ENUM,
#include "support/DTypes.def"
};

llvm::ArrayRef<DType> allDTypes();
llvm::StringRef dtypeName(DType t);
std::optional<DType> parseDType(llvm::StringRef name);
int64_t dtypeBytes(DType t);

} // namespace tessel

#endif

//===- support/DType.cpp - Element types, from DTypes.def -----------------===//
#include "support/DType.h"

#include "support/Registry.h"

namespace tessel {

llvm::ArrayRef<DType> allDTypes() {
  static const DType all[] = {
#define TESSEL_DTYPE(ENUM, NAME, BYTES) DType::ENUM,
#include "support/DTypes.def"
  };
  return all;
}

llvm::StringRef dtypeName(DType t) {
  switch (t) {
#define TESSEL_DTYPE(ENUM, NAME, BYTES)                                                            \
  case DType::ENUM:                                                                                \
    return NAME;
#include "support/DTypes.def"
  }
  return "?";
}

std::optional<DType> parseDType(llvm::StringRef name) { return lookupName(allDTypes(), dtypeName, name); }

int64_t dtypeBytes(DType t) {
  switch (t) {
#define TESSEL_DTYPE(ENUM, NAME, BYTES)                                                            \
  case DType::ENUM:                                                                                \
    return BYTES;
#include "support/DTypes.def"
  }
  return 0;
}

} // namespace tessel

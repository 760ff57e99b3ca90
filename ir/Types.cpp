#include "ir/Types.h"

#include "llvm/Support/MathExtras.h"

namespace tessel::ir {

llvm::StringRef memSpaceName(MemSpace s) {
  switch (s) {
  case MemSpace::HBM: return "hbm";
  case MemSpace::SBUF: return "sbuf";
  case MemSpace::PSUM: return "psum";
  }
  return "?";
}

std::optional<MemSpace> parseMemSpace(llvm::StringRef s) {
  if (s == "hbm")
    return MemSpace::HBM;
  if (s == "sbuf")
    return MemSpace::SBUF;
  if (s == "psum")
    return MemSpace::PSUM;
  return std::nullopt;
}

int64_t TensorType::numElements() const {
  int64_t n = 1;
  for (const Dim &d : dims)
    n *= d.size;
  return n;
}

int64_t TensorType::partitionFolds(int64_t partitions) const {
  if (space == MemSpace::HBM || dims.empty())
    return 1;
  return llvm::divideCeil(dims[0].size, partitions);
}

int64_t TensorType::bytesPerPartition(int64_t partitions) const {
  if (space == MemSpace::HBM)
    return numElements() * dtypeBytes(dtype);
  int64_t free = 1;
  for (size_t i = 1; i < dims.size(); ++i)
    free *= dims[i].size;
  return partitionFolds(partitions) * free * dtypeBytes(dtype);
}

void TensorType::print(llvm::raw_ostream &os) const {
  os << memSpaceName(space) << '<' << dtypeName(dtype) << ", [";
  for (size_t i = 0; i < dims.size(); ++i)
    os << (i ? ", " : "") << dims[i].label << ':' << dims[i].size;
  os << "]>";
}

std::string TensorType::str() const {
  std::string s;
  llvm::raw_string_ostream os(s);
  print(os);
  return os.str();
}

} // namespace tessel::ir

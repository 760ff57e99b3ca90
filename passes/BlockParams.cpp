#include "passes/BlockParams.h"

#include "ir/Types.h"
#include "passes/TargetGeometry.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <limits>
#include <string>

namespace tessel::passes {
namespace {

llvm::Error fail(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg.str());
}

std::string knownNames(const ir::BlockConfig &known) {
  return known.empty() ? "(none)" : known.names();
}

} // namespace

llvm::Error parseBlockSpec(llvm::StringRef spec, ir::BlockConfig &out) {
  llvm::SmallVector<llvm::StringRef, 4> items;
  spec.split(items, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef item : items) {
    auto [name, value] = item.trim().split('=');
    name = name.trim();
    value = value.trim();
    int64_t v = 0;
    if (name.empty() || value.empty() || value.getAsInteger(10, v))
      return fail("malformed --block '" + item.trim() +
                  "': expected NAME=INT, e.g. --block m=512,n=512");
    if (!out.insert(name, v))
      return fail("--block gives '" + name + "' twice");
  }
  return llvm::Error::success();
}

llvm::Error validateBlockConfig(const ir::BlockConfig &given, const ir::BlockConfig &known,
                                int64_t rows, const runtime::Target &target) {
  const int64_t tile = geometryFor(target).partitions;
  for (const auto &[name, value] : given) {
    if (!known.has(name))
      return fail("unknown block parameter '" + name + "'; this kernel's block parameters are: " +
                  knownNames(known));
    if (value <= 0 || value % tile != 0)
      return fail(llvm::formatv("--block {0}={1}: a block must be a positive multiple of the "
                                "{2}-{3} tile",
                                name, value, tile, ir::blockTileNoun(name)));
    if (name == "m" && rows > 0) {
      int64_t maxRows = llvm::alignTo(rows, tile);
      if (value > maxRows)
        return fail(llvm::formatv("--block m={0}: the row strip is larger than the kernel's {1} "
                                  "rows (at most m={2})",
                                  value, rows, maxRows));
    }
    if (ir::BlockConfig::isColumnBlock(name)) {
      int64_t accBytes = ir::dtypeBytes(ir::DType::F32);
      if (value > target.psum_bank_bytes / accBytes) // (value * accBytes may overflow)
        return fail(llvm::formatv("--block {5}={0}: an output block of {0} fp32 accumulators needs "
                                  "{1} bytes per partition, over one {2}-byte PSUM bank of "
                                  "target '{3}' (at most {5}={4})",
                                  value,
                                  value <= std::numeric_limits<int64_t>::max() / accBytes
                                      ? std::to_string(value * accBytes)
                                      : "over " + std::to_string(std::numeric_limits<int64_t>::max()),
                                  target.psum_bank_bytes, target.name, target.psum_bank_bytes / accBytes, name));
    }
  }
  return llvm::Error::success();
}

} // namespace tessel::passes

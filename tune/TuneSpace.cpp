#include "tune/TuneSpace.h"

#include "compiler/Compile.h"
#include "ir/Types.h"
#include "passes/Policy.h"
#include "passes/TargetGeometry.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

namespace tessel::tune {
using namespace compiler;
namespace {

llvm::Error fail(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg.str());
}

/// Rows (and contraction) of one tensor-engine tile: the target's partitions.
int64_t tileOf(const runtime::Target &target) { return passes::geometryFor(target).partitions; }

/// Columns of the result: those of the expression under any transposes of
/// the returned value (what TileGen's block `n` tiles).
int64_t resultCols(const ast::Kernel &kernel) {
  const ast::Expr *e = kernel.returnStmt().value.get();
  while (e->kind == ast::ExprKind::Transpose)
    e = e->lhs.get();
  return e->type.cols;
}

/// The default values of one parameter: tile, 2 tiles, 4 tiles, ... up to
/// `limit`, plus `limit` itself when it is not such a power of two (one block
/// covering the whole dimension).
std::vector<int64_t> defaultValues(int64_t limit, int64_t tile) {
  std::vector<int64_t> values;
  for (int64_t v = tile; v <= limit; v *= 2)
    values.push_back(v);
  if (values.empty() || values.back() != limit)
    values.push_back(limit);
  return values;
}

/// The error for --space k=`k` over a contraction K of `contraction` elements.
llvm::Error kOverContraction(int64_t k, int64_t contraction, int64_t tile) {
  std::string value =
      llvm::formatv("--space k={0}: impossible value, the contraction K has {1} elements", k, contraction);
  if (contraction < tile)
    return fail(value + llvm::formatv(", fewer than one {0}-row tile, so it cannot be K-blocked "
                                      "(leave k out of --space)",
                                      tile));
  return fail(value + llvm::formatv(" (at most k={0})", llvm::alignDown(contraction, tile)));
}

} // namespace

std::string formatBlock(const BlockConfig &config) {
  std::string s;
  for (const auto &[name, value] : config)
    s += (s.empty() ? "" : ",") + name + "=" + std::to_string(value);
  return s;
}

SpaceBounds spaceBoundsOf(const ast::Kernel &kernel, const BlockConfig &params) {
  SpaceBounds bounds;
  for (const auto &kv : params)
    bounds.names.push_back(kv.first);
  bounds.rows = resultRows(kernel);
  bounds.cols = resultCols(kernel);
  return bounds;
}

int64_t maxBlockValue(llvm::StringRef name, const SpaceBounds &bounds,
                      const runtime::Target &target) {
  const int64_t tile = tileOf(target);
  if (name == "m")
    return llvm::alignTo(bounds.rows, tile);
  // TileGen builds a k over the contraction as k = K, the whole of it.
  if (name == BlockConfig::kContraction)
    return bounds.contraction;
  // An output block of fp32 accumulators fills at most one PSUM bank.
  int64_t bank = llvm::alignDown(target.psum_bank_bytes / ir::dtypeBytes(ir::DType::F32), tile);
  if (name == "n")
    return std::min<int64_t>(llvm::alignTo(bounds.cols, tile), bank);
  if (auto it = bounds.projectionColumns.find(name.str()); it != bounds.projectionColumns.end())
    return std::min<int64_t>(llvm::alignTo(it->second, tile), bank);
  return 0;
}

llvm::Error parseSpaceSpec(llvm::StringRef spec, SpaceRestriction &out) {
  auto [name, list] = spec.split('=');
  name = name.trim();
  if (name.empty() || !spec.contains('='))
    return fail("malformed --space '" + spec + "': expected NAME=INT,INT,..., e.g. --space m=256,512");
  if (out.count(name.str()))
    return fail("--space gives '" + name + "' twice");
  llvm::SmallVector<llvm::StringRef, 8> items;
  list.split(items, ',', -1, /*KeepEmpty=*/true);
  if (list.trim().empty())
    items.clear(); // `--space m=`: no values (the empty space below)
  std::vector<int64_t> &values = out[name.str()];
  for (llvm::StringRef item : items) {
    if (item.trim().empty())
      return fail("--space " + spec + ": an empty value (two commas, or one at an end)");
    int64_t v = 0;
    if (item.trim().getAsInteger(10, v))
      return fail("--space " + spec + ": '" + item.trim() + "' is not an integer");
    if (std::find(values.begin(), values.end(), v) == values.end())
      values.push_back(v);
  }
  if (values.empty())
    return fail("--space " + spec + ": empty search space (no values for '" + name + "')");
  std::sort(values.begin(), values.end());
  return llvm::Error::success();
}

llvm::Error validateSpace(const SpaceRestriction &restriction, const SpaceBounds &bounds,
                          const runtime::Target &target) {
  for (const auto &[name, values] : restriction) {
    if (std::find(bounds.names.begin(), bounds.names.end(), name) == bounds.names.end()) {
      std::string known;
      for (const std::string &n : bounds.names)
        known += (known.empty() ? "" : ", ") + n;
      return fail("--space: unknown block parameter '" + name +
                  "'; this kernel's block parameters are: " + known);
    }
    int64_t limit = maxBlockValue(name, bounds, target);
    const int64_t tile = tileOf(target);
    for (int64_t v : values) {
      if (v <= 0 || v % tile != 0)
        return fail(llvm::formatv("--space {0}={1}: a block must be a positive multiple of the "
                                  "{2}-{3} tile",
                                  name, v, tile, ir::blockTileNoun(name)));
      if (name == BlockConfig::kContraction && limit > 0 && v > limit)
        return kOverContraction(v, limit, tile);
      if (limit > 0 && v > limit) {
        auto projection = bounds.projectionColumns.find(name);
        int64_t cols = projection != bounds.projectionColumns.end() ? projection->second : bounds.cols;
        std::string what = projection != bounds.projectionColumns.end()
                               ? "dimension " + BlockConfig::columnBlockLabel(name)
                               : std::string("the result");
        std::string why =
            name == "m" ? llvm::formatv("the kernel has {0} rows", bounds.rows).str()
                        : llvm::formatv("{3} has {0} columns and an fp32 output block "
                                        "fills at most one {1}-byte PSUM bank of target '{2}'",
                                        cols, target.psum_bank_bytes, target.name, what)
                              .str();
        return fail(llvm::formatv("--space {0}={1}: impossible value, {2} (at most {0}={3})", name,
                                  v, why, limit));
      }
    }
  }
  return llvm::Error::success();
}

std::vector<BlockConfig> enumerateSpace(const SpaceBounds &bounds,
                                        const SpaceRestriction &restriction,
                                        const runtime::Target &target) {
  std::vector<std::pair<std::string, std::vector<int64_t>>> axes;
  for (const std::string &name : bounds.names) {
    auto it = restriction.find(name);
    if (it != restriction.end()) {
      axes.push_back({name, it->second});
      continue;
    }
    // The contraction block is searched only when asked for (--space k=...):
    // by default TileGen K-blocks exactly the contractions whose strip
    // cannot be held whole, and holding it whole is never slower.
    if (name == ir::BlockConfig::kContraction)
      continue;
    // A projection's own column block likewise: unset, it is `n`, which the
    // space searches; naming it (--space n_r2=...) searches it apart.
    if (bounds.projectionColumns.count(name))
      continue;
    int64_t limit = maxBlockValue(name, bounds, target);
    std::vector<int64_t> values =
        defaultValues(limit > 0 ? std::min(limit, passes::policy::kMaxDefaultTuneBlock)
                                : passes::policy::kMaxDefaultTuneBlock,
                      tileOf(target));
    // Past the default maximum the block planner's next candidate after
    // doubling is one strip over all the rows, rounded up to whole tiles,
    // when doubling would pass them (M = 4097: m = 4224, not 8192); the space
    // holds it too, or --tuned could lose to plain -O2.
    if (name == ir::BlockConfig::kRowStrip && limit > values.back() && limit < 2 * values.back())
      values.push_back(limit);
    axes.push_back({name, std::move(values)});
  }
  std::vector<BlockConfig> space{BlockConfig{}};
  for (const auto &[name, values] : axes) {
    std::vector<BlockConfig> next;
    for (const BlockConfig &partial : space)
      for (int64_t v : values) {
        BlockConfig c = partial;
        c.set(name, v);
        next.push_back(std::move(c));
      }
    space = std::move(next);
  }
  return space;
}

llvm::Expected<Shard> parseShard(llvm::StringRef spec) {
  auto [i, n] = spec.split('/');
  Shard shard;
  if (!spec.contains('/') || i.trim().getAsInteger(10, shard.index) ||
      n.trim().getAsInteger(10, shard.count))
    return fail("malformed --shard '" + spec + "': expected I/N (0-based shard I of N), e.g. 0/4");
  if (shard.count == 0)
    return fail("--shard " + spec + ": the shard count must be at least 1");
  if (shard.index >= shard.count)
    return fail(llvm::formatv("--shard {0}: shard index {1} is not below the shard count {2} "
                              "(shards are numbered 0 to {3})",
                              spec, shard.index, shard.count, shard.count - 1));
  return shard;
}

std::vector<BlockConfig> selectShard(const std::vector<BlockConfig> &space, Shard shard) {
  std::vector<BlockConfig> out;
  for (size_t i = shard.index; i < space.size(); i += shard.count)
    out.push_back(space[i]);
  return out;
}

} // namespace tessel::tune

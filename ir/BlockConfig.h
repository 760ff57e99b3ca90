//===- ir/BlockConfig.h - A kernel's block (tiling) parameters ---*- C++ -*-===//
//
// One value carries the block parameters from where they are decided
// (--block, --tuned, the block planner, a tuner configuration) through
// TileGen to the kernel's `block = {m = 512, n = 512}` attribute. Every chain
// TileGen builds has the row strip `m` (the paper's bs: rows of the result one
// loop iteration produces) and the output column block `n`; passes may add
// parameters named after the dimension they tile, which is why the names are
// open rather than fields.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_IR_BLOCKCONFIG_H
#define TESSEL_IR_BLOCKCONFIG_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace tessel::ir {

class BlockConfig {
public:
  /// The row strip: rows of the result one strip iteration produces.
  static constexpr llvm::StringLiteral kRowStrip = "m";
  /// The output column block: result columns one accumulation group covers.
  static constexpr llvm::StringLiteral kColumnBlock = "n";
  /// The contraction block: elements of the dimension labelled K (the first
  /// matmul's contraction) one strip holds; partial sums of the blocks
  /// accumulate in SBUF. Present on kernels that K-block.
  static constexpr llvm::StringLiteral kContraction = "k";

  /// The contraction block of a matmul whose contraction spans dimension
  /// `label`: named after it (`k` for K, `r` for R), except where that name
  /// is the row strip's or the column block's (a contraction over the
  /// dimension labelled M, as in `(X + A.T) @ (A @ W)`), which is `k_m`.
  static std::string contractionBlockName(llvm::StringRef label) {
    std::string name = label.lower();
    return name == kRowStrip || name == kColumnBlock ? "k_" + name : name;
  }

  /// A projection's column block: result columns of every matmul whose
  /// columns span dimension `label` (one that is neither the result's M or N
  /// nor the first contraction K), named after it: `n_r2` tiles R2. Unset,
  /// such a matmul takes the column block `n`. (A later contraction's K block
  /// is named after its dimension alone, e.g. `r` for R.)
  static std::string columnBlockName(llvm::StringRef label) { return "n_" + label.lower(); }
  /// The dimension label a projection's column block tiles ("R2" for n_r2).
  static std::string columnBlockLabel(llvm::StringRef name) { return name.drop_front(2).upper(); }
  /// Whether a matmul whose result columns span `label` has a column block
  /// of its own (`columnBlockName`) rather than the kernel's `n`.
  static bool hasOwnColumnBlock(llvm::StringRef label) {
    return !label.empty() && label != "M" && label != "N" && label != "K";
  }
  /// Whether `name` is an output column block (`n` or a projection's), the
  /// blocks of fp32 accumulators that one PSUM bank bounds.
  static bool isColumnBlock(llvm::StringRef name) {
    return name == kColumnBlock || name.startswith("n_");
  }

  using const_iterator = std::map<std::string, int64_t, std::less<>>::const_iterator;

  BlockConfig() = default;
  BlockConfig(std::initializer_list<std::pair<const std::string, int64_t>> values)
      : values(values) {}

  bool has(llvm::StringRef name) const { return values.count(name) != 0; }
  std::optional<int64_t> get(llvm::StringRef name) const {
    auto it = values.find(name);
    return it == values.end() ? std::nullopt : std::optional<int64_t>(it->second);
  }
  /// The value of `name`, or 0 when it is not set.
  int64_t lookup(llvm::StringRef name) const { return get(name).value_or(0); }
  void set(llvm::StringRef name, int64_t value) { values[name.str()] = value; }
  /// False (and nothing changed) when `name` is set already.
  bool insert(llvm::StringRef name, int64_t value) {
    return values.emplace(name.str(), value).second;
  }

  void erase(llvm::StringRef name) {
    if (auto it = values.find(name); it != values.end())
      values.erase(it);
  }

  /// These parameters with `overrides`' values replacing theirs.
  BlockConfig overriddenBy(const BlockConfig &overrides) const {
    BlockConfig out = *this;
    for (const auto &[name, value] : overrides)
      out.set(name, value);
    return out;
  }

  /// "m = 512, n = 512", in name order (as the IR prints them).
  std::string str() const {
    std::string out;
    for (const auto &[name, value] : values)
      out += (out.empty() ? "" : ", ") + name + " = " + std::to_string(value);
    return out;
  }
  /// "m, n".
  std::string names() const {
    std::string out;
    for (const auto &entry : values)
      out += (out.empty() ? "" : ", ") + entry.first;
    return out;
  }

  bool empty() const { return values.empty(); }
  size_t size() const { return values.size(); }
  const_iterator begin() const { return values.begin(); }
  const_iterator end() const { return values.end(); }
  bool operator==(const BlockConfig &o) const { return values == o.values; }
  bool operator!=(const BlockConfig &o) const { return values != o.values; }
  bool operator<(const BlockConfig &o) const { return values < o.values; }

private:
  std::map<std::string, int64_t, std::less<>> values;
};

/// What a block parameter's tile spans, for messages: "row" for the row
/// strip, "element contraction" for the K block, "column" for the others
/// (the column block and the projections' own).
inline llvm::StringRef blockTileNoun(llvm::StringRef name) {
  if (name == BlockConfig::kRowStrip)
    return "row";
  if (name == BlockConfig::kContraction)
    return "element contraction";
  return "column";
}

} // namespace tessel::ir

#endif

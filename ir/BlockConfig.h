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

} // namespace tessel::ir

#endif

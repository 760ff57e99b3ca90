//===- runtime/TileCache.h - Float32 copies of operand tiles -----*- C++ -*-===//
//
// Internal to the runtime. One thread's recently converted tile-product
// operands. A tile read while its object is at the same write generation (no
// instruction has written the object in between) holds the same values, so
// its float32 copy is used again: a moving tile feeds several products in a
// row. The least recently used copy makes room.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_TILECACHE_H
#define TESSEL_RUNTIME_TILECACHE_H

#include "runtime/TileView.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstdint>
#include <vector>

namespace tessel::runtime {

class TileCache {
public:
  /// The float32 values of tile `v` of an object at write generation `gen`
  /// (row-major, P x F): a copy made earlier, or one fill() writes now. Valid
  /// until the next call but one.
  const float *get(const TileView &v, uint64_t gen, llvm::function_ref<void(float *)> fill) {
    ++clock;
    for (Entry &e : entries)
      if (e.gen == gen && sameTile(e.view, v)) {
        e.lastUse = clock;
        return e.values.data();
      }
    Entry *slot = nullptr;
    if (entries.size() < MaxEntries) {
      slot = &entries.emplace_back();
    } else {
      slot = &entries[0];
      for (Entry &e : entries)
        if (e.lastUse < slot->lastUse)
          slot = &e;
    }
    slot->view = v;
    slot->gen = gen;
    slot->lastUse = clock;
    slot->values.resize(size_t(v.P * v.F));
    fill(slot->values.data());
    return slot->values.data();
  }

private:
  static constexpr size_t MaxEntries = 32; ///< at most 32 x 128 x 512 floats: 8 MiB
  struct Entry {
    TileView view;
    uint64_t gen = 0, lastUse = 0;
    std::vector<float> values;
  };
  std::vector<Entry> entries;
  uint64_t clock = 0;

  static bool sameTile(const TileView &a, const TileView &b) {
    if (a.isBuffer != b.isBuffer || a.id != b.id || a.base != b.base || a.P != b.P || a.pStride != b.pStride ||
        a.F != b.F || a.nf != b.nf)
      return false;
    for (int d = 0; d < a.nf; ++d)
      if (a.fSize[d] != b.fSize[d] || a.fStride[d] != b.fStride[d])
        return false;
    return true;
  }
};

} // namespace tessel::runtime

#endif

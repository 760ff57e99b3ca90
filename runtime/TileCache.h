//===- runtime/TileCache.h - Float32 copies of operand tiles -----*- C++ -*-===//
//
// Internal to the runtime. The numeric executor's recently converted
// tile-product operands, shared by its threads. A tile read while its object
// is at the same write generation (no instruction has written the object in
// between) holds the same values, so its float32 copy is used again: a
// moving tile feeds several products in a row, and a blocked kernel reads a
// strip of stationary tiles again for every column block -- hundreds of
// products later, often on another thread.
//
// A copy is converted once: a thread that asks for a tile another thread is
// converting waits for it. The copies live in one arena, allocated in turn
// around it like a ring, the oldest copies making room (first in, first
// out): memory is used again without new page faults, which on a virtual
// machine cost more than the conversion. A Pin keeps its copy in place while
// a product reads it; when the oldest copy is pinned, the new one gets memory
// of its own and is not kept.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_TILECACHE_H
#define TESSEL_RUNTIME_TILECACHE_H

#include "runtime/HugePages.h"
#include "runtime/TileView.h"

#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <condition_variable>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace tessel::runtime {

class TileCache {
  struct Entry;

public:
  /// An arena of `budgetBytes` (taken from the system as it is first used).
  explicit TileCache(size_t budgetBytes)
      : arenaFloats(budgetBytes / sizeof(float)), arena(new float[arenaFloats]) {
    adviseHugePages(arena.get(), arenaFloats * sizeof(float));
  }

  /// Holds one copy's values (row-major, P x F) in place while it is used.
  class Pin {
  public:
    Pin(Pin &&o) : cache(o.cache), entry(o.entry), own(std::move(o.own)) { o.cache = nullptr; }
    Pin &operator=(Pin &&) = delete;
    ~Pin() {
      if (cache)
        cache->unpin(*entry);
    }
    const float *data() const { return own ? own.get() : cache->arena.get() + entry->offset; }

  private:
    friend class TileCache;
    Pin(TileCache *c, Entry *e) : cache(c), entry(e) {}
    explicit Pin(std::unique_ptr<float[]> values) : cache(nullptr), entry(nullptr), own(std::move(values)) {}
    TileCache *cache;
    Entry *entry;
    std::unique_ptr<float[]> own; ///< a copy that is not kept
  };

  /// The float32 values of tile `v` of an object at write generation `gen`:
  /// a copy made earlier, or one fill() writes now (on the calling thread).
  Pin get(const TileView &v, uint64_t gen, llvm::function_ref<void(float *)> fill) {
    const size_t floats = size_t(v.P * v.F);
    Key key = keyOf(v, gen);
    std::unique_lock<std::mutex> lock(mu);
    if (auto it = index.find(key); it != index.end()) {
      Entry &e = *it->second;
      ++e.pins;
      filled.wait(lock, [&] { return e.ready; });
      return Pin(this, &e);
    }
    if (!makeRoom(floats)) {
      lock.unlock();
      std::unique_ptr<float[]> values(new float[floats]);
      fill(values.get());
      return Pin(std::move(values));
    }
    fifo.push_front(Entry{key, head, floats, /*pins=*/1, /*ready=*/false});
    Entry &e = fifo.front();
    index.emplace(std::move(key), fifo.begin());
    head += floats;
    lock.unlock();
    fill(arena.get() + e.offset);
    lock.lock();
    e.ready = true;
    lock.unlock();
    filled.notify_all();
    return Pin(this, &e);
  }

private:
  /// The tile's identity: object, placement, shape and generation.
  struct Key {
    std::vector<int64_t> fields;
    bool operator==(const Key &o) const { return fields == o.fields; }
  };
  struct KeyHash {
    size_t operator()(const Key &k) const { return llvm::hash_combine_range(k.fields.begin(), k.fields.end()); }
  };
  struct Entry {
    Key key;
    size_t offset = 0, floats = 0; ///< in the arena
    unsigned pins = 0;
    bool ready = false;
  };

  static Key keyOf(const TileView &v, uint64_t gen) {
    Key k;
    k.fields = {int64_t(v.isBuffer), int64_t(v.id), v.base, v.P, v.pStride, v.F, v.nf, int64_t(gen)};
    for (int d = 0; d < v.nf; ++d) {
      k.fields.push_back(v.fSize[d]);
      k.fields.push_back(v.fStride[d]);
    }
    return k;
  }

  void unpin(Entry &e) {
    std::lock_guard<std::mutex> lock(mu);
    --e.pins;
  }

  /// Frees `floats` of the arena at the head, or at its start when the rest
  /// is too short, by dropping the oldest copies: those past the head (left
  /// from the lap before; all of them when wrapping), in address order. False
  /// if a pinned copy is in the way.
  bool makeRoom(size_t floats) {
    if (floats > arenaFloats)
      return false;
    const bool wrap = head + floats > arenaFloats;
    const size_t start = wrap ? 0 : head;
    while (!fifo.empty()) {
      Entry &old = fifo.back();
      bool inTheWay = (wrap && old.offset >= head) || (old.offset < start + floats && old.offset + old.floats > start);
      if (!inTheWay)
        break;
      if (old.pins)
        return false;
      index.erase(old.key);
      fifo.pop_back();
    }
    head = start;
    return true;
  }

  const size_t arenaFloats;
  std::unique_ptr<float[]> arena;
  size_t head = 0; ///< where the next copy goes
  std::mutex mu;
  std::condition_variable filled;
  std::list<Entry> fifo; ///< newest first: the lap before past the head, then this lap from the start
  std::unordered_map<Key, std::list<Entry>::iterator, KeyHash> index;
};

} // namespace tessel::runtime

#endif

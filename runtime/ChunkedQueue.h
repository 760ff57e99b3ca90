//===- runtime/ChunkedQueue.h - A FIFO in large recycled chunks -*- C++ -*-===//
//
// Internal to the runtime. A queue indexed from its front, stored in chunks
// of ChunkSize elements; chunks emptied at the front are kept and refilled
// at the back. The fast-forward log grows to hundreds of thousands of
// records per watched loop and is trimmed from the front as the loop runs: a
// std::deque allocated and freed a 512-byte block every few records, and a
// vector faulted in fresh pages as it doubled.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_CHUNKEDQUEUE_H
#define TESSEL_RUNTIME_CHUNKEDQUEUE_H

#include <cstddef>
#include <deque>
#include <memory>
#include <new>
#include <type_traits>
#include <vector>

namespace tessel::runtime {

template <class T, size_t ChunkSize = 1024> class ChunkedQueue {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>,
                "chunks are raw storage: elements are copied in and never destroyed");

public:
  size_t size() const { return end - begin; }
  const T &operator[](size_t i) const {
    size_t at = begin + i;
    return chunks[at / ChunkSize][at % ChunkSize].value;
  }
  void push_back(const T &x) {
    if (end == chunks.size() * ChunkSize)
      chunks.push_back(newChunk());
    new (&chunks[end / ChunkSize][end % ChunkSize].value) T(x);
    ++end;
  }
  /// Drops the first `n` elements.
  void popFront(size_t n) {
    begin += n;
    while (begin >= ChunkSize) {
      spare.push_back(std::move(chunks.front()));
      chunks.pop_front();
      begin -= ChunkSize;
      end -= ChunkSize;
    }
  }
  void clear() { popFront(size()); }

private:
  /// Storage for one element, left uninitialised (a chunk is not cleared
  /// when it is made: a new element is constructed in place).
  union Slot {
    T value;
    Slot() {}
  };
  std::deque<std::unique_ptr<Slot[]>> chunks;
  std::vector<std::unique_ptr<Slot[]>> spare;
  size_t begin = 0, end = 0; ///< positions in chunks

  std::unique_ptr<Slot[]> newChunk() {
    if (spare.empty())
      return std::unique_ptr<Slot[]>(new Slot[ChunkSize]);
    std::unique_ptr<Slot[]> c = std::move(spare.back());
    spare.pop_back();
    return c;
  }
};

} // namespace tessel::runtime

#endif

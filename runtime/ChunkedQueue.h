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
#include <vector>

namespace tessel::runtime {

template <class T, size_t ChunkSize = 1024> class ChunkedQueue {
public:
  size_t size() const { return end - begin; }
  const T &operator[](size_t i) const {
    size_t at = begin + i;
    return chunks[at / ChunkSize][at % ChunkSize];
  }
  void push_back(const T &x) {
    if (end == chunks.size() * ChunkSize)
      chunks.push_back(newChunk());
    chunks[end / ChunkSize][end % ChunkSize] = x;
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
  std::deque<std::unique_ptr<T[]>> chunks;
  std::vector<std::unique_ptr<T[]>> spare;
  size_t begin = 0, end = 0; ///< positions in chunks

  std::unique_ptr<T[]> newChunk() {
    if (spare.empty())
      return std::make_unique<T[]>(ChunkSize);
    std::unique_ptr<T[]> c = std::move(spare.back());
    spare.pop_back();
    return c;
  }
};

} // namespace tessel::runtime

#endif

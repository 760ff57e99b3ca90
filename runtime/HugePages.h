//===- runtime/HugePages.h - Large storage without 4 KiB page faults -*- C++ -*-===//
//
// Internal to the runtime. A functional run touches every element of its
// tensors and buffers once; on a virtual machine a 4 KiB page fault costs
// tens of microseconds (about a second for 128 MiB), so large storage is
// advised to the kernel as transparent huge pages (2 MiB), which most
// systems grant on request (`madvise` mode). The advice is only a hint:
// where it is refused, nothing changes but the speed.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_HUGEPAGES_H
#define TESSEL_RUNTIME_HUGEPAGES_H

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <new>
#include <utility>
#include <vector>

namespace tessel::runtime {

/// Advises the whole pages within [p, p + bytes) as huge-page candidates.
inline void adviseHugePages(void *p, size_t bytes) {
#ifdef MADV_HUGEPAGE
  constexpr uintptr_t Page = 4096;
  uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + Page - 1) & ~(Page - 1);
  uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes) & ~(Page - 1);
  if (end > begin)
    madvise(reinterpret_cast<void *>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

/// v = n zeros, in advised memory (touched for the first time here).
template <class T> void assignZeros(std::vector<T> &v, size_t n) {
  std::vector<T> fresh;
  fresh.reserve(n);
  adviseHugePages(fresh.data(), n * sizeof(T));
  fresh.resize(n);
  v = std::move(fresh);
}

/// `n` zeroed elements of T the executor keeps to itself, in advised fresh
/// pages from the system: zero without a memset, and each page is first
/// touched (and cleared by the kernel) by whichever thread first writes it,
/// not all at once by the thread that allocates.
template <class T> class ZeroPages {
public:
  ZeroPages() = default;
  explicit ZeroPages(size_t n) : bytes(n * sizeof(T)) {
    if (!bytes)
      return;
    void *m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
      bytes = 0;
      throw std::bad_alloc();
    }
    adviseHugePages(m, bytes);
    p = static_cast<T *>(m);
  }
  ZeroPages(ZeroPages &&o) noexcept : p(std::exchange(o.p, nullptr)), bytes(std::exchange(o.bytes, 0)) {}
  ZeroPages &operator=(ZeroPages &&o) noexcept {
    std::swap(p, o.p);
    std::swap(bytes, o.bytes);
    return *this;
  }
  ~ZeroPages() {
    if (p)
      munmap(p, bytes);
  }
  T *data() const { return p; }
  size_t size() const { return bytes / sizeof(T); }

private:
  T *p = nullptr;
  size_t bytes = 0;
};

} // namespace tessel::runtime

#endif

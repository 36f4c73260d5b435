// kbq's allocation policy, the one place it is chosen. The kbq program
// (not the kbquery library, the tests, kbc or the generator) replaces the
// global operator new and delete with a bump arena: kbq answers one
// question and exits (main ends with _Exit and frees nothing), so the C++
// allocations of an answer need no malloc bookkeeping and delete can do
// nothing. Nothing calls into this file: linking it is the choice, and
// CMakeLists.txt links it into the kbq executable alone, and only outside
// sanitizer and fuzzing builds (their runtimes replace operator new, and
// ASan should see every allocation).
//
// The arena is one region of limits::kArenaBytes, reserved (not committed)
// up front and faulted in as used, with transparent huge pages requested
// (one fault per 2 MB). Blocks larger than limits::kArenaMaxAlloc, and
// every block once the region is used up, come from malloc and are freed
// by delete, so a large or crafted KB costs what it holds, never an arena
// that only grows (docs/security.md). An answer allocates a few MB at
// most; SQLite keeps its own allocator, capped by sqlite3_hard_heap_limit64.
// What it buys, measured with and without it: docs/performance.md ("A bump
// arena for kbq's C++ allocations").
#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <new>

#include "base/limits.hpp"

namespace kbq::arena {

namespace {

char* arena_begin = nullptr;
char* arena_next = nullptr;
char* arena_end = nullptr;
bool arena_reserved = false;

void reserve() {
  arena_reserved = true;
  void* p = ::mmap(nullptr, kb::limits::kArenaBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return;  // no arena: every block from malloc
  // Transparent huge pages where the kernel offers them on request: an
  // answer fills a few MB of the arena, one fault per 2 MB instead of one
  // per 4 KB page (docs/performance.md). Advice only: ignored elsewhere.
  ::madvise(p, kb::limits::kArenaBytes, MADV_HUGEPAGE);
  arena_begin = arena_next = static_cast<char*>(p);
  arena_end = arena_begin + kb::limits::kArenaBytes;
}

bool in_arena(const void* p) { return p >= static_cast<const void*>(arena_begin) && p < static_cast<const void*>(arena_end); }

void* allocate(std::size_t size, std::size_t align) {
  if (size == 0) size = 1;
  if (size <= kb::limits::kArenaMaxAlloc) {
    if (!arena_reserved) reserve();
    const auto at = (reinterpret_cast<std::uintptr_t>(arena_next) + align - 1) / align * align;
    if (arena_begin && at + size <= reinterpret_cast<std::uintptr_t>(arena_end)) {
      arena_next = reinterpret_cast<char*>(at + size);
      return reinterpret_cast<void*>(at);
    }
  }
  void* p = align <= alignof(std::max_align_t) ? std::malloc(size) : std::aligned_alloc(align, (size + align - 1) / align * align);
  if (!p) throw std::bad_alloc();
  return p;
}

void release(void* p) noexcept {
  if (p && !in_arena(p)) std::free(p);
}

}  // namespace
}  // namespace kbq::arena

void* operator new(std::size_t size) { return kbq::arena::allocate(size, alignof(std::max_align_t)); }
void* operator new[](std::size_t size) { return kbq::arena::allocate(size, alignof(std::max_align_t)); }
void* operator new(std::size_t size, std::align_val_t a) { return kbq::arena::allocate(size, static_cast<std::size_t>(a)); }
void* operator new[](std::size_t size, std::align_val_t a) { return kbq::arena::allocate(size, static_cast<std::size_t>(a)); }
void operator delete(void* p) noexcept { kbq::arena::release(p); }
void operator delete[](void* p) noexcept { kbq::arena::release(p); }
void operator delete(void* p, std::size_t) noexcept { kbq::arena::release(p); }
void operator delete[](void* p, std::size_t) noexcept { kbq::arena::release(p); }
void operator delete(void* p, std::align_val_t) noexcept { kbq::arena::release(p); }
void operator delete[](void* p, std::align_val_t) noexcept { kbq::arena::release(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { kbq::arena::release(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { kbq::arena::release(p); }

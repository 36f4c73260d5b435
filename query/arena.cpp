// kbq's allocation policy, the one place it is chosen. The kbq program
// (not the kbquery library, the tests, kbc or the generator) replaces the
// global operator new and delete with an arena: one region of
// limits::kArenaBytes, reserved (not committed) up front and faulted in as
// used, with transparent huge pages requested (one fault per 2 MB). A new
// block is the last one of its size class that was deleted, else the next
// bytes of the region (a pointer bump). The classes are multiples of
// kSmallStep up to kSmallMax and powers of two above it, so a sized delete
// (what std::allocator and every delete of a complete type call, g++'s
// -fsized-deallocation) knows the class without a header and puts the
// block on its class's list. An unsized delete, rare, leaves its block
// where it is: kbq answers and exits (main ends with _Exit and frees
// nothing), and a --batch of thousands of answers reuses what each answer
// gave back instead of running out of the region. Blocks larger than
// limits::kArenaMaxAlloc, and every block once the region is used up, come
// from malloc and are freed by delete, so a large or crafted KB costs what
// it holds, never an arena that only grows (docs/security.md). SQLite's
// allocations come from the same arena (SQLITE_CONFIG_MALLOC, set before
// main): each block carries its size in a 16-byte header, which SQLite's
// own accounting reads (xSize), so sqlite3_hard_heap_limit64 still caps
// them. Nothing calls into this file: linking it is the choice, and CMakeLists.txt links
// it into the kbq executable alone, and only outside sanitizer and fuzzing
// builds (their runtimes replace operator new, and ASan should see every
// allocation). What it buys, measured with and without it:
// docs/performance.md ("A bump arena for kbq's C++ allocations", "Blocks
// given back").
#include <sys/mman.h>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#include <sqlite3.h>

#include "base/limits.hpp"

namespace kbq::arena {

namespace {

// The arena's first bytes, which most answers fill (the 237 of
// tests/questions.tsv: 2.0 to 4.3 MB, median 3.2 MB): in huge pages.
constexpr std::size_t kHugeBytes = std::size_t{4} << 20;
static_assert(kHugeBytes <= kb::limits::kArenaBytes && kHugeBytes % (std::size_t{2} << 20) == 0);

char* arena_begin = nullptr;
char* arena_next = nullptr;
char* arena_end = nullptr;
bool arena_reserved = false;

void reserve() {
  arena_reserved = true;
  void* p = ::mmap(nullptr, kb::limits::kArenaBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return;  // no arena: every block from malloc
  // Transparent huge pages where the kernel offers them on request, for
  // the first kHugeBytes: an answer fills a few MB of the arena, one fault
  // per 2 MB instead of one per 4 KB page (docs/performance.md). Past them
  // (a large answer, --batch), 4 KB pages: an answer 100 KB past a 2 MB
  // boundary costs 100 KB of memory, not another 2 MB. Advice only:
  // ignored where the kernel has no huge pages.
  ::madvise(p, kHugeBytes, MADV_HUGEPAGE);
  ::madvise(static_cast<char*>(p) + kHugeBytes, kb::limits::kArenaBytes - kHugeBytes, MADV_NOHUGEPAGE);
  arena_begin = arena_next = static_cast<char*>(p);
  arena_end = arena_begin + kb::limits::kArenaBytes;
}

bool in_arena(const void* p) { return p >= static_cast<const void*>(arena_begin) && p < static_cast<const void*>(arena_end); }

// The size classes: multiples of kSmallStep up to kSmallMax, then powers
// of two up to kArenaMaxAlloc.
constexpr std::size_t kSmallStep = 16;  // alignof(std::max_align_t): every class keeps it
constexpr std::size_t kSmallMax = 1024;
constexpr std::size_t kSmallClasses = kSmallMax / kSmallStep;  // classes 1 .. kSmallClasses
constexpr std::size_t kClasses = kSmallClasses + 1 + 64;
static_assert(kSmallStep % alignof(std::max_align_t) == 0);
static_assert(kb::limits::kArenaMaxAlloc >= kSmallMax);

// A block given back: its first bytes link it to the next of its class.
struct FreeBlock {
  FreeBlock* next;
};
FreeBlock* free_blocks[kClasses] = {};

struct SizeClass {
  std::size_t index, bytes;
};
SizeClass class_of(std::size_t size) {
  if (size <= kSmallMax) {
    const std::size_t n = (size + kSmallStep - 1) / kSmallStep;
    return {n, n * kSmallStep};
  }
  const auto shift = static_cast<std::size_t>(std::bit_width(size - 1));  // 2^shift >= size
  return {kSmallClasses + 1 + shift, std::size_t{1} << shift};
}

// `align` is a power of two (as every C++ alignment): rounded up with a
// mask, not a division (a bump is most of an allocation's instructions).
inline void* bump(std::size_t size, std::size_t align) {
  if (!arena_reserved) [[unlikely]]
    reserve();
  const auto at = (reinterpret_cast<std::uintptr_t>(arena_next) + align - 1) & ~static_cast<std::uintptr_t>(align - 1);
  if (!arena_begin || at + size > reinterpret_cast<std::uintptr_t>(arena_end)) return nullptr;
  arena_next = reinterpret_cast<char*>(at + size);
  return reinterpret_cast<void*>(at);
}

void* from_malloc(std::size_t size, std::size_t align) {
  void* p = align <= alignof(std::max_align_t) ? std::malloc(size) : std::aligned_alloc(align, (size + align - 1) / align * align);
  if (!p) throw std::bad_alloc();
  return p;
}

// A block of `size` bytes: the last one of its class given back, else
// bumped, else (past the region, or past kArenaMaxAlloc) malloc's, which
// may be nullptr.
void* take(std::size_t size) noexcept {
  if (size == 0) size = 1;
  if (size > kb::limits::kArenaMaxAlloc) return std::malloc(size);
  const SizeClass c = class_of(size);
  if (FreeBlock* b = free_blocks[c.index]) {
    free_blocks[c.index] = b->next;
    return b;
  }
  if (void* p = bump(c.bytes, kSmallStep)) return p;
  return std::malloc(size);
}

void* allocate(std::size_t size) {
  void* p = take(size);
  if (!p) throw std::bad_alloc();
  return p;
}

// Over-aligned blocks: bumped, never reused (none of kbq's types asks for
// more than max_align_t; this keeps operator new complete).
void* allocate_aligned(std::size_t size, std::size_t align) {
  if (size == 0) size = 1;
  if (size <= kb::limits::kArenaMaxAlloc)
    if (void* p = bump(size, align)) return p;
  return from_malloc(size, align);
}

void release(void* p) noexcept {
  if (p && !in_arena(p)) std::free(p);
}

void release_sized(void* p, std::size_t size) noexcept {
  if (!p) return;
  if (!in_arena(p)) {
    std::free(p);
    return;
  }
  const SizeClass c = class_of(size == 0 ? 1 : size);
  auto* b = static_cast<FreeBlock*>(p);
  b->next = free_blocks[c.index];
  free_blocks[c.index] = b;
}

// SQLite's allocator: the arena's blocks, each after a header that holds
// its size (SQLite asks it back, xSize, for its accounting and its heap
// limit). The header keeps the alignment of max_align_t.
constexpr std::size_t kHeader = 16;
static_assert(kHeader >= sizeof(std::size_t) && kHeader % alignof(std::max_align_t) == 0);

std::size_t sqlite_bytes(void* p) {
  std::size_t bytes = 0;
  std::memcpy(&bytes, static_cast<char*>(p) - kHeader, sizeof bytes);
  return bytes;
}

void* sqlite_malloc(int n) {
  if (n <= 0) return nullptr;
  auto* b = static_cast<char*>(take(static_cast<std::size_t>(n) + kHeader));
  if (!b) return nullptr;
  const auto bytes = static_cast<std::size_t>(n);
  std::memcpy(b, &bytes, sizeof bytes);
  return b + kHeader;
}

void sqlite_free(void* p) {
  if (p) release_sized(static_cast<char*>(p) - kHeader, sqlite_bytes(p) + kHeader);
}

int sqlite_size(void* p) { return p ? static_cast<int>(sqlite_bytes(p)) : 0; }

void* sqlite_realloc(void* p, int n) {
  if (!p) return sqlite_malloc(n);
  if (n <= 0) {
    sqlite_free(p);
    return nullptr;
  }
  const int had = sqlite_size(p);
  if (n <= had) return p;
  void* q = sqlite_malloc(n);
  if (!q) return nullptr;
  std::memcpy(q, p, static_cast<std::size_t>(had));
  sqlite_free(p);
  return q;
}

int sqlite_roundup(int n) { return (n + 7) & ~7; }
int sqlite_init(void*) { return SQLITE_OK; }
void sqlite_shutdown(void*) {}

// Set before main, so before SQLite initializes: SQLite's mallocs and
// frees cost a few instructions each instead of libc's (docs/performance.md).
const bool sqlite_uses_arena = [] {
  static const sqlite3_mem_methods methods{sqlite_malloc,  sqlite_free, sqlite_realloc,  sqlite_size,
                                           sqlite_roundup, sqlite_init, sqlite_shutdown, nullptr};
  return sqlite3_config(SQLITE_CONFIG_MALLOC, &methods) == SQLITE_OK;
}();

}  // namespace
}  // namespace kbq::arena

void* operator new(std::size_t size) { return kbq::arena::allocate(size); }
void* operator new[](std::size_t size) { return kbq::arena::allocate(size); }
void* operator new(std::size_t size, std::align_val_t a) { return kbq::arena::allocate_aligned(size, static_cast<std::size_t>(a)); }
void* operator new[](std::size_t size, std::align_val_t a) { return kbq::arena::allocate_aligned(size, static_cast<std::size_t>(a)); }
void operator delete(void* p) noexcept { kbq::arena::release(p); }
void operator delete[](void* p) noexcept { kbq::arena::release(p); }
void operator delete(void* p, std::size_t size) noexcept { kbq::arena::release_sized(p, size); }
// An array's sized delete is given the size asked of new[], cookie included.
void operator delete[](void* p, std::size_t size) noexcept { kbq::arena::release_sized(p, size); }
void operator delete(void* p, std::align_val_t) noexcept { kbq::arena::release(p); }
void operator delete[](void* p, std::align_val_t) noexcept { kbq::arena::release(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { kbq::arena::release(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { kbq::arena::release(p); }

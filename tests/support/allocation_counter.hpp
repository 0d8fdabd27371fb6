// Every heap allocation in the process, counted: replaces the global operator new and delete.
// Include it in exactly one file of an executable (tests/select_allocation_test.cpp,
// bench/selection_bench.cpp).
#pragma once

#include <atomic>
#include <cstdlib>
#include <new>

namespace attnsel::testing {

inline std::atomic<std::size_t> g_allocations{0};

inline std::size_t allocations() { return g_allocations.load(std::memory_order_relaxed); }

inline void* counted_alloc(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n != 0 ? n : 1)) return p;
  throw std::bad_alloc();
}

}  // namespace attnsel::testing

void* operator new(std::size_t n) { return attnsel::testing::counted_alloc(n); }
void* operator new[](std::size_t n) { return attnsel::testing::counted_alloc(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

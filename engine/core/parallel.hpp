#pragma once
/// Minimal multithreading for the CPU backend (OpenMP when available, serial otherwise).

#include <cstdint>

namespace edn {

/// Below this many iterations parallel_for runs serially: a fork/join costs more than it saves
/// (and much more when the machine is oversubscribed and OpenMP threads spin).
inline constexpr std::int64_t kParallelThreshold = 2048;

/// Item counts for heavy items (a bin of 32 rows, an element kernel): parallel from a few items.
inline constexpr std::int64_t kHeavyItems = 4;

/// Calls body(i) for i in [begin, end) on all cores; body must be thread-safe. Runs serially
/// when there are fewer than `min_items` items (use kHeavyItems when one item is much work).
template <class Body>
void parallel_for(std::int64_t begin, std::int64_t end, Body&& body,
                  std::int64_t min_items = kParallelThreshold) {
#if defined(_OPENMP)
#pragma omp parallel for schedule(static) if (end - begin >= min_items)
    for (std::int64_t i = begin; i < end; ++i) body(i);
#else
    (void)min_items;
    for (std::int64_t i = begin; i < end; ++i) body(i);
#endif
}

/// Number of worker threads parallel_for uses.
int num_threads();

} // namespace edn

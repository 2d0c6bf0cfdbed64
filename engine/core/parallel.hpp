#pragma once
/// Minimal multithreading for the CPU backend (OpenMP when available, serial otherwise).

#include <cstdint>

namespace edn {

/// Calls body(i) for i in [begin, end) on all cores; body must be thread-safe.
template <class Body> void parallel_for(std::int64_t begin, std::int64_t end, Body&& body) {
#if defined(_OPENMP)
#pragma omp parallel for schedule(static)
    for (std::int64_t i = begin; i < end; ++i) body(i);
#else
    for (std::int64_t i = begin; i < end; ++i) body(i);
#endif
}

/// Number of worker threads parallel_for uses.
int num_threads();

} // namespace edn

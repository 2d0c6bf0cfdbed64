#pragma once
/// Minimal multithreading for the CPU backend: a fork-join pool of persistent threads whose idle
/// waits spin only briefly (kSpinMicroseconds) and then sleep, so a busy machine does not make
/// them burn the cores the other threads need (OpenMP's default waits spin for milliseconds: on
/// a shared 2-core machine frame times varied 28x). The thread count is the OpenMP runtime's
/// (OMP_NUM_THREADS still sets it) when built with OpenMP, else the cores this process may use.

#include <cstdint>
#include <utility>

namespace edn {

/// Below this many iterations parallel_for runs serially: a fork/join costs more than it saves.
inline constexpr std::int64_t kParallelThreshold = 2048;

/// Item counts for heavy items (a bin of 32 rows, an element kernel): parallel from a few items.
inline constexpr std::int64_t kHeavyItems = 4;

/// How long an idle pool thread (or a caller waiting for its helpers) spins before it sleeps.
/// Long enough to bridge the serial gap between back-to-back loops, short enough to cost little
/// when another process holds the core the thread spins on.
inline constexpr int kSpinMicroseconds = 50;

namespace detail {

/// A loop body over index ranges, called as call(context, lo, hi); type-erased without
/// allocation (the context lives on the caller's stack for the duration of the loop).
struct RangeBody {
    void* context;                                   ///< the caller's body
    void (*call)(void*, std::int64_t, std::int64_t); ///< runs the body over [lo, hi)
};

/// Splits [begin, end) into one contiguous part per thread (OpenMP's static schedule) and runs
/// them on the pool, the calling thread taking the first. Serial when called from inside a
/// parallel loop or while another thread's loop holds the pool.
void run_parallel(std::int64_t begin, std::int64_t end, RangeBody body);

} // namespace detail

/// Calls body(i) for i in [begin, end) on all threads; body must be thread-safe and must not
/// throw. Runs serially when there are fewer than `min_items` items (use kHeavyItems when one
/// item is much work).
template <class Body>
void parallel_for(std::int64_t begin, std::int64_t end, Body&& body,
                  std::int64_t min_items = kParallelThreshold) {
    if (end - begin < min_items) {
        for (std::int64_t i = begin; i < end; ++i) body(i);
        return;
    }
    auto range = [&body](std::int64_t lo, std::int64_t hi) {
        for (std::int64_t i = lo; i < hi; ++i) body(i);
    };
    using Range = decltype(range);
    detail::run_parallel(begin, end, {&range, [](void* context, std::int64_t lo, std::int64_t hi) {
                                          (*static_cast<Range*>(context))(lo, hi);
                                      }});
}

/// Number of threads parallel_for uses (the calling thread included).
int num_threads();

/// Uses `threads` threads from now on (clamped to [1, the pool's size], the caller included);
/// returns the previous count. E.g. the app's simulation thread leaves a core to the UI.
int set_num_threads(int threads);

} // namespace edn

#include "core/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif
#if defined(__linux__)
#include <sched.h>
#endif

namespace edn {
namespace {

/// Threads the pool starts with (the caller included).
int initial_threads() {
#if defined(_OPENMP)
    // The OpenMP runtime's count: OMP_NUM_THREADS (read by the runtime, not by us) keeps working
    // for single-thread comparisons, and by default it is the cores this process may use.
    return std::max(1, omp_get_max_threads());
#elif defined(__linux__)
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
    return std::max(1u, std::thread::hardware_concurrency());
#else
    return std::max(1u, std::thread::hardware_concurrency());
#endif
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
}

/// Spins until `ready()` or kSpinMicroseconds pass; true when ready.
template <class Ready> bool spin_until(Ready&& ready) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::microseconds(kSpinMicroseconds);
    for (int i = 0;; ++i) {
        if (ready()) return true;
        cpu_relax();
        // The clock costs more than a pause: look at it now and then.
        if ((i & 63) == 63 && std::chrono::steady_clock::now() >= deadline) return ready();
    }
}

/// Set on pool threads and on a caller while its loop runs: nested loops run serially.
thread_local bool t_in_loop = false;

/// The fork-join pool: helpers 1..n-1 wait for a new generation, run their part, count down.
class Pool {
public:
    explicit Pool(int threads) : threads_(threads) {
        for (int t = 1; t < threads_; ++t) helpers_.emplace_back([this, t] { serve(t); });
    }
    ~Pool() {
        {
            const std::lock_guard lock(mutex_);
            stop_.store(true, std::memory_order_relaxed);
            generation_.fetch_add(1, std::memory_order_release);
        }
        wake_.notify_all();
        for (std::thread& helper : helpers_) helper.join();
    }
    Pool(const Pool&) = delete;
    Pool& operator=(const Pool&) = delete;

    int threads() const { return active_.load(std::memory_order_relaxed); }
    int set_threads(int threads) {
        return active_.exchange(std::clamp(threads, 1, threads_), std::memory_order_relaxed);
    }

    void run(std::int64_t begin, std::int64_t end, detail::RangeBody body) {
        const int parts = active_.load(std::memory_order_relaxed);
        std::unique_lock call(call_mutex_, std::try_to_lock);
        if (t_in_loop || parts == 1 || !call.owns_lock()) {
            // Nested, single-threaded, or another thread's loop has the pool: serially here.
            body.call(body.context, begin, end);
            return;
        }
        begin_ = begin;
        end_ = end;
        body_ = body;
        parts_ = parts; // helpers past it only count down
        remaining_.store(threads_ - 1, std::memory_order_relaxed);
        {
            // Under the lock: a helper about to sleep checks the generation under it too.
            const std::lock_guard lock(mutex_);
            generation_.fetch_add(1, std::memory_order_release);
        }
        wake_.notify_all();
        t_in_loop = true;
        std::exception_ptr error;
        try {
            run_part(0);
        } catch (...) {
            error = std::current_exception(); // the helpers still use body: wait for them first
        }
        t_in_loop = false;
        auto done = [this] { return remaining_.load(std::memory_order_acquire) == 0; };
        if (!spin_until(done)) {
            std::unique_lock lock(mutex_);
            finished_.wait(lock, done);
        }
        if (error) std::rethrow_exception(error);
    }

private:
    void run_part(int part) {
        if (part >= parts_) return;
        const std::int64_t count = end_ - begin_;
        const std::int64_t lo = begin_ + count * part / parts_;
        const std::int64_t hi = begin_ + count * (part + 1) / parts_;
        if (lo < hi) body_.call(body_.context, lo, hi);
    }

    void serve(int part) {
        t_in_loop = true;
        std::uint64_t seen = 0;
        while (true) {
            auto fresh = [&] { return generation_.load(std::memory_order_acquire) != seen; };
            if (!spin_until(fresh)) {
                std::unique_lock lock(mutex_);
                wake_.wait(lock, fresh);
            }
            seen = generation_.load(std::memory_order_acquire);
            if (stop_.load(std::memory_order_relaxed)) return; // ordered by the generation
            run_part(part); // a throwing body ends the program, as in an OpenMP region
            if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
                // The caller checks `remaining_` under the lock before it sleeps: no lost wake-up.
                const std::lock_guard lock(mutex_);
                finished_.notify_one();
            }
        }
    }

    const int threads_;                 // the pool's size
    std::atomic<int> active_{threads_}; // threads loops use (set_num_threads)
    std::vector<std::thread> helpers_;
    std::mutex call_mutex_; // one loop at a time
    std::mutex mutex_;      // sleeping and waking
    std::condition_variable wake_;
    std::condition_variable finished_;
    std::atomic<std::uint64_t> generation_{0};
    std::atomic<int> remaining_{0};
    std::atomic<bool> stop_{false};
    // The current loop; written before the generation is published (release), read after.
    std::int64_t begin_ = 0;
    std::int64_t end_ = 0;
    detail::RangeBody body_{nullptr, nullptr};
    int parts_ = 1;
};

Pool& pool() {
    static Pool instance(initial_threads());
    return instance;
}

} // namespace

namespace detail {

void run_parallel(std::int64_t begin, std::int64_t end, RangeBody body) {
    pool().run(begin, end, body);
}

} // namespace detail

int num_threads() {
    return pool().threads();
}

int set_num_threads(int threads) {
    return pool().set_threads(threads);
}

} // namespace edn

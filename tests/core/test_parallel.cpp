// parallel_for's pool: every index exactly once (also for ranges that do not divide evenly),
// nested loops run serially instead of deadlocking, two threads looping at once both finish
// (one of them serially), and an exception from the caller's part arrives after the helpers.

#include "core/parallel.hpp"

#include <atomic>
#include <cstdint>
#include <gtest/gtest.h>
#include <stdexcept>
#include <thread>
#include <vector>

namespace edn {
namespace {

TEST(ParallelFor, VisitsEveryIndexOnce) {
    for (const std::int64_t count : {0, 1, 7, 2048, 2049, 100003}) {
        std::vector<std::atomic<int>> visits(static_cast<std::size_t>(count));
        parallel_for(
            0, count, [&](std::int64_t i) { ++visits[static_cast<std::size_t>(i)]; }, 1);
        for (std::int64_t i = 0; i < count; ++i)
            ASSERT_EQ(visits[static_cast<std::size_t>(i)], 1) << "count " << count << " i " << i;
    }
    // An offset range.
    std::atomic<std::int64_t> sum{0};
    parallel_for(
        10, 5010, [&](std::int64_t i) { sum += i; }, 1);
    EXPECT_EQ(sum, (10 + 5009) * 5000 / 2);
}

TEST(ParallelFor, NestedLoopsRunSerially) {
    std::vector<std::atomic<int>> visits(64 * 64);
    parallel_for(
        0, 64,
        [&](std::int64_t i) {
            parallel_for(
                0, 64, [&](std::int64_t j) { ++visits[static_cast<std::size_t>(64 * i + j)]; }, 1);
        },
        1);
    for (const std::atomic<int>& v : visits) ASSERT_EQ(v, 1);
}

TEST(ParallelFor, TwoCallingThreadsBothFinish) {
    // E.g. the app's simulation thread and its scene loader: each loop completes whole.
    std::vector<std::atomic<int>> a(200000), b(200000);
    auto loop = [](std::vector<std::atomic<int>>& visits) {
        for (int round = 0; round < 20; ++round)
            parallel_for(0, static_cast<std::int64_t>(visits.size()),
                         [&](std::int64_t i) { ++visits[static_cast<std::size_t>(i)]; });
    };
    std::thread other([&] { loop(b); });
    loop(a);
    other.join();
    for (std::size_t i = 0; i < a.size(); ++i) {
        ASSERT_EQ(a[i], 20);
        ASSERT_EQ(b[i], 20);
    }
}

TEST(ParallelFor, SetNumThreadsBoundsTheThreadsALoopUses) {
    const int all = num_threads();
    EXPECT_EQ(set_num_threads(1), all);
    EXPECT_EQ(num_threads(), 1);
    const std::thread::id caller = std::this_thread::get_id();
    std::atomic<int> elsewhere{0};
    std::vector<std::atomic<int>> visits(10000);
    parallel_for(
        0, 10000,
        [&](std::int64_t i) {
            ++visits[static_cast<std::size_t>(i)];
            if (std::this_thread::get_id() != caller) ++elsewhere;
        },
        1);
    EXPECT_EQ(elsewhere, 0);
    for (const std::atomic<int>& v : visits) ASSERT_EQ(v, 1);
    // Clamped to the pool's size, and restored.
    EXPECT_EQ(set_num_threads(all + 100), 1);
    EXPECT_EQ(num_threads(), all);
    EXPECT_EQ(set_num_threads(0), all);
    EXPECT_EQ(num_threads(), 1);
    set_num_threads(all);
    EXPECT_EQ(num_threads(), all);
}

TEST(ParallelFor, CallersExceptionArrivesAfterTheHelpersFinished) {
    std::atomic<std::int64_t> done{0};
    const std::int64_t count = 64 * num_threads();
    EXPECT_THROW(parallel_for(
                     0, count,
                     [&](std::int64_t i) {
                         if (i == 0) throw std::runtime_error("first item"); // the caller's part
                         ++done;
                     },
                     1),
                 std::runtime_error);
    // The other threads' parts ran to the end before the throw reached us (the caller's part
    // stopped at its first item).
    const std::int64_t caller_part = count / num_threads();
    EXPECT_EQ(done, count - caller_part);
    EXPECT_GE(num_threads(), 1);
}

} // namespace
} // namespace edn

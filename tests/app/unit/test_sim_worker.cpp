// The app's simulation thread without a window: a slow step never holds the UI loop up, queued
// commands run in order and only between steps, what a turn reads is one completed step, pause
// and single steps, errors of a threaded step reach the UI, and the lockstep mode. Built also
// into elastodyn-tsan-tests (-fsanitize=thread), where a missing hand-over is a reported race.

#include "sim_worker.hpp"

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <gtest/gtest.h>
#include <stdexcept>
#include <thread>
#include <vector>

namespace edn {
namespace {

using namespace std::chrono_literals;

/// Runs UI frames (try_turn + `in_turn`) until `done` or `max_frames`; returns frames run.
template <class InTurn, class Done>
int ui_loop(SimWorker& worker, int max_frames, InTurn&& in_turn, Done&& done) {
    int frames = 0;
    while (frames < max_frames && !done()) {
        if (SimWorker::Turn turn = worker.try_turn()) in_turn(turn);
        ++frames;
        std::this_thread::sleep_for(1ms); // the "display"
    }
    return frames;
}

TEST(SimWorker, UiFramesGoOnWhileAStepIsInProgress) {
    // A step that does not end until the test says so: a UI that waited for it would hang here,
    // and the watchdog releases it only after 10 s, far past the frames below.
    std::atomic<bool> release{false};
    std::atomic<bool> started{false};
    SimWorker worker(SimWorker::Mode::Threaded, [&] {
        started = true;
        const auto deadline = std::chrono::steady_clock::now() + 10s;
        while (!release && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(1ms);
    });
    worker.set_paused(false);
    while (!started) std::this_thread::sleep_for(1ms);
    int granted = 0;
    const auto begin = std::chrono::steady_clock::now();
    const int frames = ui_loop(
        worker, 200, [&](SimWorker::Turn&) { ++granted; }, [] { return false; });
    const auto elapsed = std::chrono::steady_clock::now() - begin;
    release = true;
    EXPECT_EQ(frames, 200);
    EXPECT_EQ(granted, 0) << "no turn while the step runs";
    EXPECT_LT(elapsed, 8s) << "the UI loop waited for the step";
    worker.stop();
    EXPECT_EQ(worker.completed_steps(), 1);
}

TEST(SimWorker, SlowStepKeepsTheUiAtDisplayRate) {
    // 60 ms steps, 1 ms frames: tens of frames per step. A UI that waited for each step would
    // run one frame per step (the worker then waits for that frame's turn); the bound, three
    // per step, holds even where a loaded machine stretches the 1 ms sleeps tenfold.
    SimWorker worker(SimWorker::Mode::Threaded, [] { std::this_thread::sleep_for(60ms); });
    worker.set_paused(false);
    std::int64_t shown = 0;
    const int frames = ui_loop(
        worker, 100000, [&](SimWorker::Turn& turn) { shown += turn.new_steps(); },
        [&] { return shown >= 6; });
    worker.stop();
    EXPECT_GE(shown, 6);
    EXPECT_GE(frames, 3 * shown) << "frames " << frames << " for " << shown << " steps";
    // Every completed step is shown: the worker parks until the UI has taken a turn.
    EXPECT_LE(worker.completed_steps(), shown + 1);
}

TEST(SimWorker, CommandsRunInOrderAndNeverDuringAStep) {
    for (const SimWorker::Mode mode : {SimWorker::Mode::Threaded, SimWorker::Mode::Lockstep}) {
        // Plain (non-atomic) state: only the turn hand-over orders these accesses.
        bool stepping = false;
        int overlaps = 0;
        std::vector<int> applied;
        SimWorker worker(mode, [&] {
            stepping = true;
            std::this_thread::sleep_for(200us);
            stepping = false;
        });
        worker.set_paused(false);
        int posted = 0;
        ui_loop(
            worker, 100000,
            [&](SimWorker::Turn&) {
                worker.step_now(); // lockstep steps here; threaded: nothing
            },
            [&] {
                // Post a few commands each frame, from the UI thread, in order.
                for (int i = 0; i < 3 && posted < 300; ++i) {
                    worker.post([&, index = posted] {
                        if (stepping) ++overlaps;
                        applied.push_back(index);
                    });
                    ++posted;
                }
                return posted >= 300 && worker.pending_commands() == 0;
            });
        worker.stop();
        ASSERT_EQ(applied.size(), 300u);
        for (int i = 0; i < 300; ++i) ASSERT_EQ(applied[static_cast<std::size_t>(i)], i);
        EXPECT_EQ(overlaps, 0);
        EXPECT_GT(worker.completed_steps(), 0);
    }
}

TEST(SimWorker, ATurnReadsOneCompletedStep) {
    // The step writes every entry; a turn must see them all from the same step, and the step
    // count the worker reports.
    std::array<std::int64_t, 4096> state{};
    std::int64_t steps = 0;
    SimWorker worker(SimWorker::Mode::Threaded, [&] {
        ++steps;
        for (std::int64_t& value : state) value = steps;
    });
    worker.set_paused(false);
    std::int64_t last = 0;
    int torn = 0;
    int backwards = 0;
    ui_loop(
        worker, 100000,
        [&](SimWorker::Turn& turn) {
            for (std::int64_t value : state) torn += value != state[0] ? 1 : 0;
            backwards += state[0] < last ? 1 : 0;
            EXPECT_EQ(state[0], last + turn.new_steps());
            last = state[0];
        },
        [&] { return last >= 50; });
    worker.stop();
    EXPECT_EQ(torn, 0);
    EXPECT_EQ(backwards, 0);
    EXPECT_GE(last, 50);
}

TEST(SimWorker, PausedStepsOnlyWhenAsked) {
    for (const SimWorker::Mode mode : {SimWorker::Mode::Threaded, SimWorker::Mode::Lockstep}) {
        std::atomic<int> steps{0};
        SimWorker worker(mode, [&] { ++steps; });
        // Paused from the start: frames pass, no step.
        ui_loop(
            worker, 20, [&](SimWorker::Turn&) { worker.step_now(); }, [] { return false; });
        EXPECT_EQ(steps, 0);
        worker.step_once();
        worker.step_once();
        ui_loop(
            worker, 1000, [&](SimWorker::Turn&) { worker.step_now(); }, [&] { return steps >= 2; });
        // No more than asked for, even with frames to spare.
        ui_loop(
            worker, 20, [&](SimWorker::Turn&) { worker.step_now(); }, [] { return false; });
        worker.stop();
        EXPECT_EQ(steps, 2);
        EXPECT_EQ(worker.completed_steps(), 2);
    }
}

TEST(SimWorker, AThreadedStepErrorReachesTheUiAndPauses) {
    std::atomic<int> steps{0};
    SimWorker worker(SimWorker::Mode::Threaded, [&] {
        ++steps;
        throw std::runtime_error("diverged");
    });
    worker.set_paused(false);
    bool thrown = false;
    for (int frame = 0; frame < 10000 && !thrown; ++frame) {
        try {
            SimWorker::Turn turn = worker.try_turn();
        } catch (const std::runtime_error& error) {
            thrown = std::string(error.what()) == "diverged";
        }
        std::this_thread::sleep_for(1ms);
    }
    EXPECT_TRUE(thrown);
    // Paused after the error: the next turns come, no more steps.
    int granted = 0;
    ui_loop(
        worker, 20, [&](SimWorker::Turn&) { ++granted; }, [] { return false; });
    worker.stop();
    EXPECT_EQ(steps, 1);
    EXPECT_EQ(granted, 20);
}

TEST(SimWorker, AThrowingCommandKeepsTheRestQueuedInOrder) {
    SimWorker worker(SimWorker::Mode::Lockstep, [] {});
    std::vector<int> applied;
    worker.post([&] { applied.push_back(0); });
    worker.post([] { throw std::runtime_error("bad command"); });
    worker.post([&] { applied.push_back(2); });
    worker.post([&] { applied.push_back(3); });
    EXPECT_THROW(worker.try_turn(), std::runtime_error);
    EXPECT_EQ(applied, std::vector<int>{0});
    EXPECT_EQ(worker.pending_commands(), 2u);
    EXPECT_TRUE(static_cast<bool>(worker.try_turn()));
    EXPECT_EQ(applied, (std::vector<int>{0, 2, 3}));
}

TEST(SimWorker, StepsPerSecondCountsCompletedSteps) {
    SimWorker worker(SimWorker::Mode::Lockstep, [] { std::this_thread::sleep_for(2ms); });
    EXPECT_EQ(worker.steps_per_second(), 0.0);
    worker.set_paused(false);
    for (int i = 0; i < 20; ++i) {
        SimWorker::Turn turn = worker.try_turn();
        worker.step_now();
    }
    EXPECT_EQ(worker.completed_steps(), 20);
    // At most one step per 2 ms; more than one per second.
    EXPECT_GT(worker.steps_per_second(), 1.0);
    EXPECT_LT(worker.steps_per_second(), 600.0);
}

} // namespace
} // namespace edn

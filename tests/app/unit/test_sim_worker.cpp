// The app's simulation thread without a window: a slow step never holds the UI loop up, the
// worker steps back to back while the UI takes no turns, queued commands run in order and only
// between steps and get a turn soon, what a turn or a snapshot reads is one completed step,
// every step shown when asked, pause and single steps, errors of a threaded step reach the UI,
// and the lockstep mode. Built also into elastodyn-tsan-tests (-fsanitize=thread), where a
// missing hand-over is a reported race.

#include "sim_worker.hpp"
#include "snapshot_exchange.hpp"

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
    // per step, holds even where a loaded machine stretches the 1 ms sleeps tenfold. Every step
    // shown (as while recording pictures): a turn after each.
    SimWorker worker(SimWorker::Mode::Threaded, [] { std::this_thread::sleep_for(60ms); });
    worker.set_show_every_step(true);
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
    int turns_after_steps = 0;
    ui_loop(
        worker, 100000,
        [&](SimWorker::Turn& turn) {
            for (std::int64_t value : state) torn += value != state[0] ? 1 : 0;
            backwards += state[0] < last ? 1 : 0;
            EXPECT_EQ(state[0], last + turn.new_steps());
            turns_after_steps += turn.new_steps() > 0 ? 1 : 0;
            last = state[0];
        },
        [&] {
            worker.request_turn(); // every frame wants the simulation (outside the turn)
            return turns_after_steps >= 50;
        });
    worker.stop();
    EXPECT_EQ(torn, 0);
    EXPECT_EQ(backwards, 0);
    EXPECT_GE(turns_after_steps, 50);
}

TEST(SimWorker, StepsBackToBackWhileTheUiTakesNoTurn) {
    // 0.2 ms steps, 10 ms frames and no commands: the worker must not wait for the display (the
    // old contract parked it after each step, one step per frame). Nominally ~40 steps a frame;
    // the bound, two, holds where a loaded machine stretches each sleep to a few milliseconds.
    std::atomic<std::int64_t> steps{0};
    SimWorker worker(SimWorker::Mode::Threaded, [&] {
        std::this_thread::sleep_for(200us);
        ++steps;
    });
    worker.set_paused(false);
    int granted = 0;
    const int frames = 20;
    for (int frame = 0; frame < frames; ++frame) {
        if (worker.try_turn()) ++granted;
        std::this_thread::sleep_for(10ms);
    }
    EXPECT_EQ(granted, 0) << "no turn without a command";
    const std::int64_t before_post = steps;
    EXPECT_GE(before_post, 2 * frames);
    // A command: a turn within a few frames (the worker parks after its current step), and it
    // reports the many steps since the (missing) previous turn.
    bool applied = false;
    worker.post([&] { applied = true; });
    int waited = 0;
    std::int64_t reported = 0;
    while (!applied && waited < 500) {
        if (SimWorker::Turn turn = worker.try_turn()) reported = turn.new_steps();
        if (!applied) {
            ++waited;
            std::this_thread::sleep_for(1ms);
        }
    }
    EXPECT_TRUE(applied);
    EXPECT_LE(waited, 100) << "frames until the command's turn";
    EXPECT_GE(reported, before_post);
    // And back to back again after it.
    const std::int64_t after_turn = steps;
    for (int frame = 0; frame < frames; ++frame) {
        EXPECT_FALSE(worker.try_turn());
        std::this_thread::sleep_for(10ms);
    }
    worker.stop();
    EXPECT_GE(steps - after_turn, 2 * frames);
}

TEST(SimWorker, ShowEveryStepParksUntilTheTurnAndCanBeLifted) {
    std::atomic<std::int64_t> steps{0};
    SimWorker worker(SimWorker::Mode::Threaded, [&] { ++steps; });
    worker.set_show_every_step(true);
    worker.set_paused(false);
    // Without turns the worker stops after one step.
    while (steps < 1) std::this_thread::sleep_for(1ms);
    std::this_thread::sleep_for(20ms);
    EXPECT_EQ(steps, 1);
    // Each turn lets exactly one more step through.
    std::int64_t shown = 0;
    ui_loop(
        worker, 100000, [&](SimWorker::Turn& turn) { shown += turn.new_steps(); },
        [&] { return shown >= 20; });
    EXPECT_LE(worker.completed_steps(), shown + 1);
    // Lifted: back to back with no turn.
    worker.set_show_every_step(false);
    const std::int64_t lifted = steps;
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (steps < lifted + 1000 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(1ms);
    worker.stop();
    EXPECT_GE(steps, lifted + 1000);
}

TEST(SimWorker, TheUiReadsWholeSnapshotsWhileTheWorkerSteps) {
    // The step writes its count into every entry of the exchange's back slot and publishes; the
    // UI takes the latest each frame without a turn and must never see a mix of two steps, nor
    // go backwards, while the worker keeps stepping (it is never parked here).
    SnapshotExchange<std::vector<std::int64_t>> exchange;
    std::atomic<std::int64_t> steps{0};
    SimWorker worker(SimWorker::Mode::Threaded, [&] {
        const std::int64_t step = steps + 1;
        std::vector<std::int64_t>& slot = exchange.back();
        slot.resize(4096);
        for (std::int64_t& value : slot) value = step;
        exchange.publish();
        steps = step;
    });
    worker.set_paused(false);
    std::int64_t last = 0;
    int torn = 0;
    int backwards = 0;
    int taken = 0;
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (taken < 300 && std::chrono::steady_clock::now() < deadline) {
        EXPECT_FALSE(worker.try_turn());
        if (const std::vector<std::int64_t>* snapshot = exchange.take()) {
            ++taken;
            // Read slowly (the worker publishes meanwhile) to give a torn read its chance.
            for (std::size_t i = 0; i < snapshot->size(); ++i) {
                torn += (*snapshot)[i] != (*snapshot)[0] ? 1 : 0;
                if (i % 1024 == 0) std::this_thread::yield();
            }
            backwards += (*snapshot)[0] <= last ? 1 : 0;
            last = (*snapshot)[0];
        }
        std::this_thread::sleep_for(100us);
    }
    worker.stop();
    EXPECT_EQ(taken, 300);
    EXPECT_EQ(torn, 0);
    EXPECT_EQ(backwards, 0);
    EXPECT_GT(steps, taken) << "the worker waited for the reader";
    EXPECT_EQ(exchange.published(), steps);
}

TEST(SnapshotExchange, TakesTheLatestOnceAndNeverHandsOutTheHeldSlot) {
    SnapshotExchange<int> exchange;
    EXPECT_EQ(exchange.take(), nullptr);
    exchange.back() = 1;
    exchange.publish();
    exchange.back() = 2;
    exchange.publish();
    const int* latest = exchange.take();
    ASSERT_NE(latest, nullptr);
    EXPECT_EQ(*latest, 2);
    EXPECT_EQ(exchange.take(), nullptr) << "nothing new";
    // The reader holds `latest`: the writer's next slots are never it.
    const int* held = exchange.take();
    EXPECT_EQ(held, nullptr);
    latest = nullptr;
    exchange.back() = 3;
    exchange.publish();
    const int* third = exchange.take();
    ASSERT_NE(third, nullptr);
    for (int i = 4; i < 10; ++i) {
        EXPECT_NE(&exchange.back(), third);
        exchange.back() = i;
        exchange.publish();
        EXPECT_EQ(*third, 3) << "the held slot was written";
    }
    EXPECT_EQ(*exchange.take(), 9);
    exchange.back() = 10;
    exchange.publish();
    exchange.discard();
    EXPECT_EQ(exchange.take(), nullptr) << "discarded";
    EXPECT_EQ(exchange.published(), 10);
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

#pragma once
/// The simulation's own thread and the hand-over between it and the UI thread, free of GL and of
/// the App so tests drive it with a fake step.
///
/// Contract: the step function runs on the worker thread (threaded mode) and is the only thing
/// that does. The worker steps back to back: after each step the step function publishes what
/// the UI draws every frame (the App's SnapshotExchange, app/snapshot_exchange.hpp) and the
/// worker goes on with the next step; the UI draws the latest published state and never waits
/// for a step, nor does the worker wait for the display. Everything else that touches the
/// simulation (queued commands: settings, pins, drags, cuts; the surface upload from the
/// simulation itself; statistics) runs on the UI thread during a *turn*. The worker parks at its
/// next step boundary while the UI needs the simulation to itself: commands are queued (post),
/// a turn was asked for (request_turn), or, with set_show_every_step(true), the UI has not yet
/// had a turn since the last step (every step shown, as for recorded pictures). try_turn()
/// grants a turn only then (or while the worker is idle: paused, or stopped), and only while no
/// step runs. A turn never blocks the UI: while a step runs, try_turn() returns an empty turn at
/// once and the UI draws the latest snapshot.
///
/// Lockstep mode has no thread: every try_turn() is granted and the UI calls step_now() in its
/// turn, so a run is a pure function of its frames (headless, --frames and --script runs stay
/// reproducible).

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace edn {

/// Runs a step function on its own thread and hands the simulation to the UI between steps.
class SimWorker {
public:
    /// One simulation step (called on the worker thread in Threaded mode).
    using StepFunction = std::function<void()>;
    /// Work that needs the simulation to itself: a settings change, a pin, a drag update, a cut.
    using Command = std::function<void()>;

    /// Where steps run.
    enum class Mode : std::uint8_t {
        Lockstep, ///< no thread: step_now() steps in the caller's turn (reproducible runs)
        Threaded, ///< a worker thread steps while the UI runs at the display rate
    };

    /// A turn of the UI thread: while it is held the worker is parked between steps, so the
    /// simulation may be read and changed. Empty (false) when the worker was mid-step.
    class Turn {
    public:
        /// An empty turn.
        Turn() = default;
        ~Turn();
        /// Moves the turn (the moved-from one is empty).
        Turn(Turn&& other) noexcept;
        /// Moves the turn, ending this one first.
        Turn& operator=(Turn&& other) noexcept;
        Turn(const Turn&) = delete;
        Turn& operator=(const Turn&) = delete;
        /// True when the turn was granted.
        explicit operator bool() const { return worker_ != nullptr; }
        /// Steps completed since the previous turn (0 in an empty turn).
        std::int64_t new_steps() const { return new_steps_; }
        /// Ends the turn early (the worker may step again).
        void end();

    private:
        friend class SimWorker;
        Turn(SimWorker* worker, std::int64_t new_steps) : worker_(worker), new_steps_(new_steps) {}
        SimWorker* worker_ = nullptr;
        std::int64_t new_steps_ = 0;
    };

    /// Starts the worker thread in Threaded mode; paused until set_paused(false).
    SimWorker(Mode mode, StepFunction step);
    /// Stops the worker (after its current step).
    ~SimWorker();
    SimWorker(const SimWorker&) = delete;
    SimWorker& operator=(const SimWorker&) = delete;

    /// The mode chosen at construction.
    Mode mode() const { return mode_; }
    /// Pauses or resumes stepping (a step in progress finishes).
    void set_paused(bool paused);
    /// Asks for one step even while paused.
    void step_once();
    /// Queues `command`; queued commands run in order at the start of the next granted turn.
    /// Thread-safe.
    void post(Command command);
    /// Commands queued and not yet run.
    std::size_t pending_commands() const;
    /// Asks for a turn without a command (the UI needs the simulation, e.g. to read a state the
    /// snapshots lack): the worker parks at its next step boundary. Thread-safe; asked for in a
    /// turn it holds the worker until the next turn.
    void request_turn();
    /// With true, the worker parks after each step until the UI has had a turn, so every step is
    /// shown (at most one step per displayed frame); false (the default): back to back.
    void set_show_every_step(bool show);

    /// Never blocks on a step. Lockstep: always grants a turn. Threaded: grants one when the
    /// worker is between steps and the UI needs it (commands queued, request_turn(), a step not
    /// yet shown with set_show_every_step, or the worker idle), else returns an empty turn.
    /// A granted turn runs the queued commands in order first. Rethrows (once) an exception a
    /// threaded step threw.
    Turn try_turn();
    /// Lockstep mode, during a turn: one step now when running or asked for. Threaded: nothing.
    void step_now();
    /// Stops the worker thread after its current step (idempotent); steps no more.
    void stop();

    /// Steps completed so far.
    std::int64_t completed_steps() const;
    /// Completed steps per second over the last second or so (0 before two steps).
    double steps_per_second() const;

private:
    using Clock = std::chrono::steady_clock;
    void run();
    void end_turn();
    bool runnable() const; // with mutex_ held: not stopped, running or a step asked for
    bool ui_waits() const; // with mutex_ held: the UI needs the simulation to itself
    bool may_step() const; // with mutex_ held
    void completed(Clock::time_point when);

    const Mode mode_;
    StepFunction step_;
    mutable std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<Command> commands_;
    bool stop_ = false;
    bool paused_ = true;
    int step_requests_ = 0;
    bool stepping_ = false;        // the worker is inside step_
    bool in_turn_ = false;         // the UI holds a turn
    bool turn_requested_ = false;  // request_turn() since the last granted turn
    bool show_every_step_ = false; // park after each step until the UI's turn
    std::int64_t completed_ = 0;
    std::int64_t shown_ = 0;               // completed_ at the UI's last turn
    std::exception_ptr error_;             // thrown by a threaded step, rethrown by try_turn
    std::deque<Clock::time_point> recent_; // completion times (steps_per_second)
    std::thread thread_;
};

} // namespace edn

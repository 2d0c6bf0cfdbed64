#pragma once
/// The simulation's own thread and the hand-over between it and the UI thread, free of GL and of
/// the App so tests drive it with a fake step.
///
/// Contract: the step function runs on the worker thread (threaded mode) and is the only thing
/// that does; everything else that touches the simulation (queued commands, reading positions
/// for the surface upload, statistics) runs on the UI thread during a *turn*, which try_turn()
/// grants only while the worker is between steps and which the worker waits out. A turn never
/// blocks the UI: while a step runs, try_turn() returns an empty turn at once and the UI draws
/// what it uploaded at its last turn (the latest completed step). After each step the worker
/// parks until the UI has taken a turn, so every completed step is shown and the simulation runs
/// at most one step ahead of the picture (at most one step per displayed frame, as when it ran
/// on the UI thread, but the UI no longer waits for the step).
///
/// Lockstep mode has no thread: the UI calls step_now() in its turn, so a run is a pure function
/// of its frames (headless, --frames and --script runs stay reproducible).

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

    /// Never blocks on a step: grants a turn when the worker is between steps (always in
    /// Lockstep mode), runs the queued commands in order, and returns it; returns an empty turn
    /// while a step runs. Rethrows (once) an exception a threaded step threw.
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
    bool stepping_ = false; // the worker is inside step_
    bool in_turn_ = false;  // the UI holds a turn
    std::int64_t completed_ = 0;
    std::int64_t shown_ = 0;               // completed_ at the UI's last turn
    std::exception_ptr error_;             // thrown by a threaded step, rethrown by try_turn
    std::deque<Clock::time_point> recent_; // completion times (steps_per_second)
    std::thread thread_;
};

} // namespace edn

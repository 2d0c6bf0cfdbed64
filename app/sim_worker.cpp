#include "sim_worker.hpp"

#include <utility>
#include <vector>

namespace edn {
namespace {

/// steps_per_second counts completions within this window.
constexpr std::chrono::seconds kRateWindow{1};
/// Completion times kept for the rate (enough for 1 kHz over the window).
constexpr std::size_t kRateSamples = 1024;

} // namespace

SimWorker::Turn::~Turn() {
    end();
}

SimWorker::Turn::Turn(Turn&& other) noexcept
    : worker_(std::exchange(other.worker_, nullptr)), new_steps_(other.new_steps_) {}

SimWorker::Turn& SimWorker::Turn::operator=(Turn&& other) noexcept {
    if (this != &other) {
        end();
        worker_ = std::exchange(other.worker_, nullptr);
        new_steps_ = other.new_steps_;
    }
    return *this;
}

void SimWorker::Turn::end() {
    if (worker_) std::exchange(worker_, nullptr)->end_turn();
}

SimWorker::SimWorker(Mode mode, StepFunction step) : mode_(mode), step_(std::move(step)) {
    if (mode_ == Mode::Threaded) thread_ = std::thread([this] { run(); });
}

SimWorker::~SimWorker() {
    stop();
}

void SimWorker::stop() {
    {
        const std::lock_guard lock(mutex_);
        stop_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void SimWorker::set_paused(bool paused) {
    {
        const std::lock_guard lock(mutex_);
        if (paused_ == paused) return;
        paused_ = paused;
    }
    wake_.notify_all();
}

void SimWorker::step_once() {
    {
        const std::lock_guard lock(mutex_);
        ++step_requests_;
    }
    wake_.notify_all();
}

void SimWorker::post(Command command) {
    const std::lock_guard lock(mutex_);
    commands_.push_back(std::move(command));
}

std::size_t SimWorker::pending_commands() const {
    const std::lock_guard lock(mutex_);
    return commands_.size();
}

void SimWorker::request_turn() {
    const std::lock_guard lock(mutex_);
    turn_requested_ = true;
}

void SimWorker::set_show_every_step(bool show) {
    {
        const std::lock_guard lock(mutex_);
        if (show_every_step_ == show) return;
        show_every_step_ = show;
    }
    wake_.notify_all();
}

bool SimWorker::runnable() const {
    return !stop_ && (!paused_ || step_requests_ > 0);
}

bool SimWorker::ui_waits() const {
    // Commands wait at most for the step in progress; so does a picture of every step.
    return !commands_.empty() || turn_requested_ || (show_every_step_ && completed_ != shown_);
}

bool SimWorker::may_step() const {
    // Back to back, except while the UI holds a turn or is waiting for one.
    return runnable() && !in_turn_ && !ui_waits();
}

SimWorker::Turn SimWorker::try_turn() {
    std::vector<Command> batch;
    std::int64_t new_steps = 0;
    {
        const std::lock_guard lock(mutex_);
        if (stepping_ || in_turn_) return {};
        // Threaded, a turn only when the UI needs one: an idle worker loses nothing by it, a
        // stepping one would wait out the turn for nothing.
        if (mode_ == Mode::Threaded && !error_ && runnable() && !ui_waits()) return {};
        if (error_) {
            shown_ = completed_;
            std::rethrow_exception(std::exchange(error_, nullptr));
        }
        in_turn_ = true;
        turn_requested_ = false;
        new_steps = completed_ - shown_;
        shown_ = completed_;
        batch.assign(std::make_move_iterator(commands_.begin()),
                     std::make_move_iterator(commands_.end()));
        commands_.clear();
    }
    Turn turn(this, new_steps);
    // Outside the lock: a command may post more (they run at the next turn) or take long (a cut).
    for (std::size_t i = 0; i < batch.size(); ++i) {
        try {
            batch[i]();
        } catch (...) {
            // The rest stay queued, in order, ahead of anything posted meanwhile.
            const std::lock_guard lock(mutex_);
            commands_.insert(commands_.begin(), std::make_move_iterator(batch.begin() + i + 1),
                             std::make_move_iterator(batch.end()));
            throw;
        }
    }
    return turn;
}

void SimWorker::end_turn() {
    {
        const std::lock_guard lock(mutex_);
        in_turn_ = false;
    }
    wake_.notify_all();
}

void SimWorker::step_now() {
    if (mode_ != Mode::Lockstep) return;
    {
        const std::lock_guard lock(mutex_);
        if (stop_ || (paused_ && step_requests_ == 0)) return;
        if (step_requests_ > 0) --step_requests_;
    }
    step_();
    completed(Clock::now());
    const std::lock_guard lock(mutex_);
    shown_ = completed_; // the caller holds the turn: it sees this step now
}

void SimWorker::completed(Clock::time_point when) {
    const std::lock_guard lock(mutex_);
    ++completed_;
    recent_.push_back(when);
    if (recent_.size() > kRateSamples) recent_.pop_front();
}

void SimWorker::run() {
    std::unique_lock lock(mutex_);
    while (true) {
        wake_.wait(lock, [this] { return stop_ || may_step(); });
        if (stop_) return;
        if (step_requests_ > 0) --step_requests_; // running covers it, or it is this step
        stepping_ = true;
        lock.unlock();
        std::exception_ptr error;
        try {
            step_();
        } catch (...) {
            error = std::current_exception();
        }
        const Clock::time_point now = Clock::now();
        lock.lock();
        stepping_ = false;
        ++completed_;
        recent_.push_back(now);
        if (recent_.size() > kRateSamples) recent_.pop_front();
        if (error) {
            // A failing step would fail again: stop until the UI has seen the error.
            error_ = error;
            paused_ = true;
            step_requests_ = 0;
        }
    }
}

std::int64_t SimWorker::completed_steps() const {
    const std::lock_guard lock(mutex_);
    return completed_;
}

double SimWorker::steps_per_second() const {
    const std::lock_guard lock(mutex_);
    const Clock::time_point now = Clock::now();
    std::size_t first = recent_.size();
    while (first > 0 && now - recent_[first - 1] <= kRateWindow) --first;
    const std::size_t count = recent_.size() - first;
    if (count < 2) {
        // Slower than a step per window: the last interval, while the last step is recent.
        const std::size_t n = recent_.size();
        if (n < 2 || now - recent_.back() > 5 * kRateWindow) return 0.0;
        const double last = std::chrono::duration<double>(recent_[n - 1] - recent_[n - 2]).count();
        return last > 0.0 ? 1.0 / last : 0.0;
    }
    // Intervals between the completions in the window, over the time they span.
    const double span = std::chrono::duration<double>(recent_.back() - recent_[first]).count();
    return span > 0.0 ? static_cast<double>(count - 1) / span : 0.0;
}

} // namespace edn

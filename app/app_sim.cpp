// App's side of the simulation thread (app/sim_worker.hpp): the step the worker runs, the queue
// the UI posts to, what a turn takes from the completed steps; and the run's defaults that
// follow from where steps run (mesh resolution, --progress). App members defined here to keep
// app.cpp the frame loop.
#include "app.hpp"
#include "core/error.hpp"

#include <chrono>
#include <cstdio>
#include <iostream>
#include <utility>

namespace edn {

void App::choose_mesh_resolution() {
    // The GPU steps the full mesh at the display rate; two CPU cores do not (the bunny: 185 ms a
    // step), so the CPU backend starts with the coarse mesh and says how to get the full one.
    const bool full = options_.full_resolution || gui_.settings.backend == Backend::Cuda;
    gui_.quality = full ? kFullResolutionQuality : kInteractiveCpuQuality;
    if (!full) {
        char text[256];
        std::snprintf(text, sizeof(text),
                      "CPU backend: OBJ scenes are meshed coarse (quality %.1f) to stay "
                      "interactive. Full resolution: set quality %.1f and Load, or start with "
                      "--full-resolution.",
                      static_cast<double>(kInteractiveCpuQuality),
                      static_cast<double>(kFullResolutionQuality));
        gui_.mesh_hint = text;
    }
}

void App::print_progress(bool done) {
    using Seconds = std::chrono::duration<double>;
    const auto now = std::chrono::steady_clock::now();
    if (!done && now - last_progress_ < std::chrono::seconds(2)) return;
    last_progress_ = now;
    const double seconds = Seconds(now - run_start_).count();
    const double frame_ms = timings_.mean_ms(Stage::Count, 30);
    char text[160];
    if (options_.frames > 0) {
        std::snprintf(text, sizeof(text), "frame %lld/%lld after %.1f s, %.1f ms/frame%s",
                      static_cast<long long>(frame_index_), static_cast<long long>(options_.frames),
                      seconds, frame_ms, done ? " (done)" : "");
    } else {
        std::snprintf(text, sizeof(text), "frame %lld after %.1f s, %.1f ms/frame",
                      static_cast<long long>(frame_index_), seconds, frame_ms);
    }
    std::cerr << "elastodyn: " << text << '\n';
}

void App::post(SimWorker::Command command) {
    worker_->post(std::move(command));
}

void App::sync_worker() {
    // Nothing to step without a simulation (a scene still loading, or one that failed).
    worker_->set_paused(gui_.paused || !session_.sim());
    if (step_once_) worker_->step_once();
    step_once_ = false;
}

void App::step_simulation() {
    // On the worker thread (lockstep: in the UI's turn). The session changes only in the UI's
    // turns, which the worker waits out, so reading it here needs no lock.
    SimDriver* sim = session_.sim();
    if (!sim) return;
    try {
        step_results_.push_back(sim->step());
        // The step's device work (its own stream) is done before the UI's turn reads it.
        sim->simulation().finish_device_work();
        recorder_.on_step(sim->simulation()); // every K-th step: a snapshot for the writer
    } catch (const Error& error) {
        step_error_ = error;
    }
}

void App::simulate(const SimWorker::Turn& turn) {
    (void)turn;       // proof of the turn: the steps' results may be read
    check_supports(); // after this turn's commands (pins, ground, settings, scene)
    start_pending_recording();
    // Commands of this turn (a script's pause or step) may have changed what to run.
    sync_worker();
    worker_->step_now();
    picture_due_ = recorder_.take_png_request(); // drawn at the end of this frame
    if (step_error_) {
        const Error error = *std::exchange(step_error_, std::nullopt);
        step_results_.clear();
        if (options_.headless) throw error;
        gui_.sim_error = error.what();
        gui_.paused = true; // a failing step would fail again every frame
        worker_->set_paused(true);
        return;
    }
    if (step_results_.empty()) return;
    for (const StepResult& result : step_results_) {
        recent_convergence_.add(result);
        run_convergence_.add(result);
    }
    last_step_ = step_results_.back();
    stepped_ = true;
    step_results_.clear();
    // Threaded, the CSV's simulate columns are those of the step completed since the last turn.
    const StageTimes& t = last_step_.times;
    timings_.set_simulation({t.element, t.summation, t.pcg, t.line_search},
                            last_step_.newton_iterations, last_step_.cg_iterations);
}

} // namespace edn

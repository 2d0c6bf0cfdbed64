// App's side of the simulation thread (app/sim_worker.hpp): the step the worker runs and the
// snapshot it publishes, the queue the UI posts to, what each frame takes from the completed
// steps; and the run's defaults that
// follow from where steps run (mesh resolution, --progress). App members defined here to keep
// app.cpp the frame loop.
#include "app.hpp"
#include "core/error.hpp"

#include <array>
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
        // Threaded: the cursor's latest drag target (set every frame of a mouse drag without a
        // turn); the drag itself begins and ends in turns, which clear a stale target.
        std::optional<glm::vec3> target;
        {
            const std::lock_guard lock(step_mutex_);
            target = std::exchange(drag_target_, std::nullopt);
        }
        if (target && sim->drag()) DragTool::move_to(*sim, *target);
        const StepResult result = sim->step();
        // Threaded: what the UI draws until its next turn (and, CUDA, the device copies made
        // on this thread's stream, done at finish_device_work below, before it is published).
        if (publish_snapshots_) fill_snapshot(*sim);
        // The step's device work (its own stream) is done before the UI's turn reads it.
        sim->simulation().finish_device_work();
        if (publish_snapshots_) snapshots_.publish();
        recorder_.on_step(sim->simulation()); // every K-th step: a snapshot for the writer
        const std::lock_guard lock(step_mutex_);
        step_results_.push_back(result);
    } catch (const Error& error) {
        const std::lock_guard lock(step_mutex_);
        step_error_ = error;
    }
}

void App::set_drag_target(const glm::vec3& target) {
    const std::lock_guard lock(step_mutex_);
    drag_target_ = target;
}

void App::clear_drag_target() {
    const std::lock_guard lock(step_mutex_);
    drag_target_.reset();
}

void App::fill_snapshot(SimDriver& sim) {
    // On the worker thread, between the step and the next: the UI reads only the other slots.
    SimSnapshot& snapshot = snapshots_.back();
    const Simulation& simulation = sim.simulation();
    snapshot.device = sim.device_positions() != nullptr;
    snapshot.has_stress = snapshot_stress_; // written in turns only
    if (snapshot.device) {
        // Device-to-device copies on this thread's stream: the interop upload reads them while
        // the next step writes the solver's arrays; nothing comes to the host.
        snapshot.device_positions.copy_from(sim.device_positions(),
                                            3 * static_cast<std::size_t>(simulation.num_nodes()));
        if (snapshot.has_stress)
            snapshot.device_stress.copy_from(
                sim.device_von_mises_stress(),
                static_cast<std::size_t>(simulation.mesh().num_cells()));
    } else {
        snapshot.positions = sim.positions();
        if (snapshot.has_stress) snapshot.stress = sim.von_mises_stress();
    }
    snapshot.dragging = sim.drag().has_value();
    if (snapshot.dragging) {
        // CUDA: three vertices' positions come to the host, only while dragging.
        snapshot.grabbed = grabbed_point(sim);
        const std::array<double, 3>& target = sim.drag()->target;
        snapshot.target = glm::vec3(target[0], target[1], target[2]);
    }
}

void App::simulate(const SimWorker::Turn& turn) {
    (void)turn;       // proof of the turn: the simulation may be read and changed
    check_supports(); // after this turn's commands (pins, ground, settings, scene)
    start_pending_recording();
    // Commands of this turn (a script's pause or step) may have changed what to run.
    sync_worker();
    // What the next steps publish (read by the worker, which waits out this turn): the stress
    // when the surface shows it; and while PNG frames are recorded every step must be drawn, so
    // the worker parks after each until the next turn (one step per frame, as in lockstep).
    snapshot_stress_ = gui_.color_mode == ColorMode::VonMises;
    worker_->set_show_every_step(recorder_.records_png());
    worker_->step_now();
    picture_due_ = recorder_.take_png_request(); // drawn at the end of this frame
}

void App::take_step_results() {
    // Every frame, turn or not: threaded steps complete between turns too.
    std::vector<StepResult> results;
    std::optional<Error> error;
    {
        const std::lock_guard lock(step_mutex_);
        results.swap(step_results_);
        error = std::exchange(step_error_, std::nullopt);
    }
    if (error) {
        if (options_.headless) throw *error;
        gui_.sim_error = error->what();
        gui_.paused = true; // a failing step would fail again every frame
        worker_->set_paused(true);
        return;
    }
    if (results.empty()) return;
    for (const StepResult& result : results) {
        recent_convergence_.add(result);
        run_convergence_.add(result);
    }
    last_step_ = results.back();
    stepped_ = true;
    // Threaded, the CSV's simulate columns are those of the last step completed this frame.
    const StageTimes& t = last_step_.times;
    timings_.set_simulation({t.element, t.summation, t.pcg, t.line_search},
                            last_step_.newton_iterations, last_step_.cg_iterations);
    // Between turns the panel's step numbers follow the steps; the rest waits for a turn.
    if (statistics_.simulated) {
        statistics_.last_step = last_step_;
        statistics_.stepped = stepped_;
        statistics_.recent_convergence = recent_convergence_.tally();
    }
}

} // namespace edn

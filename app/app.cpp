#include "app.hpp"

#include "core/device.hpp"
#include "core/error.hpp"
#include "core/parallel.hpp"
#include "sim/settings_options.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <glad/gl.h>
#include <glm/geometric.hpp>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>
#include <iostream>
#include <limits>
#include <thread>
#include <utility>

namespace edn {
namespace {

/// Frames kept for the GUI and --timings when no --frames bound is given (~1 MB of doubles).
constexpr std::size_t kDefaultTimingFrames = 16384;

/// Frame time fed to ImGui headless, where no clock should make runs differ.
constexpr float kHeadlessFrameSeconds = 1.0f / 60.0f;

/// Default drag spring: stiffness per kilogram of the body [N/(m kg)]: pulls the whole body
/// with a natural frequency of about 10 rad/s, firm without inverting the grabbed elements.
constexpr double kDragStiffnessPerKg = 100.0;

/// Default pins: vertices below this fraction of the mesh height (so models stand).
constexpr float kDefaultPinFraction = 0.02f;

std::string gl_description(const std::string& platform) {
    auto text = [](GLenum name) {
        const auto* value = reinterpret_cast<const char*>(glGetString(name));
        return std::string(value ? value : "?");
    };
    return "OpenGL " + text(GL_VERSION) + " on " + text(GL_RENDERER) + " (" + platform + ")";
}

std::string timestamp() {
    const std::time_t now = std::time(nullptr);
    char text[32];
    std::strftime(text, sizeof(text), "%Y%m%d-%H%M%S", std::localtime(&now));
    return text;
}

} // namespace

bool uses_sim_thread(const AppOptions& options) {
    if (options.sim_thread) return *options.sim_thread;
    // Reproducible runs pair each frame with one step; interactive ones must not wait for it.
    return !options.headless && options.frames == 0 && !options.script;
}

SimulationSettings default_app_settings() {
    // One defaults table: the CLI's (soft neo-Hookean p = 1, backward Euler, Newton to 1e-3,
    // forcing-term CG, no damping), plus the budget that keeps the window responsive.
    SimulationSettings settings;
    settings.frame_budget_ms = kAppFrameBudgetMs;
    return settings;
}

App::App(AppOptions options)
    : options_(std::move(options)),
      timings_(options_.frames > 0 ? static_cast<std::size_t>(options_.frames)
                                   : kDefaultTimingFrames) {
    gui_.settings = default_app_settings();
    if (uses_sim_thread(options_)) gui_.settings.frame_budget_ms = kThreadedStepBudgetMs;
    // The command line's settings over the app's defaults, parsed as simulate parses them.
    apply_settings_options(options_.settings, gui_.settings);
    if (options_.frame_budget_ms) gui_.settings.frame_budget_ms = *options_.frame_budget_ms;
    if (options_.color) gui_.color_mode = *options_.color;
    gui_.paused = options_.paused;
    init_recording();
    const BackendAvailability cuda = backend_availability(Backend::Cuda);
    gui_.cuda_available = cuda.usable;
    gui_.cuda_unavailable_reason = cuda.reason;
    // A GPU when there is one: the CPU backend is the fallback, not the default.
    if (options_.backend)
        gui_.settings.backend = *options_.backend;
    else if (cuda.usable)
        gui_.settings.backend = edn::Backend::Cuda;
    if (gui_.settings.backend == Backend::Cuda && !cuda.usable) {
        // Headless a run asked for CUDA: fail at once, with the reason. Windowed: the CPU
        // backend, and the reason in the Simulation panel.
        EDN_VERIFY(!options_.headless, ErrorCode::Usage,
                   "--backend cuda: " << cuda.reason << "; use --backend cpu");
        gui_.settings.backend = Backend::Cpu;
        gui_.backend_notice = "--backend cuda: " + cuda.reason + "; running on the CPU backend";
        std::cerr << "elastodyn: warning: " << gui_.backend_notice << '\n';
    }
    choose_mesh_resolution();
}

App::~App() {
    shutdown();
}

int App::run() {
    run_start_ = last_progress_ = std::chrono::steady_clock::now();
    start();
    // Headless there is no vsync: with the simulation on its own thread the display loop would
    // spin at thousands of frames a second, and on a GPU its GL work time-slices with the CUDA
    // solver's kernels (steps ran 3x slower). Headless threaded runs pace the display as a 60 Hz
    // vsync would; lockstep runs (the simulation is the frame) are not paced.
    const bool paced = options_.headless && worker_ && worker_->mode() == SimWorker::Mode::Threaded;
    auto next_frame = std::chrono::steady_clock::now();
    while (!quit_) {
        if (paced) {
            std::this_thread::sleep_until(next_frame);
            next_frame =
                std::max(next_frame + kHeadlessFramePeriod, std::chrono::steady_clock::now());
        }
        const bool last_frame = options_.frames > 0 && frame_index_ + 1 >= options_.frames;
        frame(last_frame);
        ++frame_index_;
        if (last_frame) quit_ = true;
        if (options_.progress) print_progress(quit_);
    }
    // The worker's steps touch the session: no more of them before it is summarised, and the
    // steps completed since the last frame count too.
    if (worker_) {
        worker_->stop();
        take_step_results();
    }
    finish_recording();
    if (options_.timings) timings_.write_csv(*options_.timings);
    if (options_.stats)
        write_stats(
            *options_.stats, session_, frame_index_, gui_.upload_method, last_step_,
            run_convergence_, errors_,
            std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start_).count());
    shutdown();
    return 0;
}

void App::start() {
    paths_ = find_resource_paths(options_.shader_dir);
    // A bad script is a usage problem of this run: fail before any expensive work.
    if (options_.script) script_ = ScriptRunner(load_script(*options_.script));
    // Headless, a bad scene is fatal: load it before paying for a GL context.
    if (options_.headless) load_initial_scene();

    // With the simulation on its own thread, Mesa's llvmpipe must not rasterise on every core
    // (its default): its threads took the simulation's core (2 cores, --sim-thread: 62% of the
    // perf samples in llvmpipe threads; 2.3 -> 5.8-9.1 converged steps per second on a busy
    // machine without them). 0: on the UI thread. Only llvmpipe reads it; a user's value stays.
    if (uses_sim_thread(options_)) setenv("LP_NUM_THREADS", "0", 0);
    context_ = create_gl_context(
        {.width = options_.width, .height = options_.height, .headless = options_.headless});
    gui_.gl_description = gl_description(context_->platform());

    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr; // no imgui.ini dropped into the working directory
    apply_gui_style();
    if (context_->window()) {
        imgui_platform_ = ImGui_ImplGlfw_InitForOpenGL(context_->window(), true);
    } else {
        io.DisplaySize =
            ImVec2(static_cast<float>(options_.width), static_cast<float>(options_.height));
    }
    imgui_renderer_ = ImGui_ImplOpenGL3_Init("#version 330 core");
    EDN_VERIFY(imgui_renderer_, ErrorCode::Device, "cannot initialise the ImGui OpenGL backend");

    renderer_ = std::make_unique<Renderer>();
    try {
        renderer_->load_shaders(paths_.shaders);
    } catch (const Error& error) {
        if (context_->headless()) throw;
        gui_.render_error = error.what();
    }

    if (session_.scene()) upload_scene(); // headless: loaded before the context existed
    if (!options_.headless) load_initial_scene();
    // Last: from here on the simulation is touched only by steps and in the UI's turns.
    const bool threaded = uses_sim_thread(options_);
    // The stepping thread leads the CPU loops; one core is left to the UI thread (and Mesa's
    // rasteriser), which otherwise waits behind the simulation's threads: on 2 busy cores the
    // full bunny's window ran at 6.0 fps with one simulation thread, 3.6 with two.
    if (threaded) cpu_threads_before_ = set_num_threads(std::max(1, num_threads() - 1));
    publish_snapshots_ = threaded;
    worker_ = std::make_unique<SimWorker>(threaded ? SimWorker::Mode::Threaded
                                                   : SimWorker::Mode::Lockstep,
                                          [this] { step_simulation(); });
    // The first frame takes a turn (threaded too, where turns otherwise wait for commands): the
    // support check, a pending --record and what the snapshots carry are settled in turns.
    worker_->request_turn();
}

void App::load_initial_scene() {
    std::filesystem::path path;
    try {
        path = options_.scene ? resolve_scene_path(paths_, *options_.scene)
                              : default_scene_path(paths_);
        if (options_.headless) {
            TetrahedralizeOptions tet;
            tet.quality = gui_.quality;
            tet.max_volume = gui_.max_volume;
            LoadedScene loaded = load_with_simulation(path, tet, gui_.settings, options_.settings);
            EDN_VERIFY(loaded.simulation, ErrorCode::Usage, loaded.simulation_error);
            show_scene(std::move(loaded));
        } else {
            std::snprintf(gui_.scene_input.data(), gui_.scene_input.size(), "%s", path.c_str());
            start_loading(path);
        }
        return;
    } catch (const Error& error) {
        if (options_.headless) throw;
        gui_.scene_error = error.what();
    }
    std::snprintf(gui_.scene_input.data(), gui_.scene_input.size(), "%s", path.c_str());
    // Windowed: a bad --scene falls back to the default scene, with the error on screen.
    if (options_.scene) {
        try {
            start_loading(default_scene_path(paths_));
        } catch (const Error&) {
            // The first error is the one the user needs to see; stay with an empty scene.
        }
    }
}

void App::start_loading(const std::filesystem::path& path) {
    TetrahedralizeOptions options;
    options.quality = gui_.quality;
    options.max_volume = gui_.max_volume;
    const SimulationSettings settings = gui_.settings;
    loading_ =
        std::async(std::launch::async, [path, options, settings, overrides = options_.settings] {
            LoadedScene loaded = load_with_simulation(path, options, settings, overrides);
            // Built on this thread's stream; the UI and simulation threads use it next.
            if (loaded.simulation) loaded.simulation->finish_device_work();
            return loaded;
        });
    loading_start_ = std::chrono::steady_clock::now();
    gui_.loading = true;
}

void App::poll_loading() {
    if (!loading_.valid()) return;
    gui_.loading_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - loading_start_).count();
    if (loading_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return;
    gui_.loading = false;
    try {
        // A shared_ptr: commands are copyable std::functions.
        auto loaded = std::make_shared<LoadedScene>(loading_.get());
        gui_.scene_error.clear();
        post([this, loaded] { show_scene(std::move(*loaded)); });
    } catch (const Error& error) {
        gui_.scene_error = error.what(); // keep showing the current scene
    }
}

void App::show_scene(LoadedScene loaded) {
    end_drag();
    stroking_ = false;
    // The old simulation goes with its undo history: snapshots belong to the previous scene.
    const bool simulated = loaded.simulation != nullptr;
    session_.load(std::move(loaded.scene), std::move(loaded.simulation));
    stepped_ = false;
    if (!session_.scene()) {
        interop_.reset();
        if (renderer_) renderer_->clear_surface();
        picker_.clear();
        return;
    }
    if (simulated) {
        gui_.sim_error.clear();
        gui_.drag_stiffness =
            static_cast<float>(kDragStiffnessPerKg * session_.sim()->total_mass());
        pin_below_fraction(kDefaultPinFraction);
    } else {
        gui_.sim_error = loaded.simulation_error;
    }
    if (gui_.scene_error.empty()) {
        std::snprintf(gui_.scene_input.data(), gui_.scene_input.size(), "%s",
                      session_.scene()->path.c_str());
    }
    ground_at_grid(); // a new scene: the ground goes to its grid
    loaded_vertices_ = session_.scene()->mesh.num_vertices();
    if (loaded.scene_file) apply_scene_setup(*loaded.scene_file); // its pins, ground, actions
    if (loaded.state) apply_state_setup(*loaded.state);
    if (renderer_) upload_scene();
}

void App::upload_scene(bool fit_camera) {
    // set_surface reallocates the vertex buffer: the registration goes with the old one.
    interop_.reset();
    interop_failed_ = false;
    curved_.invalidate(); // new boundary: the next update_surface builds its map (p >= 2)
    const Scene& scene = *session_.scene();
    renderer_->set_surface(scene.surface.triangles, scene.surface.mesh_vertex.size(), scene.lower,
                           scene.upper);
    renderer_->set_grid_height(static_cast<float>(gui_.ground_height)); // the ground's
    std::vector<glm::vec3> positions;
    gather_surface_positions(scene.mesh.positions, scene.surface, positions);
    picker_.build(positions, scene.surface.triangles);
    if (fit_camera) camera_.fit(scene.lower, scene.upper);
}

void App::pin_below_fraction(float fraction) {
    const Scene* scene = session_.scene();
    if (!session_.sim() || !scene) return;
    session_.sim()->pin_below(scene->lower.z + fraction * (scene->upper.z - scene->lower.z));
}

void App::frame(bool last_frame) {
    timings_.begin_frame(frame_index_);
    bool ui_frame_open = false;
    try {
        context_->poll_events();
        if (context_->should_close()) {
            quit_ = true;
            last_frame = true;
        }
        poll_loading();
        timings_.lap(Stage::Poll);

        new_ui_frame();
        ui_frame_open = true;
        timings_.lap(Stage::NewFrame);

        // The panels show the state of the last turn; what the user does is queued (post).
        statistics_.steps_per_second = worker_->steps_per_second();
        statistics_.sim_thread = worker_->mode() == SimWorker::Mode::Threaded;
        const GuiActions actions = build_gui(gui_, statistics_, timings_, settings_);
        handle_input();
        apply(actions);
        poll_cuts(); // a cut prepared off the frame: committed in this frame's turn
        if (!script_.done()) post([this] { apply_script(); });
        if (quit_) last_frame = true;
        timings_.lap(Stage::Ui);

        // The UI's turn: only while the worker is between steps (never waiting for one) and,
        // threaded, only when something is queued. It runs the queued commands and uploads the
        // simulation's state; without a turn the frame uploads the latest snapshot a step
        // published (or draws what it uploaded last, when no step completed since).
        sync_worker();
        SimWorker::Turn turn = worker_->try_turn();
        if (turn) simulate(turn);
        take_step_results();
        timings_.lap(Stage::Simulate);

        if (turn) {
            // The turn uploads the simulation's own state, newer than any snapshot so far.
            snapshots_.discard();
            update_surface();
            statistics_ =
                scene_statistics(session_, last_step_, stepped_, recent_convergence_.tally());
        } else {
            show_snapshot(); // threaded, between turns: the latest completed step, when new
        }
        // The turn's device work (interop, cuts) is done before the next step, on the
        // simulation thread's stream, uses the buffers; then render and swap without holding
        // up that step.
        if (turn && session_.sim()) session_.sim()->simulation().finish_device_work();
        turn.end();
        timings_.lap(Stage::Surface);

        render(last_frame);
        ui_frame_open = false;
        if (interop_) interop_->frame_drawn();
        timings_.lap(Stage::Render);

        context_->swap_buffers();
        timings_.lap(Stage::Swap);
    } catch (const Error& error) {
        // The one place errors inside the loop are caught: headless they end the run (exit
        // code from the error), windowed they are shown and the app keeps going.
        if (ui_frame_open) ImGui::EndFrame();
        // A failure in the last frame (e.g. the screenshot) must not pass unnoticed either.
        if (context_->headless() || last_frame) throw;
        gui_.render_error = error.what();
    }
    timings_.end_frame();
    if (gui_.recording) {
        if (const FrameTimings* frame = timings_.last()) recording_.push_back(*frame);
    }
}

void App::new_ui_frame() {
    ImGui_ImplOpenGL3_NewFrame();
    if (imgui_platform_) {
        ImGui_ImplGlfw_NewFrame();
    } else {
        ImGuiIO& io = ImGui::GetIO();
        io.DisplaySize =
            ImVec2(static_cast<float>(options_.width), static_cast<float>(options_.height));
        io.DeltaTime = kHeadlessFrameSeconds;
    }
    ImGui::NewFrame();
}

void App::report_error(const std::string& message) {
    gui_.sim_error = message;
    errors_.push_back(message);
    // Headless there is no panel to show it in: one line on stderr, and the run goes on.
    if (options_.headless) std::cerr << "elastodyn: warning: " << message << '\n';
}

void App::rebuild_simulation(const SimulationSettings& settings) {
    if (!session_.sim()) {
        if (!session_.scene()) return;
        try {
            session_.attach(SimDriver::build(*session_.scene(), settings));
            gui_.sim_error.clear();
            pin_below_fraction(kDefaultPinFraction);
        } catch (const Error& error) {
            report_error(error.what());
        }
        return;
    }
    try {
        session_.sim()->rebuild(settings);
        gui_.sim_error.clear();
        // New Simulation (order, backend): register again rather than trust the old state.
        interop_.reset();
        interop_failed_ = false;
        curved_.invalidate(); // its node numbering may differ (order, backend)
    } catch (const Error& error) {
        report_error(error.what());
    }
    // The panel shows what runs: after a failure the old settings come back.
    gui_.settings = session_.sim()->simulation().settings();
}

void App::apply(const GuiActions& actions) {
    if (actions.load_scene && !gui_.loading) {
        try {
            start_loading(resolve_scene_path(paths_, gui_.scene_input.data()));
        } catch (const Error& error) {
            gui_.scene_error = error.what();
        }
    }
    apply_file_actions(actions);
    if (actions.fit_view && session_.scene())
        camera_.fit(session_.scene()->lower, session_.scene()->upper);
    if (actions.reset_view) camera_.reset();
    if (actions.reload_shaders) {
        try {
            renderer_->load_shaders(paths_.shaders);
            gui_.render_error.clear();
        } catch (const Error& error) {
            gui_.render_error = error.what();
        }
    }
    // What changes the simulation is queued, in the order the user asked, to the next turn.
    if (actions.settings_changed)
        post([this, settings = gui_.settings] { rebuild_simulation(settings); });
    if (actions.step_once) step_once_ = true;
    if (actions.reset_simulation)
        post([this] {
            if (session_.sim()) session_.sim()->reset();
        });
    if (actions.pin_below) post([this, height = gui_.pin_height] { pin_below_fraction(height); });
    if (actions.clear_pins)
        post([this] {
            if (session_.sim()) session_.sim()->clear_pins();
        });
    if (actions.ground_changed) post([this] { apply_ground(); });
    if (actions.pin_plane)
        post([this, plane = PinPlane{gui_.pin_axis, gui_.pin_above, gui_.pin_plane_fraction,
                                     std::nullopt}] { pin_plane(plane); });
    if (actions.screenshot) screenshot_requested_ = true;
    if (actions.refine_uniform) post([this] { refine(std::nullopt, 0.0, 1); });
    if (actions.undo) post([this] { undo(); });
    if (actions.toggle_animation) toggle_recording();
    if (actions.toggle_record) {
        if (gui_.recording) {
            const std::filesystem::path path = "elastodyn-timings-" + timestamp() + ".csv";
            try {
                TimingRecorder::write_csv(path, recording_);
                gui_.status_message = "wrote " + path.string();
            } catch (const Error& error) {
                gui_.status_message = error.what();
            }
            recording_.clear();
        }
        gui_.recording = !gui_.recording;
    }
}

void App::edited(const EditResult& result, bool keep_stroke) {
    gui_.cut_message = result.message;
    if (!result.record) {
        report_error(result.message); // the current scene stays
        return;
    }
    end_drag(); // the Simulation dropped it (its vertices are renumbered)
    if (!keep_stroke) {
        // Another edit ends the stroke (its own pieces keep it going).
        stroking_ = false;
        stroke_cancel();
    }
    gui_.settings = session_.sim()->simulation().settings();
    apply_ground(); // the panel's ground also after an undo to older settings
    gui_.sim_error.clear();
    timings_.add_repattern(result.record->repattern_ms);
    // New topology: the same path as a scene change (new buffer, new interop registration), but
    // the camera stays where the user cut.
    if (renderer_) upload_scene(false);
}

bool App::refine(const std::optional<Vec3>& center, double radius, int levels) {
    commit_cuts(true); // the cuts asked for before it come first, each shown
    const EditResult result = session_.refine(center, radius, levels, frame_index_);
    edited(result);
    return result.record.has_value();
}

bool App::undo() {
    commit_cuts(true); // undo takes back the last cut asked for, also when still pending
    const EditResult result = session_.undo(frame_index_);
    edited(result);
    return result.record.has_value();
}

double App::default_refine_radius() const {
    const Scene* scene = session_.scene();
    if (!scene) return 0.0;
    return static_cast<double>(gui_.refine_radius_fraction *
                               glm::length(scene->upper - scene->lower));
}

void App::render(bool last_frame) {
    const glm::ivec2 size = context_->framebuffer_size();
    renderer_->begin_frame(size, context_->headless(), settings_);
    renderer_->draw_scene(camera_, settings_);
    if (screenshot_requested_) {
        // Before the panels are drawn: the picture of the scene, not of the GUI.
        screenshot_requested_ = false;
        const std::filesystem::path path = "elastodyn-" + timestamp() + ".png";
        try {
            write_image(path, renderer_->read_pixels());
            gui_.status_message = "wrote " + path.string();
        } catch (const Error& error) {
            gui_.status_message = error.what();
        }
    }
    record_picture(); // also before the panels
    ImGui::Render();  // also with --no-gui: the UI is built every frame, only not drawn
    if (options_.show_gui) ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    if (last_frame && options_.screenshot)
        write_image(*options_.screenshot, renderer_->read_pixels());
}

void App::shutdown() {
    // The worker's steps use the session and (CUDA) the device: stop it before anything goes.
    if (worker_) worker_->stop();
    if (cpu_threads_before_ > 0) set_num_threads(std::exchange(cpu_threads_before_, 0));
    // A load in flight must finish before the app goes (it owns nothing of ours, but the
    // future's destructor would block anyway; make it explicit).
    if (loading_.valid()) loading_.wait();
    // GL objects go first, while the context is still current; the CUDA registration of the
    // surface buffer before the buffer.
    interop_.reset();
    renderer_.reset();
    if (imgui_renderer_) ImGui_ImplOpenGL3_Shutdown();
    if (imgui_platform_) ImGui_ImplGlfw_Shutdown();
    if (ImGui::GetCurrentContext()) ImGui::DestroyContext();
    imgui_renderer_ = imgui_platform_ = false;
    context_.reset();
}

} // namespace edn

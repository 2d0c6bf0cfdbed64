#pragma once
/// The app: owns the context, renderer, camera, GUI state and the units that do the work (the
/// edit session with the scene and its simulation, the surface picker, the drag tool, the script
/// runner) and runs the frame loop in the canonical order poll, new frame, build UI, simulate,
/// surface, render, swap, with per-stage timing. The simulation steps on its own thread
/// (SimWorker, app/sim_worker.hpp) in windowed runs: the UI queues what changes the simulation
/// (App::post) and touches the simulation only in its turn between steps ("simulate" and
/// "surface"); headless, --frames and --script runs step in lockstep, one step per frame.
/// Files: app.cpp (frame loop, loading, surface upload, render), input.cpp (mouse/keyboard,
/// picking, drag, pin brush), app_script.cpp (--script actions), app_sim.cpp (the step, the
/// queue, a turn's step results; mesh resolution, --progress), app_record.cpp (recording the
/// animation), app_color_range.cpp (colour range), app_supports.cpp (ground, pin planes, the
/// no-support warning), app_files.cpp (scene files, saved states), app_surface.cpp (the curved
/// p >= 2 surface, interop registration), edit_session.cpp (cut/refine/undo), app_cut.cpp (cut
/// mode's stroke: progressive cutting, cut_stroke.hpp), stats.cpp (statistics, --stats).

#include "camera.hpp"
#include "core/error.hpp"
#include "curved_surface.hpp"
#include "cut_stroke.hpp"
#include "edit_session.hpp"
#include "gl_context.hpp"
#include "gui.hpp"
#include "input.hpp"
#include "interop.hpp"
#include "mesh/cut.hpp"
#include "picking.hpp"
#include "recorder.hpp"
#include "renderer.hpp"
#include "resource_paths.hpp"
#include "scene.hpp"
#include "script.hpp"
#include "script_runner.hpp"
#include "sim/convergence.hpp"
#include "sim/scene_file.hpp"
#include "sim/state_file.hpp"
#include "sim_driver.hpp"
#include "sim_snapshot.hpp"
#include "sim_worker.hpp"
#include "snapshot_exchange.hpp"
#include "stats.hpp"
#include "supports.hpp"
#include "timings.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace edn {

/// Command-line options of `elastodyn`.
struct AppOptions {
    std::optional<std::filesystem::path> scene;      ///< --scene; default scene when absent
    std::int64_t frames = 0;                         ///< --frames: exit after N frames; 0 = run
    bool headless = false;                           ///< --headless: EGL, no window
    std::optional<std::filesystem::path> screenshot; ///< --screenshot: last frame (.png, .ppm)
    std::optional<std::filesystem::path> timings;    ///< --timings: per-frame CSV
    int width = 1280;                                ///< --width
    int height = 720;                                ///< --height
    bool show_gui = true;                            ///< false with --no-gui
    bool show_help = false;                          ///< --help
    std::optional<std::filesystem::path> script;     ///< --script: timed actions (JSON)
    std::optional<std::filesystem::path> stats;      ///< --stats: final state summary (JSON)
    std::optional<ColorMode> color;                  ///< --color: surface colour
    bool paused = false;                             ///< --paused: start without stepping
    std::optional<Backend> backend;                  ///< --backend: simulation backend
    bool interop = true; ///< false with --no-interop: glBufferSubData also for the CUDA backend
    InteropOptions interop_options;                  ///< --interop-mapped, --interop-profile
    std::optional<std::filesystem::path> shader_dir; ///< --shader-dir: replaces the shaders folder
    std::optional<double> frame_budget_ms; ///< --frame-budget-ms: Newton's budget per frame
    /// --sim-thread / --lockstep: step on the worker thread or once per frame on the UI thread;
    /// unset: the thread for windowed runs without --frames or --script, else lockstep.
    std::optional<bool> sim_thread;
    /// --full-resolution: OBJ scenes meshed with TetGen's quality bound also on the CPU backend.
    bool full_resolution = false;
    bool progress = false; ///< --progress: a line on stderr every 2 s and at the end
    /// --record DIR (record from the first frame), --record-every K, --record-outputs LIST (the
    /// Record button's and the script's options too); dir empty without --record.
    std::optional<RecordOptions> record;
    /// simulate's settings options as given (name without "--", value; "" for flags), applied
    /// over default_app_settings() by sim/settings_options.hpp's parser.
    std::vector<std::pair<std::string, std::string>> settings;
};

/// TetGen radius-edge bound of the full-resolution mesh (the CLI's default; bunny: 28.7K tets).
inline constexpr float kFullResolutionQuality = 1.4f;
/// The CPU backend's default: no quality refinement, TetGen keeps to the surface's vertices
/// (bunny: 3.9K tets), so a 2-core machine steps it interactively.
inline constexpr float kInteractiveCpuQuality = 0.0f;

/// Whether `options` step on the simulation thread (else lockstep, one step per frame).
bool uses_sim_thread(const AppOptions& options);

/// Newton's wall-clock budget per step in the app [ms]: one 60 Hz frame. A step that iterated to
/// the cap would take seconds (in lockstep runs freezing the window; on the simulation thread
/// delaying every queued edit); with the budget a hard step ends unconverged (the overlay says
/// so) and the next continues.
inline constexpr double kAppFrameBudgetMs = 16.0;

/// The budget per step when the simulation has its own thread [ms]: the window stays at the
/// display rate whatever a step takes, so the budget only bounds how long queued edits wait;
/// steps that need more than a 60 Hz frame (p >= 2, or the CPU backend on 2 cores) then converge
/// instead of ending after one Newton iteration.
inline constexpr double kThreadedStepBudgetMs = 100.0;

/// The display period of headless runs with the simulation on its own thread (a 60 Hz vsync).
inline constexpr std::chrono::microseconds kHeadlessFramePeriod{16667};

/// The app's default simulation: SimulationSettings' defaults (the CLI's) plus the frame budget.
SimulationSettings default_app_settings();

/// What the loading worker hands back: a scene and, when its settings allowed, its Simulation.
struct LoadedScene {
    std::unique_ptr<Scene> scene;           ///< the loaded scene
    std::unique_ptr<Simulation> simulation; ///< null when building it failed
    std::string simulation_error;           ///< why, when it failed
    std::optional<SceneFile> scene_file;    ///< the scene file it came from (pins, actions)
    /// The saved state it came from (its pins, ground, drag; mesh and node arrays moved out).
    std::optional<SimulationState> state;
};

/// Loads a mesh (OBJ meshed with `options`) or a scene file (is_scene_file) and builds its
/// Simulation with `settings` (a scene's: load_scene_file_with_simulation). Throws edn::Error for
/// a bad file; a Simulation that cannot be built is reported in simulation_error.
LoadedScene load_with_simulation(const std::filesystem::path& path,
                                 const TetrahedralizeOptions& options,
                                 const SimulationSettings& settings,
                                 const std::vector<std::pair<std::string, std::string>>& overrides);

/// Whether `path` names a scene file (.json) rather than a mesh (app/app_files.cpp).
bool is_scene_file(const std::filesystem::path& path);

/// Whether `path` names a saved state (.edns).
bool is_state_file(const std::filesystem::path& path);

/// Reads a saved state and restores its Simulation (on the CPU backend when it was saved with
/// CUDA and no device is usable here). Throws edn::Error; nothing is half-loaded.
LoadedScene load_state_with_simulation(const std::filesystem::path& path);

/// The settings a scene file is read onto in the app: default_app_settings() with the backend
/// and frame budget of `current` (the machine's and the run's, not the scene's) and no ground
/// (a scene without "ground" has none, as in the CLI).
SimulationSettings scene_defaults(const SimulationSettings& current);

/// Loads a scene file, its mesh and a Simulation with its settings (read onto
/// scene_defaults(current), then the command line's `overrides`). Throws edn::Error for a bad
/// scene or mesh; a Simulation that cannot be built is reported in simulation_error.
LoadedScene
load_scene_file_with_simulation(const std::filesystem::path& path,
                                const SimulationSettings& current,
                                const std::vector<std::pair<std::string, std::string>>& overrides);

/// Where a frame's surface upload reads the simulation's state (app_surface.cpp): the
/// simulation itself in the UI's turn, or the latest SimSnapshot between turns. The functions
/// are called only where the upload needs them (a host copy of device data costs a transfer).
struct SurfaceSource {
    bool device = false;                         ///< CUDA backend (device_positions is set)
    const float* device_positions = nullptr;     ///< CUDA: 3 floats per node
    std::function<const float*()> device_stress; ///< CUDA: per-cell von Mises
    std::function<const std::vector<double>&()> positions; ///< host node positions, 3 per node
    std::function<const std::vector<double>&()> stress;    ///< host per-cell von Mises
    std::optional<std::pair<glm::vec3, glm::vec3>> drag;   ///< grabbed point and target
};

/// The interactive application. Construction does nothing heavy; run() does the work.
class App {
public:
    /// Keeps the options; nothing is opened yet.
    explicit App(AppOptions options);
    ~App();
    App(const App&) = delete;
    App& operator=(const App&) = delete;

    /// Runs until the window closes, Esc, or --frames; returns the process exit code.
    /// Headless, errors propagate as edn::Error; windowed, errors after start-up go to the GUI.
    int run();

private:
    // Frame loop and scenes (app.cpp).
    void start();
    void choose_mesh_resolution();
    void load_initial_scene();
    void show_scene(LoadedScene loaded);
    void upload_scene(bool fit_camera = true);
    void start_loading(const std::filesystem::path& path);
    void poll_loading();
    void rebuild_simulation(const SimulationSettings& settings);
    void report_error(const std::string& message);
    void pin_below_fraction(float fraction);
    void frame(bool last_frame);
    void print_progress(bool done);
    void new_ui_frame();
    void apply(const GuiActions& actions);
    void post(SimWorker::Command command);
    void sync_worker();
    void step_simulation();
    void fill_snapshot(SimDriver& sim);
    void simulate(const SimWorker::Turn& turn);
    void take_step_results();
    // The surface upload, in a turn or from the latest snapshot (app_surface.cpp).
    void update_surface();
    void show_snapshot();
    void upload_surface(const SurfaceSource& source, bool in_turn);
    bool sync_curved_surface();
    bool upload_with_interop(bool device);
    void copy_surface_positions(const std::vector<double>& x);
    void refresh_surface_positions();
    void render(bool last_frame);
    // The colour range of the surface scalars (app_color_range.cpp).
    void update_color_range(bool device_scalars, const SurfaceSource& source);
    void shutdown();
    // Edits through the session; the panel's message and the scene re-upload (app.cpp). A cut
    // is prepared off the frame and committed in a later turn (app_cut.cpp): threaded, in the
    // first turn after its preparation finished (poll_cuts); lockstep (headless, --frames,
    // --script), waited for and committed in the turn that asked for it, so runs reproduce.
    bool cut(const CutPlane& plane);
    void start_cut(const CutPlane& plane, bool piece);
    void poll_cuts();
    void commit_cuts(bool wait);
    bool refine(const std::optional<Vec3>& center, double radius, int levels);
    bool undo();
    void edited(const EditResult& result, bool keep_stroke = false);
    double default_refine_radius() const;
    // Input and picking (input.cpp).
    void handle_input();
    void handle_mouse();
    ViewState view_state() const;
    std::optional<SurfaceHit> pick(const glm::vec2& pixel);
    std::optional<Vec3> pick_world(const glm::vec2& pixel);
    void begin_drag_at(const glm::vec2& pixel, double radius);
    void end_drag();
    void set_drag_target(const glm::vec3& target);
    void clear_drag_target();
    void paint_pins(const glm::vec2& pixel, bool pin);
    std::optional<CutPlane> stroke_plane(const glm::vec2& from, const glm::vec2& to);
    // Cut mode's stroke: pressed, cut along, released, drawn (app_cut.cpp).
    void stroke_press(const glm::vec2& pixel);
    void stroke_cut_to(const glm::vec2& pixel, float min_pixels, bool last);
    void stroke_release(const glm::vec2& pixel);
    void stroke_cancel();
    bool cut_stroke_piece(const glm::vec2& from, const glm::vec2& to, bool last);
    void stroke_mouse(const glm::vec2& mouse, bool pressed, bool down);
    void draw_stroke() const;
    // Recording the animation (app_record.cpp).
    void init_recording();
    RecordOptions record_options() const;
    void toggle_recording();
    void start_pending_recording();
    void start_recording(const RecordOptions& options);
    void stop_recording();
    void record_picture();
    void finish_recording();
    // --script (app_script.cpp).
    void apply_script();
    // Scene files and saved states (app_files.cpp).
    void apply_file_actions(const GuiActions& actions);
    void apply_scene_setup(const SceneFile& scene);
    void apply_state_setup(const SimulationState& state);
    void save_scene_file(const std::filesystem::path& path);
    void save_state_file(const std::filesystem::path& path);
    void load_state_file(const std::filesystem::path& path);
    void file_outcome(std::string message, bool error);
    // Supports: ground, pin planes, the unsupported-body warning (app_supports.cpp).
    void ground_at_grid();
    void apply_ground();
    void pin_plane(const PinPlane& plane);
    void check_supports();
    double drag_radius() const;

    AppOptions options_;
    ResourcePaths paths_;
    std::unique_ptr<GlContext> context_;
    std::unique_ptr<Renderer> renderer_;
    bool imgui_platform_ = false;
    bool imgui_renderer_ = false;
    EditSession session_;                     // the scene, its simulation, topology edits
    SurfacePicker picker_;                    // host surface positions and their BVH
    DragTool drag_;                           // the mouse (or scripted) drag spring
    ScriptRunner script_;                     // --script actions by frame
    std::vector<float> surface_scalars_;      // colour scalars of the surface vertices (unscaled)
    CurvedSurface curved_;                    // p >= 2: the tessellated, curved boundary
    ColorRange sampled_range_;                // interop: range of the last host sample
    std::int64_t sampled_range_frame_ = -1;   // interop: frame of that sample (-1: none)
    std::unique_ptr<SurfaceInterop> interop_; // registration of the surface buffer (CUDA)
    bool interop_failed_ = false;             // registration refused: glBufferSubData instead
    std::vector<unsigned> pinned_surface_;    // scratch: pinned surface vertices
    // Records the animation; declared before the worker, whose steps feed it, so it outlives it.
    Recorder recorder_;
    bool picture_due_ = false;       // the state uploaded in this frame's turn is a recorded frame
    bool recording_pending_ = false; // --record DIR: starts at the first turn with a simulation
    // What the threaded steps publish for the UI to draw between turns (the worker fills one
    // slot while the UI reads another); declared before the worker, which writes it.
    SnapshotExchange<SimSnapshot> snapshots_;
    bool publish_snapshots_ = false; // threaded: each step publishes a snapshot (set before start)
    bool snapshot_stress_ = false;   // set in turns: the snapshots carry the von Mises stress
    // The simulation thread (or lockstep stepping) and what its steps hand to the UI.
    std::unique_ptr<SimWorker> worker_;
    int cpu_threads_before_ = 0; // parallel_for's threads before the worker took one
    std::mutex step_mutex_;      // guards the three below: steps append, every UI frame takes
    std::vector<StepResult> step_results_; // written by steps, taken by take_step_results
    std::optional<Error> step_error_;      // a step's error, taken by take_step_results
    std::optional<glm::vec3> drag_target_; // threaded: the cursor's drag target for the next step
    SceneStatistics statistics_;           // the Statistics panel's, refreshed in each turn
    bool step_once_ = false;
    StepResult last_step_;
    bool stepped_ = false;
    RecentConvergence recent_convergence_{kConvergenceWindowFrames}; // the overlay's window
    ConvergenceTally run_convergence_;                               // every step, for --stats
    std::future<LoadedScene> loading_;
    std::chrono::steady_clock::time_point loading_start_;
    std::vector<std::string> errors_;     // non-fatal errors, for --stats
    std::vector<FrameTimings> recording_; // Record button
    bool screenshot_requested_ = false;
    Camera camera_;
    RenderSettings settings_;
    GuiState gui_;
    TimingRecorder timings_;
    std::int64_t frame_index_ = 0;
    bool stroking_ = false;            // cut mode: a stroke is being drawn (the UI's view)
    glm::vec2 stroke_from_{0.0f};      // cut stroke start (pixels)
    glm::vec2 stroke_to_{0.0f};        // cut stroke end: the cursor (pixels)
    CutStroke stroke_;                 // the stroke as the turns cut it (cut_stroke.hpp)
    bool stroke_piece_queued_ = false; // a stroke piece is posted and not yet cut
    bool cut_commit_posted_ = false;   // a prepared cut's commit is posted to the next turn
    bool quit_ = false;
    bool support_warned_ = false; // the headless no-support warning was printed
    // --progress: when the run started and the last line was printed.
    std::chrono::steady_clock::time_point run_start_;
    std::chrono::steady_clock::time_point last_progress_;
    // Vertices of the mesh as loaded: cuts and refinements append theirs, so pins below this
    // index are the loaded mesh's vertices (what Save scene can refer to).
    Index loaded_vertices_ = 0;
};

} // namespace edn

#pragma once
/// The app: owns the context, renderer, camera, GUI state and scene, and runs the frame loop
/// in the canonical order poll, new frame, build UI, simulate, render, swap.

#include "camera.hpp"
#include "gl_context.hpp"
#include "gui.hpp"
#include "interop.hpp"
#include "mesh/cut.hpp"
#include "picking.hpp"
#include "renderer.hpp"
#include "resource_paths.hpp"
#include "scene.hpp"
#include "script.hpp"
#include "sim_driver.hpp"
#include "timings.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <future>
#include <memory>
#include <optional>
#include <string>
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
};

/// The app's default simulation: soft neo-Hookean p = 1, so the bunny wobbles visibly.
SimulationSettings default_app_settings();

/// What the loading worker hands back: a scene and, when its settings allowed, its Simulation.
struct LoadedScene {
    std::unique_ptr<Scene> scene;           ///< the loaded scene
    std::unique_ptr<Simulation> simulation; ///< null when building it failed
    std::string simulation_error;           ///< why, when it failed
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
    void start();
    void load_initial_scene();
    void show_scene(LoadedScene loaded);
    void upload_scene(bool fit_camera = true);
    void start_loading(const std::filesystem::path& path);
    void poll_loading();
    void apply_script();
    void rebuild_simulation(const SimulationSettings& settings);
    void report_error(const std::string& message);
    void pin_below_fraction(float fraction);
    void handle_mouse();
    void begin_drag_at(const glm::vec2& pixel);
    void begin_drag_vertex(Index vertex);
    void move_drag(const glm::vec2& pixel);
    void move_drag_to(const glm::vec3& target);
    void end_drag();
    void paint_pins(const glm::vec2& pixel, bool pin);
    std::optional<CutPlane> stroke_plane(const glm::vec2& from, const glm::vec2& to);
    bool cut(const CutPlane& plane);
    bool refine(const std::optional<Vec3>& center, double radius, int levels);
    std::optional<Vec3> pick_world(const glm::vec2& pixel);
    double default_refine_radius() const;
    void topology_changed(const TopologyChangeRecord& record);
    bool undo_cut();
    void attach_simulation(std::unique_ptr<Simulation> simulation);
    void drop_simulation();
    std::vector<TopologyChangeRecord> topology_changes() const;
    std::optional<SurfaceHit> pick(const glm::vec2& pixel);
    glm::mat4 view_projection() const;
    glm::vec2 viewport() const;
    glm::vec3 grabbed_point() const;
    void update_surface();
    bool upload_with_interop();
    void refresh_surface_positions();
    void write_stats(const std::filesystem::path& path) const;
    void frame(bool last_frame);
    void new_ui_frame();
    void handle_input();
    void apply(const GuiActions& actions);
    void simulate();
    void render(bool last_frame);
    void shutdown();
    SceneStatistics statistics() const;

    AppOptions options_;
    ResourcePaths paths_;
    std::unique_ptr<GlContext> context_;
    std::unique_ptr<Renderer> renderer_;
    bool imgui_platform_ = false;
    bool imgui_renderer_ = false;
    std::unique_ptr<Scene> scene_;
    std::unique_ptr<SimDriver> sim_;           // the scene's simulation (null when it failed)
    std::vector<glm::vec3> surface_positions_; // current positions of the surface vertices
    std::vector<float> surface_scalars_;       // colour scalars of the surface vertices (unscaled)
    bool surface_positions_stale_ = false;     // interop wrote the buffer; host copy is old
    std::unique_ptr<SurfaceInterop> interop_;  // registration of the surface buffer (CUDA)
    bool interop_failed_ = false;              // registration refused: glBufferSubData instead
    std::vector<unsigned> pinned_surface_;     // scratch: pinned surface vertices
    TriangleBvh bvh_;
    bool bvh_dirty_ = true;   // positions changed since the last refit
    bool dragging_ = false;   // a drag spring follows the mouse
    float drag_depth_ = 0.0f; // view depth of the grabbed point
    bool step_once_ = false;
    StepResult last_step_;
    bool stepped_ = false;
    std::future<LoadedScene> loading_;
    std::chrono::steady_clock::time_point loading_start_;
    std::vector<ScriptAction> script_;
    std::size_t next_action_ = 0;
    std::vector<std::string> errors_;     // non-fatal errors, for --stats
    std::vector<FrameTimings> recording_; // Record button
    bool screenshot_requested_ = false;
    Camera camera_;
    RenderSettings settings_;
    GuiState gui_;
    TimingRecorder timings_;
    std::int64_t frame_index_ = 0;
    bool stroking_ = false;       // cut mode: a stroke is being drawn
    glm::vec2 stroke_from_{0.0f}; // cut stroke start (pixels)
    glm::vec2 stroke_to_{0.0f};   // cut stroke end (pixels)
    // Cuts, refinements and undos of simulations a scene load replaced (for --stats); the
    // current simulation keeps its own (Simulation::topology_changes).
    std::vector<TopologyChangeRecord> earlier_changes_;
    bool quit_ = false;
};

} // namespace edn

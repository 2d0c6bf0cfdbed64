#pragma once
/// The app: owns the context, renderer, camera, GUI state and scene, and runs the frame loop
/// in the canonical order poll, new frame, build UI, simulate, render, swap.

#include "camera.hpp"
#include "gl_context.hpp"
#include "gui.hpp"
#include "renderer.hpp"
#include "resource_paths.hpp"
#include "scene.hpp"
#include "timings.hpp"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>

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
    void show_scene(std::optional<Scene> scene);
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
    std::optional<Scene> scene_;
    std::vector<glm::vec3> surface_positions_; // current positions of the surface vertices
    Camera camera_;
    RenderSettings settings_;
    GuiState gui_;
    TimingRecorder timings_;
    std::int64_t frame_index_ = 0;
    bool quit_ = false;
};

} // namespace edn

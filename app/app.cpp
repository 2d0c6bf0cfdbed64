#include "app.hpp"

#include "core/atomic_file.hpp"
#include "core/device.hpp"
#include "core/error.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <glad/gl.h>
#include <glm/geometric.hpp>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>
#include <iostream>
#include <limits>

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

/// Cuts and refinements Ctrl+Z can take back; each snapshot holds a mesh and its node state.
constexpr std::size_t kMaxUndo = 8;

/// Largest mesh a refinement may produce in the app (cells): beyond it a frame takes seconds
/// and the matrix gigabytes.
constexpr std::int64_t kMaxRefineCells = 4'000'000;

/// Strokes shorter than this (pixels) are clicks, not cuts.
constexpr float kMinStrokePixels = 3.0f;

std::string gl_description(const std::string& platform) {
    auto text = [](GLenum name) {
        const auto* value = reinterpret_cast<const char*>(glGetString(name));
        return std::string(value ? value : "?");
    };
    return "OpenGL " + text(GL_VERSION) + " on " + text(GL_RENDERER) + " (" + platform + ")";
}

glm::vec3 to_glm(const Vec3& v) {
    return {static_cast<float>(v[0]), static_cast<float>(v[1]), static_cast<float>(v[2])};
}

LoadedScene load_with_simulation(const std::filesystem::path& path,
                                 const TetrahedralizeOptions& options,
                                 const SimulationSettings& settings) {
    LoadedScene loaded;
    loaded.scene = std::make_unique<Scene>(load_scene(path, options));
    try {
        loaded.simulation = SimDriver::build(*loaded.scene, settings);
    } catch (const Error& error) {
        loaded.simulation_error = error.what();
    }
    return loaded;
}

std::string timestamp() {
    const std::time_t now = std::time(nullptr);
    char text[32];
    std::strftime(text, sizeof(text), "%Y%m%d-%H%M%S", std::localtime(&now));
    return text;
}

/// The app's topology changes as --stats and the GUI report them.
struct ChangeSummary {
    std::vector<TopologyChangeRecord> cuts;        ///< every cut
    std::vector<TopologyChangeRecord> refinements; ///< every brush or uniform refinement
    std::int64_t undos = 0;                        ///< undos applied
    double last_repattern_ms = 0.0;                ///< of the last cut, refinement or undo
    double last_pattern_build_ms = 0.0;            ///< its pattern and summation plans
};

ChangeSummary summarize(const std::vector<TopologyChangeRecord>& changes) {
    ChangeSummary summary;
    for (const TopologyChangeRecord& record : changes) {
        if (record.kind == TopologyChangeKind::Cut) summary.cuts.push_back(record);
        if (record.kind == TopologyChangeKind::RefineSphere ||
            record.kind == TopologyChangeKind::RefineUniform)
            summary.refinements.push_back(record);
        if (record.kind == TopologyChangeKind::Undo) ++summary.undos;
        summary.last_repattern_ms = record.repattern_ms;
        summary.last_pattern_build_ms = record.pattern_build_ms;
    }
    return summary;
}

} // namespace

SimulationSettings default_app_settings() {
    SimulationSettings settings;
    settings.order = 1;
    settings.material = Material::NeoHookean;
    settings.young = 1e5;
    settings.poisson = 0.3;
    settings.density = 1000;
    settings.dt = 1.0 / 60.0;
    settings.integrator = Integrator::BackwardEuler;
    settings.max_newton_iterations = 3;
    settings.pcg.relative_tolerance = 1e-3;
    settings.pcg.max_iterations = 100;
    settings.gravity = {0.0, 0.0, -9.81};
    settings.mass_damping = 0.2;
    return settings;
}

App::App(AppOptions options)
    : options_(std::move(options)),
      timings_(options_.frames > 0 ? static_cast<std::size_t>(options_.frames)
                                   : kDefaultTimingFrames) {
    gui_.settings = default_app_settings();
    if (options_.color) gui_.color_mode = *options_.color;
    gui_.paused = options_.paused;
    // A GPU when there is one: the CPU backend is the fallback, not the default.
    if (options_.backend)
        gui_.settings.backend = *options_.backend;
    else if (edn::cuda_device_available())
        gui_.settings.backend = edn::Backend::Cuda;
}

App::~App() {
    shutdown();
}

int App::run() {
    start();
    while (!quit_) {
        const bool last_frame = options_.frames > 0 && frame_index_ + 1 >= options_.frames;
        frame(last_frame);
        ++frame_index_;
        if (last_frame) quit_ = true;
    }
    if (options_.timings) timings_.write_csv(*options_.timings);
    if (options_.stats) write_stats(*options_.stats);
    shutdown();
    return 0;
}

void App::start() {
    paths_ = find_resource_paths();
    // A bad script is a usage problem of this run: fail before any expensive work.
    if (options_.script) script_ = load_script(*options_.script);
    // Headless, a bad scene is fatal: load it before paying for a GL context.
    if (options_.headless) load_initial_scene();

    context_ = create_gl_context(
        {.width = options_.width, .height = options_.height, .headless = options_.headless});
    gui_.gl_description = gl_description(context_->platform());

    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr; // no imgui.ini dropped into the working directory
    ImGui::StyleColorsDark();
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

    if (scene_) upload_scene(); // headless: loaded before the context existed
    if (!options_.headless) load_initial_scene();
}

void App::load_initial_scene() {
    std::filesystem::path path;
    try {
        path = options_.scene ? resolve_scene_path(paths_, *options_.scene)
                              : default_scene_path(paths_);
        if (options_.headless) {
            LoadedScene loaded = load_with_simulation(path, {}, gui_.settings);
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
    loading_ = std::async(std::launch::async, [path, options, settings] {
        return load_with_simulation(path, options, settings);
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
        LoadedScene loaded = loading_.get();
        gui_.scene_error.clear();
        show_scene(std::move(loaded));
    } catch (const Error& error) {
        gui_.scene_error = error.what(); // keep showing the current scene
    }
}

void App::show_scene(LoadedScene loaded) {
    end_drag();
    stroking_ = false;
    drop_simulation(); // with its undo history: snapshots belong to the previous scene
    scene_ = std::move(loaded.scene);
    stepped_ = false;
    if (!scene_) {
        interop_.reset();
        if (renderer_) renderer_->clear_surface();
        surface_positions_.clear();
        return;
    }
    if (loaded.simulation) {
        attach_simulation(std::move(loaded.simulation));
        gui_.sim_error.clear();
        gui_.drag_stiffness = static_cast<float>(kDragStiffnessPerKg * sim_->total_mass());
        pin_below_fraction(kDefaultPinFraction);
    } else {
        gui_.sim_error = loaded.simulation_error;
    }
    if (gui_.scene_error.empty()) {
        std::snprintf(gui_.scene_input.data(), gui_.scene_input.size(), "%s", scene_->path.c_str());
    }
    if (renderer_) upload_scene();
}

void App::upload_scene(bool fit_camera) {
    // set_surface reallocates the vertex buffer: the registration goes with the old one.
    interop_.reset();
    interop_failed_ = false;
    renderer_->set_surface(scene_->surface.triangles, scene_->surface.mesh_vertex.size(),
                           scene_->lower, scene_->upper);
    gather_surface_positions(scene_->mesh.positions, scene_->surface, surface_positions_);
    bvh_.build(surface_positions_, scene_->surface.triangles);
    bvh_dirty_ = false;
    surface_positions_stale_ = false;
    if (fit_camera) camera_.fit(scene_->lower, scene_->upper);
}

void App::pin_below_fraction(float fraction) {
    if (!sim_ || !scene_) return;
    sim_->pin_below(scene_->lower.z + fraction * (scene_->upper.z - scene_->lower.z));
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

        const GuiActions actions = build_gui(gui_, statistics(), timings_, settings_);
        handle_input();
        apply(actions);
        apply_script();
        if (quit_) last_frame = true;
        timings_.lap(Stage::Ui);

        simulate();
        timings_.lap(Stage::Simulate);

        update_surface();
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

glm::mat4 App::view_projection() const {
    const glm::ivec2 size = context_->framebuffer_size();
    const float aspect =
        static_cast<float>(std::max(size.x, 1)) / static_cast<float>(std::max(size.y, 1));
    return camera_.projection(aspect) * camera_.view();
}

glm::vec2 App::viewport() const {
    const ImVec2 size = ImGui::GetIO().DisplaySize;
    return {size.x, size.y};
}

std::optional<SurfaceHit> App::pick(const glm::vec2& pixel) {
    if (!scene_ || bvh_.empty()) return std::nullopt;
    refresh_surface_positions();
    if (bvh_dirty_) {
        bvh_.refit(surface_positions_);
        bvh_dirty_ = false;
    }
    return bvh_.intersect(pixel_ray(view_projection(), pixel, viewport()), surface_positions_);
}

glm::vec3 App::grabbed_point() const {
    const std::optional<DragSpring>& drag = sim_->drag();
    glm::vec3 point(0.0f);
    for (std::size_t i = 0; i < 3; ++i) {
        point +=
            static_cast<float>(drag->weights[i]) * to_glm(sim_->vertex_position(drag->vertices[i]));
    }
    return point;
}

void App::begin_drag_at(const glm::vec2& pixel) {
    if (!sim_) return;
    const std::optional<SurfaceHit> hit = pick(pixel);
    if (!hit) return;
    const Tri& tri = scene_->surface.triangles[static_cast<std::size_t>(hit->triangle)];
    DragSpring spring;
    for (std::size_t i = 0; i < 3; ++i) {
        spring.vertices[i] = scene_->surface.mesh_vertex[static_cast<std::size_t>(tri[i])];
        spring.weights[i] = hit->barycentric[static_cast<int>(i)];
    }
    spring.target = {hit->point.x, hit->point.y, hit->point.z};
    spring.stiffness = gui_.drag_stiffness;
    sim_->set_drag(spring);
    const glm::vec4 in_view = camera_.view() * glm::vec4(hit->point, 1.0f);
    drag_depth_ = -in_view.z;
    dragging_ = true;
}

void App::begin_drag_vertex(Index vertex) {
    EDN_VERIFY(sim_ && vertex >= 0 && vertex < scene_->mesh.num_vertices(), ErrorCode::Usage,
               "drag: vertex " << vertex << " out of range");
    DragSpring spring;
    spring.vertices = {vertex, vertex, vertex};
    spring.weights = {1.0, 0.0, 0.0};
    spring.target = sim_->vertex_position(vertex);
    spring.stiffness = gui_.drag_stiffness;
    sim_->set_drag(spring);
    const glm::vec4 in_view = camera_.view() * glm::vec4(to_glm(spring.target), 1.0f);
    drag_depth_ = -in_view.z;
    dragging_ = true;
}

void App::move_drag(const glm::vec2& pixel) {
    if (!dragging_ || !sim_ || !sim_->drag()) return;
    // Keep the target at the grabbed point's view depth, under the cursor.
    const Ray ray = pixel_ray(view_projection(), pixel, viewport());
    const glm::mat4 view = camera_.view();
    const glm::vec3 forward = -glm::vec3(view[0][2], view[1][2], view[2][2]);
    const float along = glm::dot(ray.direction, forward);
    if (along <= 1e-6f) return;
    const float origin_depth = glm::dot(ray.origin - camera_.eye(), forward);
    move_drag_to(ray.origin + ((drag_depth_ - origin_depth) / along) * ray.direction);
}

void App::move_drag_to(const glm::vec3& target) {
    if (!sim_ || !sim_->drag()) return;
    DragSpring spring = *sim_->drag();
    spring.target = {target.x, target.y, target.z};
    sim_->set_drag(spring);
}

void App::end_drag() {
    dragging_ = false;
    if (sim_) sim_->set_drag(std::nullopt);
}

void App::paint_pins(const glm::vec2& pixel, bool pin) {
    if (!sim_) return;
    const std::optional<SurfaceHit> hit = pick(pixel);
    if (!hit) return;
    // Brush: a sphere around the hit whose radius is brush_radius pixels at the hit's depth.
    const Ray side =
        pixel_ray(view_projection(), pixel + glm::vec2(gui_.brush_radius, 0.0f), viewport());
    const glm::vec3 side_point =
        side.origin + glm::length(hit->point - side.origin) * side.direction;
    const float radius = glm::length(side_point - hit->point);
    std::vector<Index> vertices;
    for (std::size_t i = 0; i < surface_positions_.size(); ++i) {
        if (glm::length(surface_positions_[i] - hit->point) <= radius) {
            vertices.push_back(scene_->surface.mesh_vertex[i]);
        }
    }
    sim_->set_vertices_pinned(vertices, pin);
}

void App::handle_mouse() {
    const ImGuiIO& io = ImGui::GetIO();
    const glm::vec2 mouse(io.MousePos.x, io.MousePos.y);
    if (!io.WantCaptureMouse) {
        const glm::vec2 delta(io.MouseDelta.x, io.MouseDelta.y);
        if (ImGui::IsMouseDown(ImGuiMouseButton_Right)) camera_.orbit(delta);
        if (ImGui::IsMouseDown(ImGuiMouseButton_Middle)) {
            camera_.pan(delta, context_->framebuffer_size().y);
        }
        if (io.MouseWheel != 0.0f) camera_.zoom(io.MouseWheel);
        if (gui_.cut_mode) {
            if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) {
                stroking_ = true;
                stroke_from_ = stroke_to_ = mouse;
            }
        } else if (gui_.refine_mode) {
            if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) {
                if (const std::optional<Vec3> point = pick_world(mouse)) {
                    refine(point, default_refine_radius(), gui_.refine_levels);
                } else {
                    gui_.cut_message = "refine: click on the surface";
                }
            }
        } else if (io.KeyShift && ImGui::IsMouseDown(ImGuiMouseButton_Left) && !dragging_) {
            paint_pins(mouse, !io.KeyCtrl);
        } else if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) {
            begin_drag_at(mouse);
        }
    }
    if (stroking_) {
        stroke_to_ = mouse;
        if (ImGui::IsMouseDown(ImGuiMouseButton_Left)) {
            // The stroke is drawn over the scene and the panels until release.
            ImGui::GetForegroundDrawList()->AddLine(ImVec2(stroke_from_.x, stroke_from_.y),
                                                    ImVec2(stroke_to_.x, stroke_to_.y),
                                                    IM_COL32(255, 150, 40, 255), 2.0f);
        } else {
            stroking_ = false;
            if (const std::optional<CutPlane> plane = stroke_plane(stroke_from_, stroke_to_))
                cut(*plane);
        }
    }
    if (dragging_) {
        if (ImGui::IsMouseDown(ImGuiMouseButton_Left)) {
            move_drag(mouse);
        } else {
            end_drag();
        }
    }
}

void App::handle_input() {
    if (imgui_platform_) handle_mouse(); // headless has no mouse: scripts drive it
    const ImGuiIO& io = ImGui::GetIO();
    if (!io.WantCaptureKeyboard) {
        // ImGui 1.86 indexes KeysDown by the platform's key codes; GLFW's letter codes are the
        // upper-case ASCII values, space is ' '.
        if (ImGui::IsKeyPressed('F', false) && scene_) camera_.fit(scene_->lower, scene_->upper);
        if (ImGui::IsKeyPressed(' ', false)) gui_.paused = !gui_.paused;
        if (ImGui::IsKeyPressed('S', true)) step_once_ = true;
        if (ImGui::IsKeyPressed('R', false) && sim_) sim_->reset();
        if (io.KeyCtrl && ImGui::IsKeyPressed('Z', false)) undo_cut();
        if (!io.KeyCtrl && ImGui::IsKeyPressed('C', false)) {
            gui_.cut_mode = !gui_.cut_mode;
            if (gui_.cut_mode) gui_.refine_mode = false; // one left-click tool at a time
            stroking_ = false;
        }
        if (ImGui::IsKeyPressed('B', false)) {
            gui_.refine_mode = !gui_.refine_mode;
            if (gui_.refine_mode) gui_.cut_mode = false;
            stroking_ = false;
        }
        if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false)) quit_ = true;
    }
}

void App::report_error(const std::string& message) {
    gui_.sim_error = message;
    errors_.push_back(message);
    // Headless there is no panel to show it in: one line on stderr, and the run goes on.
    if (options_.headless) std::cerr << "elastodyn: warning: " << message << '\n';
}

void App::rebuild_simulation(const SimulationSettings& settings) {
    if (!sim_) {
        if (!scene_) return;
        try {
            attach_simulation(SimDriver::build(*scene_, settings));
            gui_.sim_error.clear();
            pin_below_fraction(kDefaultPinFraction);
        } catch (const Error& error) {
            report_error(error.what());
        }
        return;
    }
    try {
        sim_->rebuild(settings);
        gui_.sim_error.clear();
        // New Simulation (order, backend): register again rather than trust the old state.
        interop_.reset();
        interop_failed_ = false;
    } catch (const Error& error) {
        report_error(error.what());
    }
    // The panel shows what runs: after a failure the old settings come back.
    gui_.settings = sim_->simulation().settings();
}

void App::apply(const GuiActions& actions) {
    if (actions.load_scene && !gui_.loading) {
        try {
            start_loading(resolve_scene_path(paths_, gui_.scene_input.data()));
        } catch (const Error& error) {
            gui_.scene_error = error.what();
        }
    }
    if (actions.fit_view && scene_) camera_.fit(scene_->lower, scene_->upper);
    if (actions.reset_view) camera_.reset();
    if (actions.reload_shaders) {
        try {
            renderer_->load_shaders(paths_.shaders);
            gui_.render_error.clear();
        } catch (const Error& error) {
            gui_.render_error = error.what();
        }
    }
    if (actions.settings_changed) rebuild_simulation(gui_.settings);
    if (actions.step_once) step_once_ = true;
    if (actions.reset_simulation && sim_) sim_->reset();
    if (actions.pin_below) pin_below_fraction(gui_.pin_height);
    if (actions.clear_pins && sim_) sim_->clear_pins();
    if (actions.screenshot) screenshot_requested_ = true;
    if (actions.refine_uniform) refine(std::nullopt, 0.0, 1);
    if (actions.undo) undo_cut();
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

void App::apply_script() {
    while (next_action_ < script_.size() && script_[next_action_].frame <= frame_index_) {
        const ScriptAction& action = script_[next_action_++];
        SimulationSettings settings = sim_ ? sim_->simulation().settings() : gui_.settings;
        bool changed = false;
        auto set = [&changed](auto& field, const auto& value) {
            if (value) {
                field = *value;
                changed = true;
            }
        };
        set(settings.order, action.order);
        set(settings.summation, action.summation);
        set(settings.preconditioner, action.preconditioner);
        set(settings.material, action.material);
        set(settings.backend, action.backend);
        set(settings.integrator, action.integrator);
        set(settings.young, action.young);
        set(settings.poisson, action.poisson);
        set(settings.density, action.density);
        set(settings.dt, action.dt);
        set(settings.mass_damping, action.damping);
        set(settings.max_newton_iterations, action.newton_iterations);
        set(settings.gravity, action.gravity);
        if (changed) rebuild_simulation(settings);
        if (action.unpin_all && sim_) sim_->clear_pins();
        if (action.pin_below && sim_) sim_->pin_below(*action.pin_below);
        if (action.release) end_drag();
        if (action.drag) {
            const ScriptDrag& drag = *action.drag;
            if (drag.stiffness) gui_.drag_stiffness = static_cast<float>(*drag.stiffness);
            if (drag.from_vertex) {
                begin_drag_vertex(*drag.from_vertex);
            } else {
                begin_drag_at(glm::vec2((*drag.from_pixel)[0], (*drag.from_pixel)[1]));
                if (!dragging_) {
                    report_error("script: drag from pixel (" +
                                 std::to_string((*drag.from_pixel)[0]) + ", " +
                                 std::to_string((*drag.from_pixel)[1]) + ") misses the surface");
                }
            }
            if (dragging_ && drag.to_world) {
                move_drag_to(
                    glm::vec3((*drag.to_world)[0], (*drag.to_world)[1], (*drag.to_world)[2]));
            } else if (dragging_ && drag.to_pixel) {
                move_drag(glm::vec2((*drag.to_pixel)[0], (*drag.to_pixel)[1]));
            }
        }
        if (action.pause) gui_.paused = *action.pause;
        if (action.step) step_once_ = true;
        if (action.reset && sim_) sim_->reset();
        if (action.color) gui_.color_mode = *action.color;
        if (action.wireframe) settings_.show_wireframe = *action.wireframe;
        if (action.cut && action.cut->from_pixel) {
            const glm::vec2 from((*action.cut->from_pixel)[0], (*action.cut->from_pixel)[1]);
            const glm::vec2 to((*action.cut->to_pixel)[0], (*action.cut->to_pixel)[1]);
            if (const std::optional<CutPlane> plane = stroke_plane(from, to)) {
                cut(*plane);
            } else {
                report_error("script: cut stroke too short or behind the camera");
            }
        } else if (action.cut) {
            CutPlane plane;
            plane.point = action.cut->point;
            plane.normal = action.cut->normal;
            if (action.cut->radius) plane.radius = *action.cut->radius;
            cut(plane);
        }
        if (action.refine) {
            const ScriptRefine& brush = *action.refine;
            const double radius = brush.radius ? *brush.radius : default_refine_radius();
            const int levels = brush.levels ? *brush.levels : gui_.refine_levels;
            if (brush.pixel) {
                const glm::vec2 pixel((*brush.pixel)[0], (*brush.pixel)[1]);
                if (const std::optional<Vec3> point = pick_world(pixel)) {
                    refine(point, radius, levels);
                } else {
                    char text[96];
                    std::snprintf(text, sizeof(text),
                                  "script: refine at pixel (%g, %g) misses the surface",
                                  static_cast<double>(pixel.x), static_cast<double>(pixel.y));
                    report_error(text);
                }
            } else {
                refine(brush.center, radius, levels);
            }
        }
        if (action.refine_uniform) refine(std::nullopt, 0.0, 1);
        if (action.undo) undo_cut();
    }
}

std::optional<CutPlane> App::stroke_plane(const glm::vec2& from, const glm::vec2& to) {
    if (!scene_ || glm::length(to - from) < kMinStrokePixels) return std::nullopt;
    const glm::mat4 view_proj = view_projection();
    const glm::vec2 size = viewport();
    const glm::mat4 view = camera_.view();
    const glm::vec3 forward = -glm::vec3(view[0][2], view[1][2], view[2][2]);
    const glm::vec3 eye = camera_.eye();
    const glm::vec2 middle = 0.5f * (from + to);
    // The blade sits at the depth of the surface under the stroke's middle (else the orbit
    // target): there the stroke's world length is what the user sees.
    float depth = glm::dot(camera_.target() - eye, forward);
    if (const std::optional<SurfaceHit> hit = pick(middle))
        depth = glm::dot(hit->point - eye, forward);
    auto at_depth = [&](const glm::vec2& pixel) -> std::optional<glm::vec3> {
        const Ray ray = pixel_ray(view_proj, pixel, size);
        const float along = glm::dot(ray.direction, forward);
        if (along <= 1e-6f) return std::nullopt;
        return ray.origin + ((depth - glm::dot(ray.origin - eye, forward)) / along) * ray.direction;
    };
    const std::optional<glm::vec3> a = at_depth(from);
    const std::optional<glm::vec3> b = at_depth(to);
    const std::optional<glm::vec3> m = at_depth(middle);
    if (!a || !b || !m) return std::nullopt;
    // The plane holds the stroke and the view ray through its middle, so it holds the eye and
    // both end rays: the stroke swept along the view.
    const glm::vec3 normal = glm::cross(*b - *a, pixel_ray(view_proj, middle, size).direction);
    if (!(glm::length(normal) > 0.0f)) return std::nullopt;
    CutPlane plane;
    plane.point = {m->x, m->y, m->z};
    plane.normal = {normal.x, normal.y, normal.z};
    plane.radius = 0.5 * static_cast<double>(glm::length(*b - *a));
    return plane;
}

bool App::cut(const CutPlane& plane) {
    if (!sim_ || !scene_) {
        gui_.cut_message = "cut: no simulation to cut";
        report_error(gui_.cut_message);
        return false;
    }
    try {
        const TopologyChangeRecord record = sim_->cut(plane, frame_index_);
        topology_changed(record);
        gui_.cut_message = "cut: " + std::to_string(record.cut_faces) + " faces, " +
                           std::to_string(record.duplicated_vertices) + " vertices duplicated, " +
                           std::to_string(sim_->simulation().components()) + " components";
        return true;
    } catch (const Error& error) {
        gui_.cut_message = error.what(); // the current scene stays
        report_error(error.what());
        return false;
    }
}

double App::default_refine_radius() const {
    if (!scene_) return 0.0;
    return static_cast<double>(gui_.refine_radius_fraction *
                               glm::length(scene_->upper - scene_->lower));
}

std::optional<Vec3> App::pick_world(const glm::vec2& pixel) {
    const std::optional<SurfaceHit> hit = pick(pixel);
    if (!hit) return std::nullopt;
    return Vec3{hit->point.x, hit->point.y, hit->point.z};
}

bool App::refine(const std::optional<Vec3>& center, double radius, int levels) {
    if (!sim_ || !scene_) {
        gui_.cut_message = "refine: no simulation to refine";
        report_error(gui_.cut_message);
        return false;
    }
    try {
        const TopologyChangeRecord record =
            center ? sim_->refine_sphere(*center, radius, levels, frame_index_)
                   : sim_->refine_uniform(frame_index_);
        topology_changed(record);
        char text[256];
        std::snprintf(text, sizeof(text),
                      "refine%s: %d -> %d cells, worst dihedral %.1f deg, refine %.2f ms, "
                      "re-pattern %.2f ms (pattern %.2f ms)",
                      center ? "" : " 1->8", record.cells_before, record.cells_after,
                      record.min_dihedral_deg, record.refine_ms, record.repattern_ms,
                      record.pattern_build_ms);
        gui_.cut_message = text;
        return true;
    } catch (const Error& error) {
        gui_.cut_message = error.what(); // the current scene stays
        report_error(error.what());
        return false;
    }
}

bool App::undo_cut() {
    if (!sim_ || sim_->simulation().undo_depth() == 0) {
        gui_.cut_message = "undo: no cut to undo";
        report_error(gui_.cut_message);
        return false;
    }
    try {
        topology_changed(sim_->undo(frame_index_));
        gui_.cut_message = "undo: back to " + std::to_string(scene_->mesh.num_vertices()) +
                           " vertices, " + std::to_string(scene_->mesh.num_cells()) + " cells, " +
                           std::to_string(sim_->simulation().components()) + " components";
        return true;
    } catch (const Error& error) {
        gui_.cut_message = error.what();
        report_error(error.what());
        return false;
    }
}

void App::topology_changed(const TopologyChangeRecord& record) {
    end_drag(); // the Simulation dropped it (its vertices are renumbered)
    stroking_ = false;
    scene_ = std::make_unique<Scene>(make_scene(scene_->path, sim_->simulation().mesh()));
    gui_.settings = sim_->simulation().settings();
    gui_.sim_error.clear();
    timings_.add_repattern(record.repattern_ms);
    // New topology: the same path as a scene change (new buffer, new interop registration), but
    // the camera stays where the user cut.
    if (renderer_) upload_scene(false);
}

void App::attach_simulation(std::unique_ptr<Simulation> simulation) {
    drop_simulation();
    sim_ = std::make_unique<SimDriver>(std::move(simulation));
    TopologyChangeOptions options;
    options.undo_depth = kMaxUndo;
    options.reject_no_op = true; // a cut or brush that changes nothing is reported, not applied
    options.max_cells = kMaxRefineCells;
    options.mesh_name = scene_ ? scene_->path.filename().string() : std::string();
    sim_->set_topology_options(std::move(options));
}

void App::drop_simulation() {
    if (!sim_) return;
    const std::vector<TopologyChangeRecord>& changes = sim_->simulation().topology_changes();
    earlier_changes_.insert(earlier_changes_.end(), changes.begin(), changes.end());
    sim_.reset();
}

std::vector<TopologyChangeRecord> App::topology_changes() const {
    std::vector<TopologyChangeRecord> all = earlier_changes_;
    if (sim_) {
        const std::vector<TopologyChangeRecord>& changes = sim_->simulation().topology_changes();
        all.insert(all.end(), changes.begin(), changes.end());
    }
    return all;
}

void App::simulate() {
    const bool run = !gui_.paused || step_once_;
    step_once_ = false;
    if (!sim_ || !run) return;
    try {
        last_step_ = sim_->step();
        stepped_ = true;
    } catch (const Error& error) {
        if (options_.headless) throw;
        gui_.sim_error = error.what();
        gui_.paused = true; // a failing step would fail again every frame
        return;
    }
    const StageTimes& t = last_step_.times;
    timings_.set_simulation({t.element, t.summation, t.pcg, t.line_search},
                            last_step_.newton_iterations, last_step_.cg_iterations);
}

void App::refresh_surface_positions() {
    if (!surface_positions_stale_ || !sim_ || !scene_) return;
    // Interop frames leave the host copy behind; picking and painting fetch it on demand.
    const std::vector<double>& x = sim_->positions();
    const BoundarySurface& surface = scene_->surface;
    surface_positions_.resize(surface.mesh_vertex.size());
    for (std::size_t i = 0; i < surface.mesh_vertex.size(); ++i) {
        const std::size_t v = 3 * static_cast<std::size_t>(surface.mesh_vertex[i]);
        surface_positions_[i] = glm::vec3(static_cast<float>(x[v]), static_cast<float>(x[v + 1]),
                                          static_cast<float>(x[v + 2]));
    }
    surface_positions_stale_ = false;
    bvh_dirty_ = true;
}

bool App::upload_with_interop() {
    if (sim_->device_positions() == nullptr || !options_.interop) {
        interop_.reset(); // CPU backend: glBufferSubData writes the buffer
        return false;
    }
    if (!interop_ && !interop_failed_) {
        const BoundarySurface& surface = scene_->surface;
        std::vector<Vec3> rest(surface.mesh_vertex.size());
        for (std::size_t i = 0; i < rest.size(); ++i)
            rest[i] = scene_->mesh.positions[static_cast<std::size_t>(surface.mesh_vertex[i])];
        try {
            interop_ = std::make_unique<SurfaceInterop>(renderer_->surface_vertex_buffer(),
                                                        surface.mesh_vertex, surface.triangles,
                                                        surface.face_cell, rest);
        } catch (const Error& error) {
            // E.g. GL on another device than CUDA (Mesa): the host path still works.
            interop_failed_ = true;
            report_error(std::string("CUDA-GL interop unavailable, using glBufferSubData: ") +
                         error.what());
        }
    }
    return interop_ != nullptr;
}

void App::update_surface() {
    if (!scene_ || !sim_) {
        surface_scalars_.clear();
        if (scene_) renderer_->update_surface(surface_positions_);
        renderer_->set_pinned_vertices({});
        renderer_->update_markers({});
        return;
    }
    const BoundarySurface& surface = scene_->surface;
    const std::size_t count = surface.mesh_vertex.size();
    const bool interop = upload_with_interop();

    // Colour scalars per surface vertex (unscaled; the shader multiplies by 1 / range). On the
    // interop path von Mises (averaged over each vertex's faces) and displacement are computed on
    // the device; on the host path they are computed here.
    const float* device_stress = interop && gui_.color_mode == ColorMode::VonMises
                                     ? sim_->device_von_mises_stress()
                                     : nullptr;
    surface_scalars_.assign(count, 0.0f);
    if (gui_.color_mode == ColorMode::VonMises && device_stress == nullptr) {
        const std::vector<double>& stress = sim_->von_mises_stress();
        std::vector<float> weight(count, 0.0f);
        for (std::size_t f = 0; f < surface.triangles.size(); ++f) {
            const float s =
                static_cast<float>(stress[static_cast<std::size_t>(surface.face_cell[f])]);
            for (Index v : surface.triangles[f]) {
                surface_scalars_[static_cast<std::size_t>(v)] += s;
                weight[static_cast<std::size_t>(v)] += 1.0f;
            }
        }
        for (std::size_t i = 0; i < count; ++i) {
            if (weight[i] > 0.0f) surface_scalars_[i] /= weight[i];
            if (!std::isfinite(surface_scalars_[i])) surface_scalars_[i] = 0.0f;
        }
    }

    float peak = 0.0f;
    if (interop) {
        const InteropScalar kind =
            gui_.color_mode == ColorMode::VonMises
                ? (device_stress != nullptr ? InteropScalar::Cells : InteropScalar::Host)
            : gui_.color_mode == ColorMode::Displacement ? InteropScalar::Displacement
                                                         : InteropScalar::None;
        peak = interop_->update(sim_->device_positions(), kind, surface_scalars_, device_stress);
        renderer_->use_surface_buffer(interop_->external_buffer());
        surface_positions_stale_ = true;
        gui_.upload_method = interop_->external_buffer() != 0
                                 ? "CUDA-GL interop, external memory (CUDA backend)"
                                 : "CUDA-GL interop, mapped buffer (CUDA backend)";
    } else {
        const std::vector<double>& x = sim_->positions();
        surface_positions_.resize(count);
        for (std::size_t i = 0; i < count; ++i) {
            const std::size_t v = 3 * static_cast<std::size_t>(surface.mesh_vertex[i]);
            surface_positions_[i] =
                glm::vec3(static_cast<float>(x[v]), static_cast<float>(x[v + 1]),
                          static_cast<float>(x[v + 2]));
        }
        surface_positions_stale_ = false;
        bvh_dirty_ = true;
        if (gui_.color_mode == ColorMode::Displacement) {
            for (std::size_t i = 0; i < count; ++i) {
                const Vec3& rest =
                    scene_->mesh.positions[static_cast<std::size_t>(surface.mesh_vertex[i])];
                const float d = glm::length(surface_positions_[i] - to_glm(rest));
                surface_scalars_[i] = std::isfinite(d) ? d : 0.0f;
            }
        }
        for (float s : surface_scalars_) peak = std::max(peak, s);
        renderer_->update_surface(surface_positions_, surface_scalars_);
        gui_.upload_method = sim_->device_positions() != nullptr
                                 ? options_.interop
                                       ? "glBufferSubData (CUDA backend, interop unavailable)"
                                       : "glBufferSubData (CUDA backend, --no-interop)"
                                 : "glBufferSubData (CPU backend)";
    }
    if (gui_.auto_range) {
        // Rise at once, decay slowly: the legend stays readable while the body wobbles.
        gui_.range_max = std::max(peak, 0.97f * gui_.range_max);
        gui_.range_max = std::max(gui_.range_max, std::numeric_limits<float>::min());
    }
    settings_.scalar_scale = 1.0f / gui_.range_max;
    settings_.use_colormap = gui_.color_mode != ColorMode::None;

    // Pins are drawn from the surface buffer, so they need no host positions either.
    const std::vector<std::uint8_t>& pins = sim_->vertex_pins();
    pinned_surface_.clear();
    for (std::size_t i = 0; i < count; ++i) {
        if (pins[static_cast<std::size_t>(surface.mesh_vertex[i])])
            pinned_surface_.push_back(static_cast<unsigned>(i));
    }
    renderer_->set_pinned_vertices(pinned_surface_);
    Markers markers;
    if (sim_->drag()) {
        const std::array<double, 3>& target = sim_->drag()->target;
        markers.drag = {grabbed_point(), glm::vec3(target[0], target[1], target[2])};
    }
    renderer_->update_markers(markers);
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
    ImGui::Render(); // also with --no-gui: the UI is built every frame, only not drawn
    if (options_.show_gui) ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    if (last_frame && options_.screenshot)
        write_image(*options_.screenshot, renderer_->read_pixels());
}

SceneStatistics App::statistics() const {
    SceneStatistics result;
    if (!scene_) return result;
    result.name = scene_->path.filename().string();
    result.vertices = scene_->mesh.num_vertices();
    result.cells = scene_->mesh.num_cells();
    result.boundary_faces = static_cast<Index>(scene_->surface.triangles.size());
    result.surface_vertices = static_cast<Index>(scene_->surface.mesh_vertex.size());
    if (sim_) {
        const Simulation& simulation = sim_->simulation();
        result.simulated = true;
        result.nodes = simulation.num_nodes();
        result.nnz_blocks = simulation.nnz_blocks();
        result.matrix_bytes = simulation.matrix_bytes();
        result.components = simulation.components();
        const ChangeSummary changes = summarize(topology_changes());
        result.cuts = static_cast<Index>(changes.cuts.size());
        if (!changes.cuts.empty()) {
            result.last_cut_faces = changes.cuts.back().cut_faces;
            result.last_duplicated = changes.cuts.back().duplicated_vertices;
        }
        result.refinements = static_cast<Index>(changes.refinements.size());
        result.last_repattern_ms = changes.last_repattern_ms;
        result.last_pattern_build_ms = changes.last_pattern_build_ms;
        result.undo_depth = simulation.undo_depth();
        result.pinned_vertices = static_cast<Index>(
            std::count(sim_->vertex_pins().begin(), sim_->vertex_pins().end(), 1));
        result.last_step = last_step_;
        result.stepped = stepped_;
    }
    return result;
}

void App::write_stats(const std::filesystem::path& path) const {
    auto number = [](double value) -> std::string {
        if (!std::isfinite(value)) return "null";
        char text[32];
        std::snprintf(text, sizeof(text), "%.17g", value);
        return text;
    };
    auto quoted = [](const std::string& text) {
        std::string out = "\"";
        for (char c : text) {
            if (c == '"' || c == '\\') {
                out += '\\';
                out += c;
            } else if (static_cast<unsigned char>(c) < 0x20) {
                char escape[8];
                std::snprintf(escape, sizeof(escape), "\\u%04x", c);
                out += escape;
            } else {
                out += c;
            }
        }
        return out + "\"";
    };
    const ChangeSummary changes = summarize(topology_changes());
    const std::size_t undo_depth = sim_ ? sim_->simulation().undo_depth() : 0;
    write_file_atomically(path, [&](std::ostream& out) {
        out << "{\n  \"frames\": " << frame_index_;
        out << ",\n  \"scene\": " << quoted(scene_ ? scene_->path.string() : "");
        if (sim_) {
            const Simulation& simulation = sim_->simulation();
            const SimulationSettings& s = simulation.settings();
            const std::vector<double>& x = sim_->positions();
            bool finite = true;
            Vec3 lower = {std::numeric_limits<double>::max(), std::numeric_limits<double>::max(),
                          std::numeric_limits<double>::max()};
            Vec3 upper = {-lower[0], -lower[1], -lower[2]};
            double max_displacement = 0.0;
            const std::vector<double>& rest = simulation.rest_positions();
            for (std::size_t i = 0; i < x.size(); i += 3) {
                double d2 = 0.0;
                for (std::size_t a = 0; a < 3; ++a) {
                    finite = finite && std::isfinite(x[i + a]);
                    lower[a] = std::min(lower[a], x[i + a]);
                    upper[a] = std::max(upper[a], x[i + a]);
                    d2 += (x[i + a] - rest[i + a]) * (x[i + a] - rest[i + a]);
                }
                max_displacement = std::max(max_displacement, std::sqrt(d2));
            }
            out << ",\n  \"order\": " << s.order;
            out << ",\n  \"material\": " << quoted(material_name(s.material));
            out << ",\n  \"summation\": " << quoted(summation_method_name(s.summation));
            out << ",\n  \"preconditioner\": " << quoted(preconditioner_name(s.preconditioner));
            out << ",\n  \"backend\": " << quoted(backend_name(s.backend));
            out << ",\n  \"upload\": " << quoted(gui_.upload_method);
            out << ",\n  \"vertices\": " << scene_->mesh.num_vertices();
            out << ",\n  \"cells\": " << scene_->mesh.num_cells();
            out << ",\n  \"nodes\": " << simulation.num_nodes();
            out << ",\n  \"components\": " << simulation.components();
            out << ",\n  \"pinned_vertices\": "
                << std::count(sim_->vertex_pins().begin(), sim_->vertex_pins().end(), 1);
            out << ",\n  \"finite\": " << (finite ? "true" : "false");
            out << ",\n  \"bbox\": {\"lower\": [" << number(lower[0]) << ", " << number(lower[1])
                << ", " << number(lower[2]) << "], \"upper\": [" << number(upper[0]) << ", "
                << number(upper[1]) << ", " << number(upper[2]) << "]}";
            out << ",\n  \"max_displacement\": " << number(max_displacement);
            out << ",\n  \"dragging\": " << (sim_->drag() ? "true" : "false");
            out << ",\n  \"last_step\": {\"newton_iterations\": " << last_step_.newton_iterations
                << ", \"cg_iterations\": " << last_step_.cg_iterations
                << ", \"final_residual\": " << number(last_step_.final_residual)
                << ", \"recovered\": " << (last_step_.recovered ? "true" : "false") << "}";
        }
        out << ",\n  \"cuts\": [";
        for (std::size_t i = 0; i < changes.cuts.size(); ++i) {
            const TopologyChangeRecord& c = changes.cuts[i];
            out << (i ? ", " : "") << "{\"frame\": " << c.frame
                << ", \"cut_faces\": " << c.cut_faces
                << ", \"duplicated_vertices\": " << c.duplicated_vertices
                << ", \"repattern_ms\": " << number(c.repattern_ms) << "}";
        }
        out << "]";
        out << ",\n  \"refinements\": [";
        for (std::size_t i = 0; i < changes.refinements.size(); ++i) {
            const TopologyChangeRecord& r = changes.refinements[i];
            out << (i ? ", " : "") << "{\"frame\": " << r.frame << ", \"uniform\": "
                << (r.kind == TopologyChangeKind::RefineUniform ? "true" : "false")
                << ", \"cells_before\": " << r.cells_before
                << ", \"cells_after\": " << r.cells_after
                << ", \"min_dihedral_deg\": " << number(r.min_dihedral_deg)
                << ", \"refine_ms\": " << number(r.refine_ms)
                << ", \"repattern_ms\": " << number(r.repattern_ms)
                << ", \"pattern_build_ms\": " << number(r.pattern_build_ms) << "}";
        }
        out << "]";
        out << ",\n  \"last_repattern_ms\": " << number(changes.last_repattern_ms);
        out << ",\n  \"last_pattern_build_ms\": " << number(changes.last_pattern_build_ms);
        out << ",\n  \"undos\": " << changes.undos;
        out << ",\n  \"undo_depth\": " << undo_depth;
        out << ",\n  \"errors\": [";
        for (std::size_t i = 0; i < errors_.size(); ++i)
            out << (i ? ", " : "") << quoted(errors_[i]);
        out << "]\n}\n";
    });
}

void App::shutdown() {
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

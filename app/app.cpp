#include "app.hpp"

#include "core/error.hpp"

#include <algorithm>
#include <cstdio>
#include <glad/gl.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>
#include <iostream>

namespace edn {
namespace {

/// Frames kept for the GUI and --timings when no --frames bound is given (~1 MB of doubles).
constexpr std::size_t kDefaultTimingFrames = 16384;

/// Frame time fed to ImGui headless, where no clock should make runs differ.
constexpr float kHeadlessFrameSeconds = 1.0f / 60.0f;

std::string gl_description(const std::string& platform) {
    auto text = [](GLenum name) {
        const auto* value = reinterpret_cast<const char*>(glGetString(name));
        return std::string(value ? value : "?");
    };
    return "OpenGL " + text(GL_VERSION) + " on " + text(GL_RENDERER) + " (" + platform + ")";
}

} // namespace

App::App(AppOptions options)
    : options_(std::move(options)),
      timings_(options_.frames > 0 ? static_cast<std::size_t>(options_.frames)
                                   : kDefaultTimingFrames) {}

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
    shutdown();
    return 0;
}

void App::start() {
    paths_ = find_resource_paths();
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

    if (!options_.headless) load_initial_scene();
    if (scene_) show_scene(std::move(scene_));
}

void App::load_initial_scene() {
    std::filesystem::path path;
    try {
        path = options_.scene ? resolve_scene_path(paths_, *options_.scene)
                              : default_scene_path(paths_);
        scene_ = load_scene(path);
        return;
    } catch (const Error& error) {
        if (options_.headless) throw;
        gui_.scene_error = error.what();
    }
    std::snprintf(gui_.scene_input.data(), gui_.scene_input.size(), "%s", path.c_str());
    // Windowed: a bad --scene falls back to the default scene, with the error on screen.
    if (options_.scene) {
        try {
            scene_ = load_scene(default_scene_path(paths_));
        } catch (const Error&) {
            // The first error is the one the user needs to see; stay with an empty scene.
        }
    }
}

void App::show_scene(std::optional<Scene> scene) {
    scene_ = std::move(scene);
    if (!scene_) {
        renderer_->clear_surface();
        surface_positions_.clear();
        return;
    }
    if (gui_.scene_error.empty()) {
        std::snprintf(gui_.scene_input.data(), gui_.scene_input.size(), "%s", scene_->path.c_str());
    }
    renderer_->set_surface(scene_->surface.triangles, scene_->surface.mesh_vertex.size(),
                           scene_->lower, scene_->upper);
    gather_surface_positions(scene_->mesh.positions, scene_->surface, surface_positions_);
    camera_.fit(scene_->lower, scene_->upper);
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
        timings_.lap(Stage::Poll);

        new_ui_frame();
        ui_frame_open = true;
        timings_.lap(Stage::NewFrame);

        const GuiActions actions = build_gui(gui_, statistics(), timings_, settings_);
        handle_input();
        apply(actions);
        if (quit_) last_frame = true;
        timings_.lap(Stage::Ui);

        simulate();
        timings_.lap(Stage::Simulate);

        render(last_frame);
        ui_frame_open = false;
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

void App::handle_input() {
    const ImGuiIO& io = ImGui::GetIO();
    if (!io.WantCaptureMouse) {
        const glm::vec2 delta(io.MouseDelta.x, io.MouseDelta.y);
        if (ImGui::IsMouseDown(ImGuiMouseButton_Right)) camera_.orbit(delta);
        if (ImGui::IsMouseDown(ImGuiMouseButton_Middle)) {
            camera_.pan(delta, context_->framebuffer_size().y);
        }
        if (io.MouseWheel != 0.0f) camera_.zoom(io.MouseWheel);
    }
    if (!io.WantCaptureKeyboard) {
        // ImGui 1.86 indexes KeysDown by the platform's key codes; GLFW's letter codes are the
        // upper-case ASCII values.
        if (ImGui::IsKeyPressed('F', false))
            camera_.fit(scene_ ? scene_->lower : glm::vec3(-1.0f),
                        scene_ ? scene_->upper : glm::vec3(1.0f));
        if (ImGui::IsKeyPressed('R', false)) camera_.reset();
        if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false)) quit_ = true;
    }
}

void App::apply(const GuiActions& actions) {
    if (actions.load_scene) {
        const std::filesystem::path path = resolve_scene_path(paths_, gui_.scene_input.data());
        try {
            Scene scene = load_scene(path);
            gui_.scene_error.clear();
            show_scene(std::move(scene));
        } catch (const Error& error) {
            gui_.scene_error = error.what(); // keep showing the current scene
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
}

void App::simulate() {
    // No simulation yet: the surface stays at rest. Simulation::step(dt) goes here and then
    // updates surface_positions_ (or, with CUDA-GL interop, the vertex buffer directly).
}

void App::render(bool last_frame) {
    const glm::ivec2 size = context_->framebuffer_size();
    renderer_->begin_frame(size, context_->headless(), settings_);
    if (scene_) renderer_->update_surface(surface_positions_);
    renderer_->draw_scene(camera_, settings_);
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
    return result;
}

void App::shutdown() {
    // GL objects go first, while the context is still current.
    renderer_.reset();
    if (imgui_renderer_) ImGui_ImplOpenGL3_Shutdown();
    if (imgui_platform_) ImGui_ImplGlfw_Shutdown();
    if (ImGui::GetCurrentContext()) ImGui::DestroyContext();
    imgui_renderer_ = imgui_platform_ = false;
    context_.reset();
}

} // namespace edn

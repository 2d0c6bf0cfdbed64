// The app's input: the drag tool and the pin brush, and App's mouse/keyboard dispatch and
// picking (App members defined here to keep app.cpp the frame loop).
#include "input.hpp"

#include "app.hpp"
#include "core/error.hpp"
#include "sim/drag_region.hpp"

#include <algorithm>
#include <glm/geometric.hpp>
#include <imgui.h>

namespace edn {

glm::vec3 to_glm(const Vec3& v) {
    return {static_cast<float>(v[0]), static_cast<float>(v[1]), static_cast<float>(v[2])};
}

void DragTool::begin_at(SimDriver& sim, const Scene& scene, const SurfaceHit& hit,
                        const ViewState& view, double stiffness, double radius) {
    const Tri& tri = scene.surface.triangles[static_cast<std::size_t>(hit.triangle)];
    std::array<Index, 3> vertices{};
    std::array<double, 3> weights{};
    for (std::size_t i = 0; i < 3; ++i) {
        vertices[i] = scene.surface.mesh_vertex[static_cast<std::size_t>(tri[i])];
        weights[i] = hit.barycentric[static_cast<int>(i)];
    }
    // The grabbed point and its neighbourhood within `radius` (rest space) follow the target.
    DragSpring spring = make_drag(sim.simulation(), vertices, weights, radius, stiffness);
    spring.target = {hit.point.x, hit.point.y, hit.point.z};
    sim.set_drag(spring);
    const glm::vec4 in_view = view.view * glm::vec4(hit.point, 1.0f);
    depth_ = -in_view.z;
    dragging_ = true;
}

void DragTool::begin_vertex(SimDriver& sim, Index vertex, const ViewState& view, double stiffness,
                            double radius) {
    EDN_VERIFY(vertex >= 0 && vertex < sim.simulation().mesh().num_vertices(), ErrorCode::Usage,
               "drag: vertex " << vertex << " out of range");
    const DragSpring spring =
        make_drag(sim.simulation(), {vertex, vertex, vertex}, {1.0, 0.0, 0.0}, radius, stiffness);
    sim.set_drag(spring);
    const glm::vec4 in_view = view.view * glm::vec4(to_glm(spring.target), 1.0f);
    depth_ = -in_view.z;
    dragging_ = true;
}

void DragTool::move(SimDriver& sim, const ViewState& view, const glm::vec2& pixel) {
    if (!sim.drag()) return;
    if (const std::optional<glm::vec3> target = target_at(view, pixel)) move_to(sim, *target);
}

std::optional<glm::vec3> DragTool::target_at(const ViewState& view, const glm::vec2& pixel) const {
    if (!dragging_) return std::nullopt;
    // Keep the target at the grabbed point's view depth, under the cursor.
    return view.at_depth(pixel, depth_);
}

void DragTool::move_to(SimDriver& sim, const glm::vec3& target) {
    if (!sim.drag()) return;
    DragSpring spring = *sim.drag();
    spring.target = {target.x, target.y, target.z};
    sim.set_drag(spring);
}

void DragTool::end(SimDriver* sim) {
    dragging_ = false;
    if (sim) sim->set_drag(std::nullopt);
}

glm::vec3 grabbed_point(const SimDriver& sim) {
    const std::optional<DragSpring>& drag = sim.drag();
    glm::vec3 point(0.0f);
    for (std::size_t i = 0; i < 3; ++i) {
        point +=
            static_cast<float>(drag->weights[i]) * to_glm(sim.vertex_position(drag->vertices[i]));
    }
    return point;
}

std::vector<Index> brush_vertices(const ViewState& view, const SurfaceHit& hit,
                                  const glm::vec2& pixel, float radius_pixels,
                                  const std::vector<glm::vec3>& surface_positions,
                                  const BoundarySurface& surface) {
    // A sphere around the hit whose radius is radius_pixels at the hit's depth.
    const Ray side = view.ray(pixel + glm::vec2(radius_pixels, 0.0f));
    const glm::vec3 side_point =
        side.origin + glm::length(hit.point - side.origin) * side.direction;
    const float radius = glm::length(side_point - hit.point);
    std::vector<Index> vertices;
    for (std::size_t i = 0; i < surface_positions.size(); ++i) {
        if (glm::length(surface_positions[i] - hit.point) <= radius)
            vertices.push_back(surface.mesh_vertex[i]);
    }
    return vertices;
}

ViewState App::view_state() const {
    const glm::ivec2 size = context_->framebuffer_size();
    const float aspect =
        static_cast<float>(std::max(size.x, 1)) / static_cast<float>(std::max(size.y, 1));
    const ImVec2 display = ImGui::GetIO().DisplaySize;
    ViewState view;
    view.view = camera_.view();
    view.view_projection = camera_.projection(aspect) * view.view;
    view.eye = camera_.eye();
    view.target = camera_.target();
    view.viewport = {display.x, display.y};
    return view;
}

std::optional<SurfaceHit> App::pick(const glm::vec2& pixel) {
    if (!session_.scene() || picker_.empty()) return std::nullopt;
    refresh_surface_positions();
    return picker_.pick(view_state().ray(pixel));
}

std::optional<Vec3> App::pick_world(const glm::vec2& pixel) {
    const std::optional<SurfaceHit> hit = pick(pixel);
    if (!hit) return std::nullopt;
    return Vec3{hit->point.x, hit->point.y, hit->point.z};
}

void App::begin_drag_at(const glm::vec2& pixel, double radius) {
    clear_drag_target();
    if (!session_.sim()) return;
    const std::optional<SurfaceHit> hit = pick(pixel);
    if (!hit) return;
    drag_.begin_at(*session_.sim(), *session_.scene(), *hit, view_state(), gui_.drag_stiffness,
                   radius);
}

void App::end_drag() {
    clear_drag_target();
    drag_.end(session_.sim());
}

void App::paint_pins(const glm::vec2& pixel, bool pin) {
    if (!session_.sim()) return;
    const std::optional<SurfaceHit> hit = pick(pixel);
    if (!hit) return;
    session_.sim()->set_vertices_pinned(brush_vertices(view_state(), *hit, pixel, gui_.brush_radius,
                                                       picker_.positions(),
                                                       session_.scene()->surface),
                                        pin);
}

std::optional<CutPlane> App::stroke_plane(const glm::vec2& from, const glm::vec2& to) {
    if (!session_.scene()) return std::nullopt;
    std::optional<glm::vec3> surface_point;
    if (glm::length(to - from) >= kMinStrokePixels) {
        if (const std::optional<SurfaceHit> hit = pick(0.5f * (from + to)))
            surface_point = hit->point;
    }
    return edn::stroke_plane(view_state(), from, to, surface_point);
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
            if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) stroke_mouse(mouse, true, true);
        } else if (gui_.refine_mode) {
            if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) {
                // Picking reads the simulation's positions: in the turn, like the edit.
                post([this, mouse] {
                    if (const std::optional<Vec3> point = pick_world(mouse)) {
                        refine(point, default_refine_radius(), gui_.refine_levels);
                    } else {
                        gui_.cut_message = "refine: click on the surface";
                    }
                });
            }
        } else if (io.KeyShift && ImGui::IsMouseDown(ImGuiMouseButton_Left) && !drag_.active()) {
            post([this, mouse, pin = !io.KeyCtrl] { paint_pins(mouse, pin); });
        } else if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) {
            post([this, mouse, radius = drag_radius()] { begin_drag_at(mouse, radius); });
        }
    }
    // Cut mode's stroke: cut as it is drawn, or one plane at release (app_cut.cpp).
    if (stroking_) stroke_mouse(mouse, false, ImGui::IsMouseDown(ImGuiMouseButton_Left));
    // The drag starts in the turn after the click (drag_ is the UI's; only the turn changes it),
    // so its target follows the cursor from then on, and a release before it ends it at once.
    if (drag_.active()) {
        if (ImGui::IsMouseDown(ImGuiMouseButton_Left)) {
            if (worker_->mode() == SimWorker::Mode::Threaded) {
                // Not a command: one per frame would park the worker at every step. The next
                // step takes the latest target (step_simulation).
                if (const std::optional<glm::vec3> target = drag_.target_at(view_state(), mouse))
                    set_drag_target(*target);
            } else {
                post([this, mouse] {
                    if (session_.sim()) drag_.move(*session_.sim(), view_state(), mouse);
                });
            }
        } else {
            post([this] { end_drag(); });
        }
    }
}

void App::handle_input() {
    if (imgui_platform_) handle_mouse(); // headless has no mouse: scripts drive it
    const ImGuiIO& io = ImGui::GetIO();
    if (!io.WantCaptureKeyboard) {
        // ImGui 1.86 indexes KeysDown by the platform's key codes; GLFW's letter codes are the
        // upper-case ASCII values, space is ' '.
        Scene* scene = session_.scene();
        if (ImGui::IsKeyPressed('F', false) && scene) camera_.fit(scene->lower, scene->upper);
        if (ImGui::IsKeyPressed(' ', false)) gui_.paused = !gui_.paused;
        if (ImGui::IsKeyPressed('S', true)) step_once_ = true;
        if (ImGui::IsKeyPressed('R', false))
            post([this] {
                if (session_.sim()) session_.sim()->reset();
            });
        if (io.KeyCtrl && ImGui::IsKeyPressed('Z', false)) post([this] { undo(); });
        if (!io.KeyCtrl && ImGui::IsKeyPressed('C', false)) {
            gui_.cut_mode = !gui_.cut_mode;
            if (gui_.cut_mode) gui_.refine_mode = false; // one left-click tool at a time
            stroking_ = false;
            post([this] { stroke_cancel(); });
        }
        if (ImGui::IsKeyPressed('B', false)) {
            gui_.refine_mode = !gui_.refine_mode;
            if (gui_.refine_mode) gui_.cut_mode = false;
            stroking_ = false;
            post([this] { stroke_cancel(); });
        }
        if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false)) quit_ = true;
    }
}

} // namespace edn

// App members for what holds the body (app/supports.hpp): the ground plane (GUI toggle, height
// and friction, scripts) kept in step with the grid, pins by a plane, and the warning when a
// dynamic scene has neither pins nor ground.
#include "app.hpp"
#include "core/error.hpp"
#include "supports.hpp"

#include <algorithm>
#include <glm/geometric.hpp>
#include <iostream>

namespace edn {

void App::ground_at_grid() {
    if (const Scene* scene = session_.scene()) gui_.ground_height = default_ground_height(*scene);
    apply_ground();
}

void App::apply_ground() {
    gui_.settings.ground_height =
        gui_.ground ? std::optional<double>(gui_.ground_height) : std::nullopt;
    gui_.settings.ground_friction = gui_.ground_friction;
    if (session_.sim() && session_.scene())
        gui_.settings.ground_stiffness = default_ground_stiffness(
            session_.sim()->total_mass(),
            static_cast<double>(glm::length(session_.scene()->upper - session_.scene()->lower)));
    // One height for both: the grid is drawn where the ground is.
    if (renderer_ && session_.scene())
        renderer_->set_grid_height(static_cast<float>(gui_.ground_height));
    if (!session_.sim()) return;
    try {
        session_.sim()->set_ground(gui_.settings.ground_height, gui_.settings.ground_stiffness,
                                   gui_.settings.ground_friction);
    } catch (const Error& error) {
        report_error(error.what());
        const SimulationSettings& s = session_.sim()->simulation().settings();
        gui_.ground = s.ground_height.has_value();
        if (s.ground_height) gui_.ground_height = *s.ground_height;
        gui_.ground_friction = s.ground_friction;
        gui_.settings.ground_height = s.ground_height;
        gui_.settings.ground_friction = s.ground_friction;
        gui_.settings.ground_stiffness = s.ground_stiffness;
    }
}

void App::pin_plane(const PinPlane& plane) {
    if (!session_.sim() || !session_.scene()) return;
    session_.sim()->set_vertices_pinned(pin_plane_vertices(session_.scene()->mesh, plane), true);
}

double App::drag_radius() const {
    const Scene* scene = session_.scene();
    if (!scene) return 0.0;
    return static_cast<double>(gui_.drag_radius_fraction *
                               glm::length(scene->upper - scene->lower));
}

void App::check_supports() {
    const SimDriver* sim = session_.sim();
    if (!sim) {
        gui_.support_warning.clear();
        return;
    }
    const std::vector<std::uint8_t>& pins = sim->vertex_pins();
    const auto pinned = static_cast<Index>(std::count(pins.begin(), pins.end(), 1));
    gui_.support_warning = support_warning(sim->simulation().settings(), pinned);
    // Headless there is no panel: one line on stderr, once per run.
    if (options_.headless && !gui_.support_warning.empty() && !support_warned_) {
        std::cerr << "elastodyn: warning: " << gui_.support_warning << '\n';
        support_warned_ = true;
    }
}

} // namespace edn

// App: the curved surface of order p >= 2 (curved_surface.hpp) kept in step with the simulation.

#include "app.hpp"

namespace edn {

bool App::sync_curved_surface() {
    const Scene& scene = *session_.scene();
    if (curved_.sync(session_.sim()->simulation(), scene)) {
        // What the renderer draws changed (a new map, or flat again): a new vertex buffer, so
        // the interop registration of the old one goes too.
        interop_.reset();
        interop_failed_ = false;
        if (curved_.active())
            renderer_->set_surface(curved_.map().triangles,
                                   static_cast<std::size_t>(curved_.map().num_vertices()),
                                   scene.lower, scene.upper);
        else
            renderer_->set_surface(scene.surface.triangles, scene.surface.mesh_vertex.size(),
                                   scene.lower, scene.upper);
    }
    return curved_.active();
}

} // namespace edn

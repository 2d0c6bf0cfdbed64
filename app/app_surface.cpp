// App: the curved surface of order p >= 2 (curved_surface.hpp) kept in step with the simulation,
// and the CUDA-GL interop registration of the surface buffer.

#include "app.hpp"
#include "core/error.hpp"

#include <string>

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

bool App::upload_with_interop() {
    if (session_.sim()->device_positions() == nullptr || !options_.interop) {
        interop_.reset(); // CPU backend: glBufferSubData writes the buffer
        return false;
    }
    if (!interop_ && !interop_failed_) {
        const BoundarySurface& surface = session_.scene()->surface;
        std::vector<Vec3> rest(surface.mesh_vertex.size());
        for (std::size_t i = 0; i < rest.size(); ++i)
            rest[i] =
                session_.scene()->mesh.positions[static_cast<std::size_t>(surface.mesh_vertex[i])];
        try {
            interop_ = curved_.active()
                           ? std::make_unique<SurfaceInterop>(renderer_->surface_vertex_buffer(),
                                                              curved_.map().view(), curved_.rest(),
                                                              options_.interop_options)
                           : std::make_unique<SurfaceInterop>(renderer_->surface_vertex_buffer(),
                                                              surface.mesh_vertex,
                                                              surface.triangles, surface.face_cell,
                                                              rest, options_.interop_options);
        } catch (const Error& error) {
            // E.g. GL on another device than CUDA (Mesa): the host path still works.
            interop_failed_ = true;
            report_error(std::string("CUDA-GL interop unavailable, using glBufferSubData: ") +
                         error.what());
        }
    }
    return interop_ != nullptr;
}

} // namespace edn

// App: the surface upload of each frame, from the simulation in the UI's turn or from the latest
// snapshot a threaded step published (app/sim_snapshot.hpp) between turns; the curved surface of
// order p >= 2 (curved_surface.hpp) kept in step with the simulation; the CUDA-GL interop
// registration of the surface buffer.

#include "app.hpp"
#include "core/error.hpp"

#include <cmath>
#include <glm/geometric.hpp>
#include <string>

namespace edn {

void App::refresh_surface_positions() {
    if (!picker_.stale() || !session_.sim() || !session_.scene()) return;
    // Interop frames leave the host copy behind; picking and painting fetch it on demand (in a
    // turn: the simulation's current state).
    copy_surface_positions(session_.sim()->positions());
}

void App::copy_surface_positions(const std::vector<double>& x) {
    const BoundarySurface& surface = session_.scene()->surface;
    std::vector<glm::vec3>& positions = picker_.positions();
    positions.resize(surface.mesh_vertex.size());
    for (std::size_t i = 0; i < surface.mesh_vertex.size(); ++i) {
        const std::size_t v = 3 * static_cast<std::size_t>(surface.mesh_vertex[i]);
        positions[i] = glm::vec3(static_cast<float>(x[v]), static_cast<float>(x[v + 1]),
                                 static_cast<float>(x[v + 2]));
    }
    picker_.moved();
}

void App::update_surface() {
    // In the UI's turn: the simulation itself is the source.
    if (!session_.scene() || !session_.sim()) {
        surface_scalars_.clear();
        if (session_.scene()) renderer_->update_surface(picker_.positions());
        renderer_->set_pinned_vertices({});
        renderer_->update_markers({});
        return;
    }
    SimDriver& sim = *session_.sim();
    SurfaceSource source;
    source.device_positions = sim.device_positions();
    source.device = source.device_positions != nullptr;
    source.device_stress = [&sim] { return sim.device_von_mises_stress(); };
    source.positions = [&sim]() -> const std::vector<double>& { return sim.positions(); };
    source.stress = [&sim]() -> const std::vector<double>& { return sim.von_mises_stress(); };
    if (sim.drag()) {
        const std::array<double, 3>& target = sim.drag()->target;
        source.drag.emplace(grabbed_point(sim), glm::vec3(target[0], target[1], target[2]));
    }
    upload_surface(source, true);
}

void App::show_snapshot() {
    // Between turns (threaded): the latest step's snapshot, never the simulation, which the
    // worker is stepping. The scene, the curved map, the interop registration and the pins are
    // the last turn's: only a turn changes them, and snapshots from before it were discarded.
    const SimSnapshot* snapshot = snapshots_.take();
    if (!snapshot || !renderer_ || !session_.scene() || !session_.sim()) return;
    if (gui_.color_mode == ColorMode::VonMises && !snapshot->has_stress) {
        // The colour changed since the last turn: the next turn uploads it and asks the steps
        // for the stress from then on.
        worker_->request_turn();
        return;
    }
    SurfaceSource source;
    source.device = snapshot->device;
    // Host copies of device snapshots only where an upload path needs them (no interop, the
    // colour range's periodic sample): the same transfers a turn makes.
    std::vector<double> host_positions;
    std::vector<double> host_stress;
    auto download = [](const DeviceFloats& device, std::vector<double>& host) {
        std::vector<float> values(device.size());
        if (!values.empty()) SurfaceInterop::download(device.data(), values.size(), values.data());
        host.assign(values.begin(), values.end());
    };
    if (snapshot->device) {
        source.device_positions = snapshot->device_positions.data();
        source.device_stress = [snapshot] { return snapshot->device_stress.data(); };
        source.positions = [&]() -> const std::vector<double>& {
            if (host_positions.empty()) download(snapshot->device_positions, host_positions);
            return host_positions;
        };
        source.stress = [&]() -> const std::vector<double>& {
            if (host_stress.empty()) download(snapshot->device_stress, host_stress);
            return host_stress;
        };
    } else {
        source.device_stress = [] { return static_cast<const float*>(nullptr); };
        source.positions = [snapshot]() -> const std::vector<double>& {
            return snapshot->positions;
        };
        source.stress = [snapshot]() -> const std::vector<double>& { return snapshot->stress; };
    }
    if (snapshot->dragging) source.drag.emplace(snapshot->grabbed, snapshot->target);
    upload_surface(source, false);
}

void App::upload_surface(const SurfaceSource& source, bool in_turn) {
    const BoundarySurface& surface = session_.scene()->surface;
    const std::size_t count = surface.mesh_vertex.size();
    // p >= 2 draws the curved map's render vertices; the first `count` of them are the surface
    // vertices, so pins and picking below are the same for both. The map follows the
    // simulation's numbering, which changes only in turns.
    const bool curved = in_turn ? sync_curved_surface() : curved_.active();
    const std::size_t render_count =
        curved ? static_cast<std::size_t>(curved_.map().num_vertices()) : count;
    const bool interop = upload_with_interop(source.device);

    // Colour scalars per surface vertex (unscaled; the shader multiplies by 1 / range). On the
    // interop path von Mises (averaged over each vertex's faces) and displacement are computed on
    // the device; on the host path they are computed here.
    const float* device_stress =
        interop && gui_.color_mode == ColorMode::VonMises ? source.device_stress() : nullptr;
    surface_scalars_.assign(render_count, 0.0f);
    if (gui_.color_mode == ColorMode::VonMises && device_stress == nullptr && curved && interop) {
        const std::vector<double>& stress = source.stress();
        for (std::size_t r = 0; r < render_count; ++r)
            surface_scalars_[r] =
                surface_map_cell_mean(curved_.map().view(), stress.data(), static_cast<int>(r));
    } else if (gui_.color_mode == ColorMode::VonMises && device_stress == nullptr && !curved) {
        const std::vector<double>& stress = source.stress();
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

    bool device_scalars = false; // the colour scalars exist only on the device
    if (interop) {
        const InteropScalar kind =
            gui_.color_mode == ColorMode::VonMises
                ? (device_stress != nullptr ? InteropScalar::Cells : InteropScalar::Host)
            : gui_.color_mode == ColorMode::Displacement ? InteropScalar::Displacement
                                                         : InteropScalar::None;
        interop_->update(source.device_positions, kind, surface_scalars_, device_stress);
        device_scalars = kind == InteropScalar::Cells || kind == InteropScalar::Displacement;
        renderer_->use_surface_buffer(interop_->external_buffer());
        picker_.mark_stale();
        gui_.upload_method = interop_->external_buffer() != 0
                                 ? "CUDA-GL interop, external memory (CUDA backend)"
                                 : "CUDA-GL interop, mapped buffer (CUDA backend)";
    } else if (curved) {
        const std::vector<double>& x = source.positions();
        copy_surface_positions(x); // the picker keeps the corner vertices
        const InteropScalar kind = gui_.color_mode == ColorMode::VonMises ? InteropScalar::Cells
                                   : gui_.color_mode == ColorMode::Displacement
                                       ? InteropScalar::Displacement
                                       : InteropScalar::None;
        curved_.evaluate(x, kind, kind == InteropScalar::Cells ? source.stress().data() : nullptr);
        renderer_->upload_surface_vertices(curved_.vertices());
        // The scalars stay readable per render vertex, as the flat host path leaves them.
        for (std::size_t r = 0; r < render_count; ++r)
            surface_scalars_[r] = curved_.vertices()[7 * r + 6];
        gui_.upload_method = source.device ? "glBufferSubData, curved (CUDA backend, no interop)"
                                           : "glBufferSubData, curved (CPU backend)";
    } else {
        copy_surface_positions(source.positions());
        const std::vector<glm::vec3>& surface_positions = picker_.positions();
        if (gui_.color_mode == ColorMode::Displacement) {
            for (std::size_t i = 0; i < count; ++i) {
                const Vec3& rest =
                    session_.scene()
                        ->mesh.positions[static_cast<std::size_t>(surface.mesh_vertex[i])];
                const float d = glm::length(surface_positions[i] - to_glm(rest));
                surface_scalars_[i] = std::isfinite(d) ? d : 0.0f;
            }
        }
        renderer_->update_surface(surface_positions, surface_scalars_);
        gui_.upload_method =
            source.device ? options_.interop ? "glBufferSubData (CUDA backend, interop unavailable)"
                                             : "glBufferSubData (CUDA backend, --no-interop)"
                          : "glBufferSubData (CPU backend)";
    }
    update_color_range(device_scalars, source);
    settings_.use_colormap = gui_.color_mode != ColorMode::None;

    if (in_turn) {
        // Pins change only in turns; they are drawn from the surface buffer, so they need no
        // host positions either.
        const std::vector<std::uint8_t>& pins = session_.sim()->vertex_pins();
        pinned_surface_.clear();
        for (std::size_t i = 0; i < count; ++i) {
            if (pins[static_cast<std::size_t>(surface.mesh_vertex[i])])
                pinned_surface_.push_back(static_cast<unsigned>(i));
        }
        renderer_->set_pinned_vertices(pinned_surface_);
    }
    Markers markers;
    if (source.drag) markers.drag = {source.drag->first, source.drag->second};
    renderer_->update_markers(markers);
}

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

bool App::upload_with_interop(bool device) {
    if (!device || !options_.interop) {
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

#include "curved_surface.hpp"

#include "scene.hpp"
#include "sim/simulation.hpp"

#include <algorithm>
#include <cmath>

namespace edn {

bool CurvedSurface::sync(const Simulation& simulation, const Scene& scene) {
    const Key key{&simulation, &scene, simulation.cell_nodes().data(),
                  simulation.cell_nodes().size(), simulation.settings().order};
    if (key == key_) return false;
    key_ = key;
    const bool was_active = active_;
    active_ = key.order >= 2;
    if (!active_) {
        // Flat again: drop the map; the renderer goes back to the surface vertices only if it
        // drew the map before (at p = 1 nothing changes and nothing is paid).
        map_ = {};
        rest_.clear();
        vertices_.clear();
        return was_active;
    }
    map_ = build_surface_map(scene.surface, simulation.mesh().cells, key.order,
                             simulation.cell_nodes(), surface_subdivisions(key.order));
    evaluate_surface_map(map_, simulation.rest_positions().data(), vertices_);
    rest_.resize(3 * static_cast<std::size_t>(map_.num_vertices()));
    for (std::size_t r = 0; r < static_cast<std::size_t>(map_.num_vertices()); ++r)
        std::copy_n(vertices_.data() + 7 * r, 3, rest_.data() + 3 * r);
    return true;
}

float CurvedSurface::evaluate(const std::vector<double>& x, InteropScalar scalar,
                              const double* cell_values) {
    evaluate_surface_map(map_, x.data(), vertices_);
    const SurfaceMapView view = map_.view();
    float peak = 0.0f;
    for (int r = 0; r < view.num_vertices; ++r) {
        float* out = vertices_.data() + 7 * static_cast<std::size_t>(r);
        float s = 0.0f;
        if (scalar == InteropScalar::Cells && cell_values != nullptr) {
            s = surface_map_cell_mean(view, cell_values, r);
        } else if (scalar == InteropScalar::Displacement) {
            const float* rest = rest_.data() + 3 * static_cast<std::size_t>(r);
            const float dx = out[0] - rest[0], dy = out[1] - rest[1], dz = out[2] - rest[2];
            s = std::sqrt(dx * dx + dy * dy + dz * dz);
            if (!std::isfinite(s)) s = 0.0f;
        }
        out[6] = s;
        peak = std::max(peak, s);
    }
    return peak;
}

} // namespace edn

#pragma once
/// The app's curved surface (order p >= 2): the SurfaceMap of the current simulation, rebuilt when
/// its node numbering changes (new scene, cut, refinement, undo, order or backend change), its
/// render vertices' rest positions (displacement colours) and the host evaluation with colour
/// scalars. At p = 1 it stays inactive and the flat surface path runs unchanged.

#include "interop.hpp"
#include "surface_map.hpp"

#include <cstddef>
#include <vector>

namespace edn {

class Simulation;
struct Scene;

/// Owner of the surface map for the app (see the file comment).
class CurvedSurface {
public:
    /// Rebuilds the map when `simulation` or `scene` is not the one it was built for (or after
    /// invalidate()). Returns true when what the renderer draws changed: the caller sets the
    /// renderer's surface again (render_triangles(), render_vertices()) and re-registers interop.
    bool sync(const Simulation& simulation, const Scene& scene);
    /// Forces a rebuild at the next sync (a new Simulation may reuse the old one's addresses).
    void invalidate() { key_ = {}; }
    /// True at p >= 2: the render vertices are the map's, not the surface vertices.
    bool active() const { return active_; }
    /// The map (meaningful when active()).
    const SurfaceMap& map() const { return map_; }
    /// 3 #R rest positions of the render vertices (the map at the rest node positions).
    const std::vector<float>& rest() const { return rest_; }
    /// Evaluates the map at node positions `x` (3 per node) into vertices() with colour scalars:
    /// Cells = the mean of `cell_values` (#cells) over each vertex's faces, Displacement =
    /// |x - rest|, else 0. Returns the largest scalar.
    float evaluate(const std::vector<double>& x, InteropScalar scalar,
                   const double* cell_values = nullptr);
    /// The last evaluation: 7 floats per render vertex (the surface buffer's layout).
    const std::vector<float>& vertices() const { return vertices_; }

private:
    /// What the map was built from; any change means new node numbering or a new boundary.
    struct Key {
        const Simulation* simulation = nullptr;
        const Scene* scene = nullptr;
        const void* cell_nodes = nullptr;
        std::size_t cell_node_count = 0;
        int order = 0;
        bool operator==(const Key&) const = default;
    };
    Key key_;
    bool active_ = false;
    SurfaceMap map_;
    std::vector<float> rest_;
    std::vector<float> vertices_;
};

} // namespace edn

#include "sim/frame_snapshot.hpp"

#include "core/error.hpp"
#include "mesh/topology.hpp"
#include "sim/simulation.hpp"

#include <algorithm>

namespace edn {

FrameSnapshot take_snapshot(const Simulation& sim, bool fields) {
    FrameSnapshot frame;
    frame.order = sim.settings().order;
    frame.num_vertices = sim.mesh().num_vertices();
    frame.cells = sim.mesh().cells;
    frame.cell_nodes = sim.cell_nodes();
    frame.positions = sim.positions();
    if (!fields) return frame;
    frame.velocities = sim.velocities();
    frame.rest = sim.rest_positions();
    frame.pinned = sim.pinned();
    frame.von_mises = sim.von_mises_stress();
    return frame;
}

void write_state_vtu(const std::filesystem::path& path, const FrameSnapshot& frame,
                     VtuEncoding encoding) {
    EDN_VERIFY(frame.velocities.size() == frame.positions.size() &&
                   frame.rest.size() == frame.positions.size(),
               ErrorCode::Internal, path.string() << ": a snapshot without its fields");
    const std::vector<double>& x = frame.positions;
    // Every node (vertex nodes first): order p >= 2 writes VTK's quadratic / Lagrange tets, so
    // ParaView shows the curved cells the simulation computed.
    std::vector<Vec3> points(frame.num_nodes());
    VtuField displacement{"displacement", 3, {}};
    VtuField velocity{"velocity", 3, frame.velocities};
    VtuField pinned_field{"pinned", 1, {}};
    displacement.values.reserve(3 * points.size());
    pinned_field.values.reserve(points.size());
    for (std::size_t i = 0; i < points.size(); ++i) {
        for (int d = 0; d < 3; ++d) {
            points[i][d] = x[3 * i + d];
            displacement.values.push_back(x[3 * i + d] - frame.rest[3 * i + d]);
        }
        pinned_field.values.push_back(i < frame.pinned.size() && frame.pinned[i] ? 1.0 : 0.0);
    }
    VtuField stress{"von_mises", 1, frame.von_mises};
    write_vtu(path, points, frame.order, frame.cell_nodes, {displacement, velocity, pinned_field},
              {stress}, encoding);
}

void write_state_vtu(const std::filesystem::path& path, const Simulation& sim,
                     VtuEncoding encoding) {
    write_state_vtu(path, take_snapshot(sim), encoding);
}

BoundaryTriangles boundary_triangles(const std::vector<Cell>& cells, Index num_vertices) {
    // The topology's boundary faces are oriented away from their cell already.
    const Topology topology = cpu::build_topology(cells, num_vertices);
    BoundaryTriangles boundary;
    std::vector<Index> surface_vertex(static_cast<std::size_t>(num_vertices), -1);
    for (const Tri& t : topology.boundary_faces)
        for (Index v : t) surface_vertex[static_cast<std::size_t>(v)] = 0;
    for (Index v = 0; v < num_vertices; ++v) {
        if (surface_vertex[static_cast<std::size_t>(v)] < 0) continue;
        surface_vertex[static_cast<std::size_t>(v)] =
            static_cast<Index>(boundary.mesh_vertex.size());
        boundary.mesh_vertex.push_back(v);
    }
    boundary.face_cell = topology.boundary_face_cell;
    boundary.triangles.reserve(topology.boundary_faces.size());
    for (const Tri& t : topology.boundary_faces)
        boundary.triangles.push_back({surface_vertex[static_cast<std::size_t>(t[0])],
                                      surface_vertex[static_cast<std::size_t>(t[1])],
                                      surface_vertex[static_cast<std::size_t>(t[2])]});
    return boundary;
}

SurfaceMesh deformed_surface(const FrameSnapshot& frame, const BoundaryTriangles& boundary) {
    SurfaceMesh surface;
    surface.triangles = boundary.triangles;
    surface.positions.resize(boundary.mesh_vertex.size());
    for (std::size_t i = 0; i < boundary.mesh_vertex.size(); ++i) {
        const std::size_t v = static_cast<std::size_t>(boundary.mesh_vertex[i]);
        EDN_ASSERT(3 * v + 2 < frame.positions.size(), "surface vertex " << v << " has no node");
        for (int d = 0; d < 3; ++d) surface.positions[i][d] = frame.positions[3 * v + d];
    }
    return surface;
}

} // namespace edn

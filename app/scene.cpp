#include "scene.hpp"

#include "core/error.hpp"
#include "mesh/mesh_loader.hpp"
#include "mesh/topology.hpp"

#include <algorithm>
#include <glm/common.hpp>
#include <limits>
#include <utility>

namespace edn {

BoundarySurface compact_boundary(const std::vector<Tri>& boundary_faces, Index num_vertices) {
    std::vector<Index> surface_id(static_cast<std::size_t>(num_vertices), -1);
    for (const Tri& tri : boundary_faces) {
        for (Index v : tri) surface_id[static_cast<std::size_t>(v)] = 0;
    }
    BoundarySurface surface;
    for (Index v = 0; v < num_vertices; ++v) {
        if (surface_id[static_cast<std::size_t>(v)] < 0) continue;
        surface_id[static_cast<std::size_t>(v)] = static_cast<Index>(surface.mesh_vertex.size());
        surface.mesh_vertex.push_back(v);
    }
    surface.triangles.reserve(boundary_faces.size());
    for (const Tri& tri : boundary_faces) {
        surface.triangles.push_back({surface_id[static_cast<std::size_t>(tri[0])],
                                     surface_id[static_cast<std::size_t>(tri[1])],
                                     surface_id[static_cast<std::size_t>(tri[2])]});
    }
    return surface;
}

void gather_surface_positions(const std::vector<Vec3>& positions, const BoundarySurface& surface,
                              std::vector<glm::vec3>& out) {
    out.resize(surface.mesh_vertex.size());
    for (std::size_t i = 0; i < out.size(); ++i) {
        const Vec3& p = positions[static_cast<std::size_t>(surface.mesh_vertex[i])];
        out[i] =
            glm::vec3(static_cast<float>(p[0]), static_cast<float>(p[1]), static_cast<float>(p[2]));
    }
}

Scene make_scene(const std::filesystem::path& path, TetMesh mesh) {
    Scene scene;
    scene.path = path;
    scene.mesh = std::move(mesh);
    EDN_VERIFY(scene.mesh.num_cells() > 0, ErrorCode::EmptyMesh, path.string() << ": no cells");
    scene.topology = build_topology(scene.mesh);
    scene.surface = compact_boundary(scene.topology.boundary_faces, scene.mesh.num_vertices());
    scene.surface.face_cell = scene.topology.boundary_face_cell;
    scene.lower = glm::vec3(std::numeric_limits<float>::max());
    scene.upper = glm::vec3(std::numeric_limits<float>::lowest());
    for (const Vec3& p : scene.mesh.positions) {
        const glm::vec3 q(static_cast<float>(p[0]), static_cast<float>(p[1]),
                          static_cast<float>(p[2]));
        scene.lower = glm::min(scene.lower, q);
        scene.upper = glm::max(scene.upper, q);
    }
    return scene;
}

Scene load_scene(const std::filesystem::path& path, const TetrahedralizeOptions& options) {
    return make_scene(path, load_tet_mesh(path, options));
}

} // namespace edn

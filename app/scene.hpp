#pragma once
/// The scene the app shows: a tet mesh and its boundary surface, ready for drawing.

#include "core/types.hpp"
#include "mesh/tet_mesh.hpp"
#include "mesh/tetrahedralize.hpp"
#include "mesh/topology.hpp"

#include <filesystem>
#include <glm/vec3.hpp>
#include <vector>

namespace edn {

/// The boundary of a tet mesh with its own compact vertex numbering (what the renderer draws).
struct BoundarySurface {
    std::vector<Index> mesh_vertex; ///< #S tet-mesh vertex of each surface vertex
    std::vector<Tri> triangles;     ///< #B surface-vertex indices, counter-clockwise from outside
    std::vector<Index> face_cell;   ///< #B the cell owning each triangle (stress colours)
};

/// A loaded model.
struct Scene {
    std::filesystem::path path; ///< file it came from
    TetMesh mesh;               ///< validated tet mesh
    Topology topology;          ///< topology of `mesh` (node layouts, state transfer)
    BoundarySurface surface;    ///< boundary faces of `mesh`
    glm::vec3 lower{0.0f};      ///< bounding box of the mesh
    glm::vec3 upper{0.0f};      ///< bounding box of the mesh
};

/// Loads a mesh file (edn::load_tet_mesh) and extracts its boundary (edn::build_topology).
/// OBJ surfaces are meshed with `options`. Throws edn::Error naming the file.
Scene load_scene(const std::filesystem::path& path, const TetrahedralizeOptions& options = {});

/// A scene of an already loaded (validated) tet mesh: topology, boundary and bounds (cuts and
/// undo build their scenes this way).
Scene make_scene(const std::filesystem::path& path, TetMesh mesh);

/// Renumbers `boundary_faces` (tet-mesh vertex ids) onto the vertices they use, in ascending
/// tet-mesh order.
BoundarySurface compact_boundary(const std::vector<Tri>& boundary_faces, Index num_vertices);

/// Positions of the surface vertices (float, for GL) taken from tet-mesh positions `positions`.
void gather_surface_positions(const std::vector<Vec3>& positions, const BoundarySurface& surface,
                              std::vector<glm::vec3>& out);

} // namespace edn

#pragma once
/// OBJ surface import: triangulation, welding and the checks a surface must pass before meshing.

#include "mesh/tet_mesh.hpp"

#include <filesystem>

namespace edn {

/// Reads an OBJ file (tinyobjloader): polygons triangulated, all groups merged, duplicate
/// vertices welded (tolerance 1e-9 x bounding-box diagonal), unreferenced vertices dropped.
/// Throws edn::Error (Io, Parse, IndexOutOfRange, NonFinite, EmptyMesh) naming the file.
SurfaceMesh read_obj_surface(const std::filesystem::path& path);

/// Checks that `surface` bounds a solid: no degenerate triangles, edge-manifold, closed,
/// consistently oriented; then orients each shell (connected component) away from the material:
/// a shell nested in an even number of others (a body) outward, one nested in an odd number (a
/// cavity, see find_shell_nesting) with its normals into the cavity.
/// `source` names the file in messages. Throws edn::Error (DegenerateElement, NonManifold,
/// OpenSurface, InconsistentOrientation, EmptyMesh).
void check_and_orient_surface(SurfaceMesh& surface, const std::string& source);

/// Writes a triangle surface as OBJ (atomically).
void write_obj_surface(const std::filesystem::path& path, const SurfaceMesh& surface);

} // namespace edn

#pragma once
/// OBJ surface import: triangulation, welding and the checks a surface must pass before meshing.

#include "mesh/tet_mesh.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace edn {

/// Where a surface read from an OBJ file came from, so that messages can number vertices and
/// faces as the file does (1-based) although welding and triangulation renumber them.
struct SurfaceOrigin {
    std::vector<Index> file_vertex; ///< per surface vertex: its first OBJ vertex (0-based)
    std::vector<Index> file_face;   ///< per triangle: the OBJ face it is part of (0-based)
    std::vector<int> file_line;     ///< per triangle: the line of that face
};

/// Reads an OBJ file (tinyobjloader): polygons triangulated, all groups merged, duplicate
/// vertices welded (tolerance 1e-9 x bounding-box diagonal), unreferenced vertices dropped.
/// Fills `origin` when given. Throws edn::Error (Io, Parse, IndexOutOfRange, NonFinite,
/// EmptyMesh) naming the file.
SurfaceMesh read_obj_surface(const std::filesystem::path& path, SurfaceOrigin* origin = nullptr);

/// Checks that `surface` bounds a solid: no degenerate triangles, edge-manifold, closed,
/// consistently oriented; then orients each shell (connected component) away from the material:
/// a shell nested in an even number of others (a body) outward, one nested in an odd number (a
/// cavity, see find_shell_nesting) with its normals into the cavity.
/// `source` names the file in messages; vertices and faces are numbered from 1 there, as in the
/// OBJ file when `origin` (from read_obj_surface) is given, else in `surface`'s order. Throws
/// edn::Error (DegenerateElement, NonManifold, OpenSurface, InconsistentOrientation, EmptyMesh).
void check_and_orient_surface(SurfaceMesh& surface, const std::string& source,
                              const SurfaceOrigin* origin = nullptr);

/// Writes a triangle surface as OBJ (atomically).
void write_obj_surface(const std::filesystem::path& path, const SurfaceMesh& surface);

} // namespace edn

#pragma once
/// Meshing a closed surface into tetrahedra with TetGen, crash-isolated in a child process.

#include "mesh/tet_mesh.hpp"

#include <vector>

namespace edn {

/// TetGen switches exposed to users.
struct TetrahedralizeOptions {
    double quality = 1.4;    ///< radius-edge ratio bound (TetGen -q); <= 0 disables quality meshing
    double max_volume = 0.0; ///< maximum tet volume (TetGen -a); <= 0 means unbounded
    /// Points TetGen may add (-S) beyond the enclosed volume / max_volume that -a needs; reaching
    /// it is an OutOfMemory error (quality refinement of thin or tiny features does not end
    /// otherwise). <= 0 means unbounded.
    long long max_steiner_points = 500000;
    double time_limit_s = 600.0; ///< wall-clock limit of the isolated TetGen run; <= 0: none
    bool verbose = false;        ///< let TetGen print to stdout
    bool isolate = true;         ///< run TetGen in a child process so a crash becomes an error
    /// Test hook: the isolated child raises SIGSEGV instead of running TetGen (what a TetGen
    /// crash looks like to the parent).
    bool crash_child_for_tests = false;
};

/// Result of a self-intersection check.
struct IntersectionReport {
    std::vector<Index> triangles; ///< indices into the surface's triangles that intersect others
};

/// Runs TetGen's -d check; returns the intersecting triangles (empty when the surface is clean).
IntersectionReport find_self_intersections(const SurfaceMesh& surface,
                                           const TetrahedralizeOptions& options = {});

/// Meshes a checked, outward-oriented closed surface; shells nested in an odd number of others
/// bound cavities, which stay empty (TetGen hole points, see cavity_points). Throws edn::Error:
/// SelfIntersecting ("self-intersecting surface: N intersecting triangles"), MeshingFailed (0
/// tets, crash, no hole point found), OutOfMemory (too many tets for max_volume, the Steiner point
/// or the time limit reached). The result is validated (validate_tet_mesh) and renumbered along a
/// Morton curve (locality).
TetMesh tetrahedralize(const SurfaceMesh& surface, const TetrahedralizeOptions& options,
                       const std::string& source);

} // namespace edn

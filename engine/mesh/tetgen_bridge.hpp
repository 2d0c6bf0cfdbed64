#pragma once
/// The only door to TetGen (AGPL, target edn_tetgen): plain edn types in and out, no exceptions of
/// edn's own (edn_tetgen links before edn_engine, so it may not call into it).

#include "mesh/tet_mesh.hpp"

#include <string>
#include <vector>

namespace edn {

/// What one TetGen call is asked to do.
struct TetgenRequest {
    bool detect_intersections = false; ///< run the -d check only (no meshing)
    double quality = 1.4;              ///< radius-edge bound (-q); <= 0 disables
    double max_volume = 0.0;           ///< volume bound (-a); <= 0 means unbounded
    long long max_steiner_points = 0;  ///< most points TetGen may add (-S); <= 0 means unbounded
    bool verbose = false;              ///< omit -Q so TetGen reports progress on stdout
    bool crash_child_for_tests = false; ///< TetrahedralizeOptions::crash_child_for_tests
    /// Points inside cavities: TetGen removes the tetrahedra around each, up to the surface.
    std::vector<Vec3> holes;
};

/// What TetGen returned.
struct TetgenResult {
    int termination_code = 0; ///< 0 on success, else TetGen's terminatetetgen() code (1 = memory)
    TetMesh mesh;             ///< the tetrahedra (meshing run), raw (not validated)
    std::vector<Index> intersecting_triangles; ///< sorted input triangle indices (-d run)
};

/// The TetGen switch string for `request`, e.g. "pzq1.400000000a0.01S1000Q" or "pzdQ".
std::string tetgen_switches(const TetgenRequest& request);

/// Runs TetGen on `surface` in this process (it may crash on bad input: isolate the caller).
/// Never throws; TetGen's own errors come back as `termination_code`.
TetgenResult run_tetgen(const SurfaceMesh& surface, const TetgenRequest& request);

/// Human-readable meaning of a TetGen termination code.
const char* tetgen_termination_reason(int termination_code);

} // namespace edn

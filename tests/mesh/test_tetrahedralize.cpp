// TetGen bridge, crash isolation and the mesh loader's dispatch. References are geometric: the
// tet volumes must add up to the volume the surface encloses (divergence theorem), the boundary
// of the result must be closed, and TetGen's -a bound must hold for every tet.

#include "core/error.hpp"
#include "mesh/mesh_loader.hpp"
#include "mesh/obj_io.hpp"
#include "mesh/tetrahedralize.hpp"
#include "mesh/topology.hpp"
#include "support/files.hpp"
#include "support/mesh_fixtures.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <gtest/gtest.h>
#include <map>
#include <set>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace edn {
namespace {


namespace fs = std::filesystem;

/// Appends an axis-aligned cube [o, o+s]^3 as 12 outward triangles.
void add_cube(SurfaceMesh& surface, double origin, double size) {
    const auto base = static_cast<Index>(surface.positions.size());
    for (int i = 0; i < 8; ++i)
        surface.positions.push_back({origin + size * (i & 1), origin + size * ((i >> 1) & 1),
                                     origin + size * ((i >> 2) & 1)});
    // Two triangles per face: z-, z+, y-, y+, x-, x+.
    const int tris[12][3] = {{0, 2, 1}, {1, 2, 3}, {4, 5, 6}, {5, 7, 6}, {0, 1, 4}, {1, 5, 4},
                             {2, 6, 3}, {3, 6, 7}, {0, 4, 2}, {2, 4, 6}, {1, 3, 5}, {3, 7, 5}};
    for (const auto& t : tris) surface.triangles.push_back({base + t[0], base + t[1], base + t[2]});
}

SurfaceMesh unit_cube() {
    SurfaceMesh surface;
    add_cube(surface, 0.0, 1.0);
    return surface;
}

double cell_volume(const TetMesh& mesh, const Cell& c) {
    return signed_volume(mesh.positions[c[0]], mesh.positions[c[1]], mesh.positions[c[2]],
                         mesh.positions[c[3]]);
}

/// Volume enclosed by an outward-oriented closed surface: sum of a . (b x c) / 6.
double enclosed_volume(const SurfaceMesh& surface) {
    double volume = 0;
    for (const Tri& t : surface.triangles) {
        const Vec3& a = surface.positions[t[0]];
        const Vec3& b = surface.positions[t[1]];
        const Vec3& c = surface.positions[t[2]];
        volume += (a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) +
                   a[2] * (b[0] * c[1] - b[1] * c[0])) /
                  6.0;
    }
    return volume;
}

/// Boundary faces (faces of exactly one cell), found by brute-force counting.
std::vector<Tri> boundary_faces(const TetMesh& mesh) {
    std::map<std::array<Index, 3>, std::pair<int, Tri>> count;
    const int local[4][3] = {{1, 2, 3}, {0, 3, 2}, {0, 1, 3}, {0, 2, 1}};
    for (const Cell& c : mesh.cells)
        for (const auto& f : local) {
            Tri tri{c[f[0]], c[f[1]], c[f[2]]};
            std::array<Index, 3> key = tri;
            std::sort(key.begin(), key.end());
            auto& entry = count[key];
            ++entry.first;
            entry.second = tri;
        }
    std::vector<Tri> result;
    for (const auto& [key, entry] : count) {
        EXPECT_LE(entry.first, 2) << "face shared by more than two cells";
        if (entry.first == 1) result.push_back(entry.second);
    }
    return result;
}

/// Every boundary edge must be shared by exactly two boundary faces, in opposite directions.
void expect_closed(const std::vector<Tri>& faces) {
    std::map<std::pair<Index, Index>, int> directed;
    for (const Tri& t : faces)
        for (int k = 0; k < 3; ++k) ++directed[{t[k], t[(k + 1) % 3]}];
    for (const auto& [edge, n] : directed) {
        EXPECT_EQ(n, 1) << "edge " << edge.first << "-" << edge.second << " used " << n << " times";
        EXPECT_EQ(directed.count({edge.second, edge.first}), 1u)
            << "boundary edge " << edge.first << "-" << edge.second << " has no twin";
    }
}

void expect_valid_mesh_of(const TetMesh& mesh, const SurfaceMesh& surface) {
    ASSERT_GT(mesh.num_cells(), 0);
    for (const Cell& c : mesh.cells) {
        for (Index v : c) ASSERT_TRUE(v >= 0 && v < mesh.num_vertices());
        EXPECT_GT(cell_volume(mesh, c), 0.0);
    }
    // TetGen merges adjacent facets that are coplanar to its tolerance (-T, 1e-8 relative) and
    // may triangulate the merged facet anew: nearly flat regions of a scanned surface move by
    // that much (the bunny's volume by 6e-8 relative).
    const double expected = enclosed_volume(surface);
    const double tolerance = 1e-7 * std::max(1.0, std::abs(expected));
    EXPECT_NEAR(total_volume(mesh), expected, tolerance);
    // The boundary of the mesh encloses the same volume as the input surface.
    SurfaceMesh boundary{mesh.positions, boundary_faces(mesh)};
    expect_closed(boundary.triangles);
    EXPECT_NEAR(enclosed_volume(boundary), expected, tolerance);
}

/// Runs `body` expecting edn::Error with `code`; returns the message.
std::string expect_error(ErrorCode code, const std::function<void()>& body) {
    try {
        body();
    } catch (const Error& error) {
        EXPECT_EQ(error_code_name(error.code()), std::string(error_code_name(code)))
            << error.what();
        return error.what();
    }
    ADD_FAILURE() << "no edn::Error thrown, expected " << error_code_name(code);
    return {};
}

/// True when this process has no child processes left (running or zombie).
bool no_children_left() {
    errno = 0;
    return ::waitpid(-1, nullptr, WNOHANG) == -1 && errno == ECHILD;
}

TEST(Tetrahedralize, UnitCubeHasVolumeOneAndClosedBoundary) {
    const SurfaceMesh cube = unit_cube();
    const TetMesh mesh = tetrahedralize(cube, {}, "cube");
    expect_valid_mesh_of(mesh, cube);
    EXPECT_NEAR(total_volume(mesh), 1.0, 1e-9);
    // All boundary vertices lie on the cube's surface.
    for (const Tri& t : boundary_faces(mesh))
        for (Index v : t) {
            const Vec3& p = mesh.positions[v];
            bool on_face = false;
            for (double x : p) on_face = on_face || x == 0.0 || x == 1.0;
            EXPECT_TRUE(on_face) << p[0] << " " << p[1] << " " << p[2];
        }
}

TEST(Tetrahedralize, MaxVolumeBoundHoldsAndLargeResultsPassThePipe) {
    TetrahedralizeOptions options;
    options.max_volume = 2e-4; // ~10^4 tets: far more than one pipe buffer of result
    const SurfaceMesh cube = unit_cube();
    const TetMesh mesh = tetrahedralize(cube, options, "cube");
    expect_valid_mesh_of(mesh, cube);
    EXPECT_GE(mesh.num_cells(), 5000); // volume 1 with tets of at most 2e-4
    for (const Cell& c : mesh.cells) EXPECT_LE(cell_volume(mesh, c), 2e-4 * (1 + 1e-9));
}

TEST(Tetrahedralize, IsolatedAndInProcessRunsAgree) {
    TetrahedralizeOptions isolated;
    isolated.max_volume = 0.01;
    TetrahedralizeOptions in_process = isolated;
    in_process.isolate = false;
    const TetMesh a = tetrahedralize(unit_cube(), isolated, "cube");
    const TetMesh b = tetrahedralize(unit_cube(), in_process, "cube");
    EXPECT_EQ(a.positions, b.positions);
    EXPECT_EQ(a.cells, b.cells);
}

TEST(Tetrahedralize, QualityOffStillMeshesTheCube) {
    TetrahedralizeOptions options;
    options.quality = 0;
    const SurfaceMesh cube = unit_cube();
    expect_valid_mesh_of(tetrahedralize(cube, options, "cube"), cube);
}

TEST(Tetrahedralize, SelfIntersectingSurfaceIsReportedNotCrashed) {
    SurfaceMesh surface;
    add_cube(surface, 0.0, 1.0); // triangles 0..11
    add_cube(surface, 0.5, 1.0); // triangles 12..23, overlapping the first cube
    const std::string message = expect_error(ErrorCode::SelfIntersecting,
                                             [&] { tetrahedralize(surface, {}, "two_cubes.obj"); });
    EXPECT_EQ(message.rfind("two_cubes.obj: self-intersecting surface: ", 0), 0u) << message;

    const IntersectionReport report = find_self_intersections(surface);
    ASSERT_FALSE(report.triangles.empty());
    EXPECT_TRUE(std::is_sorted(report.triangles.begin(), report.triangles.end()));
    EXPECT_NE(message.find(std::to_string(report.triangles.size()) + " intersecting triangles"),
              std::string::npos)
        << message;
    // Only faces that pass through the other cube can intersect: the first cube's x, y, z = 1
    // faces and the second cube's x, y, z = 0.5 faces (add_cube's order: z-, z+, y-, y+, x-, x+).
    const std::set<Index> candidates = {2, 3, 6, 7, 10, 11, 12, 13, 16, 17, 20, 21};
    std::set<int> planes_hit;
    for (Index t : report.triangles) {
        EXPECT_TRUE(candidates.count(t)) << "triangle " << t << " cannot intersect anything";
        planes_hit.insert(t / 2);
    }
    // Every crossing face pair really crosses, so each of the six faces must show up.
    EXPECT_EQ(planes_hit.size(), 6u);
}

TEST(Tetrahedralize, CleanSurfaceHasNoSelfIntersections) {
    EXPECT_TRUE(find_self_intersections(unit_cube()).triangles.empty());
    SurfaceMesh apart;
    add_cube(apart, 0.0, 1.0);
    add_cube(apart, 2.0, 1.0); // disjoint: two components, no intersection
    EXPECT_TRUE(find_self_intersections(apart).triangles.empty());
    const TetMesh mesh = tetrahedralize(apart, {}, "apart");
    expect_valid_mesh_of(mesh, apart);
    EXPECT_EQ(count_components(mesh), 2);
}

TEST(Tetrahedralize, SelfIntersectingFileFromTestData) {
    const fs::path path = test::data_path("bad/self_intersecting.obj");
    if (!fs::exists(path)) GTEST_SKIP() << path << " missing";
    SurfaceMesh surface = read_obj_surface(path);
    check_and_orient_surface(surface, path.string());
    EXPECT_FALSE(find_self_intersections(surface).triangles.empty());
    expect_error(ErrorCode::SelfIntersecting, [&] { tetrahedralize(surface, {}, path.string()); });
}

TEST(Tetrahedralize, OpenSurfaceFailsInsteadOfCrashing) {
    SurfaceMesh open = unit_cube();
    open.triangles.pop_back(); // the surface checks would catch this; TetGen alone must not crash
    for (bool isolate : {true, false}) {
        TetrahedralizeOptions options;
        options.isolate = isolate;
        const std::string message = expect_error(
            ErrorCode::MeshingFailed, [&] { tetrahedralize(open, options, "open.obj"); });
        EXPECT_NE(message.find("open.obj: TetGen produced no tetrahedra"), std::string::npos)
            << message;
    }
}

TEST(Tetrahedralize, CrashInTheChildBecomesAnError) {
    {
        TetrahedralizeOptions crash;
        crash.crash_child_for_tests = true;
        const std::string message = expect_error(
            ErrorCode::MeshingFailed, [&] { tetrahedralize(unit_cube(), crash, "crash.obj"); });
        EXPECT_NE(message.find("crash.obj: TetGen crashed (signal 11)"), std::string::npos)
            << message;
        expect_error(ErrorCode::MeshingFailed,
                     [&] { find_self_intersections(unit_cube(), crash); });
    }
    EXPECT_TRUE(no_children_left()); // every child was reaped
    // And meshing still works afterwards in this (surviving) process.
    EXPECT_GT(tetrahedralize(unit_cube(), {}, "cube").num_cells(), 0);
    EXPECT_TRUE(no_children_left());
}

TEST(Tetrahedralize, RejectsBadOptionsAndInput) {
    TetrahedralizeOptions options;
    options.quality = 0.5; // TetGen may not terminate below 1
    expect_error(ErrorCode::Usage, [&] { tetrahedralize(unit_cube(), options, "cube"); });
    options = {};
    options.max_volume = std::nan("");
    expect_error(ErrorCode::Usage, [&] { tetrahedralize(unit_cube(), options, "cube"); });
    options = {};
    options.max_volume = 1e-12; // 10^12 tets: refused up front instead of running for hours
    expect_error(ErrorCode::OutOfMemory, [&] { tetrahedralize(unit_cube(), options, "cube"); });
    expect_error(ErrorCode::EmptyMesh, [&] { tetrahedralize(SurfaceMesh{}, {}, "empty"); });
    SurfaceMesh bad_index = unit_cube();
    bad_index.triangles[3][1] = 8;
    const std::string message =
        expect_error(ErrorCode::IndexOutOfRange, [&] { tetrahedralize(bad_index, {}, "bad.obj"); });
    EXPECT_NE(message.find("bad.obj"), std::string::npos);
    SurfaceMesh nan = unit_cube();
    nan.positions[2][1] = std::nan("");
    expect_error(ErrorCode::NonFinite, [&] { tetrahedralize(nan, {}, "nan.obj"); });
}

/// The unit square extruded to `thickness` along z: 12 outward triangles.
SurfaceMesh thin_plate(double thickness) {
    SurfaceMesh plate = unit_cube();
    for (Vec3& p : plate.positions) p[2] *= thickness;
    return plate;
}

TEST(Tetrahedralize, QualityRefinementOfAThinPlateStopsAtTheSteinerBudget) {
    // Quality meshing of a 1 x 1 x 1e-4 plate adds points without end (seen: past 1.2 GB).
    for (bool isolate : {true, false}) {
        TetrahedralizeOptions options;
        options.isolate = isolate;
        options.max_steiner_points = 2000;
        const auto start = std::chrono::steady_clock::now();
        const std::string message = expect_error(
            ErrorCode::OutOfMemory, [&] { tetrahedralize(thin_plate(1e-4), options, "thin.obj"); });
        EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
                  30.0);
        EXPECT_EQ(message.rfind("thin.obj: meshing needs more than 2000 added points", 0), 0u)
            << message;
        EXPECT_NE(message.find("--quality 0"), std::string::npos) << message;
    }
    // The budget does not get in the way of a plate that TetGen can finish, nor of -a.
    TetrahedralizeOptions options;
    options.max_steiner_points = 20000;
    const SurfaceMesh plate = thin_plate(1e-1);
    expect_valid_mesh_of(tetrahedralize(plate, options, "plate"), plate);
    options.max_steiner_points = 10;
    options.max_volume = 1e-3;
    const SurfaceMesh cube = unit_cube();
    expect_valid_mesh_of(tetrahedralize(cube, options, "cube"), cube);
}

TEST(Tetrahedralize, TimeLimitStopsTheChild) {
    TetrahedralizeOptions options;
    options.max_steiner_points = 0; // unbounded: only the clock stops it
    options.time_limit_s = 0.5;
    const auto start = std::chrono::steady_clock::now();
    const std::string message = expect_error(
        ErrorCode::OutOfMemory, [&] { tetrahedralize(thin_plate(1e-4), options, "thin.obj"); });
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
              10.0);
    EXPECT_EQ(message.rfind("thin.obj: TetGen did not finish within the time limit of 0.5 s", 0),
              0u)
        << message;
    EXPECT_TRUE(no_children_left()); // the child was killed and reaped
}

TEST(Tetrahedralize, AssetsMeshIntoValidSolids) {
    const fs::path assets = test::source_dir() / "assets";
    std::vector<fs::path> objs;
    if (fs::is_directory(assets))
        for (const auto& entry : fs::directory_iterator(assets))
            if (entry.path().extension() == ".obj") objs.push_back(entry.path());
    if (objs.empty()) GTEST_SKIP() << "no assets/*.obj";
    std::sort(objs.begin(), objs.end());
    TetrahedralizeOptions coarse;
    coarse.quality = 2.0;
    for (const fs::path& path : objs) {
        SCOPED_TRACE(path.string());
        SurfaceMesh surface = read_obj_surface(path);
        check_and_orient_surface(surface, path.string());
        TetMesh mesh = tetrahedralize(surface, coarse, path.string());
        expect_valid_mesh_of(mesh, surface);
    }
}

TEST(Tetrahedralize, UvSphereMeshesWithFewAddedPoints) {
    // A UV sphere: planar quads split into two triangles and fans of thin triangles at the poles,
    // as graphics tools export them. Given to TetGen as one facet per triangle with distinct
    // markers, every quad diagonal became a segment to recover and refine: 8.8x the surface's
    // points on this sphere, and more than 5 minutes for a 200 x 200 one (now 2.3x and 9 s).
    const int rings = 64, segments = 64;
    SurfaceMesh surface;
    surface.positions.push_back({0, 0, 1});
    for (int i = 1; i < rings; ++i)
        for (int j = 0; j < segments; ++j) {
            const double theta = M_PI * i / rings, phi = 2 * M_PI * j / segments;
            surface.positions.push_back({std::sin(theta) * std::cos(phi),
                                         std::sin(theta) * std::sin(phi), std::cos(theta)});
        }
    surface.positions.push_back({0, 0, -1});
    const auto at = [&](int ring, int j) { return 1 + (ring - 1) * segments + (j % segments); };
    const Index south = static_cast<Index>(surface.positions.size()) - 1;
    for (int j = 0; j < segments; ++j) {
        surface.triangles.push_back({0, at(1, j), at(1, j + 1)});
        for (int i = 1; i + 1 < rings; ++i) {
            surface.triangles.push_back({at(i, j), at(i + 1, j), at(i, j + 1)});
            surface.triangles.push_back({at(i, j + 1), at(i + 1, j), at(i + 1, j + 1)});
        }
        surface.triangles.push_back({south, at(rings - 1, j + 1), at(rings - 1, j)});
    }
    check_and_orient_surface(surface, "uv sphere");
    const TetMesh mesh = tetrahedralize(surface, {}, "uv sphere");
    expect_valid_mesh_of(mesh, surface);
    EXPECT_LT(mesh.num_vertices(), 4 * static_cast<Index>(surface.positions.size()));
}

// ---- cavities -----------------------------------------------------------------------------------

/// Reverses the triangles of `surface` from `first` on (an appended shell turned inside out).
void flip_from(SurfaceMesh& surface, std::size_t first) {
    for (std::size_t t = first; t < surface.triangles.size(); ++t)
        std::swap(surface.triangles[t][1], surface.triangles[t][2]);
}

/// Centroid of a cell.
Vec3 cell_centroid(const TetMesh& mesh, const Cell& c) {
    Vec3 centroid{};
    for (Index v : c)
        for (int k = 0; k < 3; ++k) centroid[k] += mesh.positions[v][k] / 4;
    return centroid;
}

/// Chebyshev distance of `p` from the centre (0.5, 0.5, 0.5) of the nested test cubes: a cube
/// [0.5 - h, 0.5 + h]^3 is where it is <= h.
double distance_from_centre(const Vec3& p) {
    return std::max({std::abs(p[0] - 0.5), std::abs(p[1] - 0.5), std::abs(p[2] - 0.5)});
}

/// Area and normal (b - a) x (c - a) / 2 of a triangle of `mesh`.
Vec3 area_vector(const TetMesh& mesh, const Tri& t) {
    const Vec3& a = mesh.positions[t[0]];
    const Vec3& b = mesh.positions[t[1]];
    const Vec3& c = mesh.positions[t[2]];
    const Vec3 u{b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    const Vec3 w{c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    return {0.5 * (u[1] * w[2] - u[2] * w[1]), 0.5 * (u[2] * w[0] - u[0] * w[2]),
            0.5 * (u[0] * w[1] - u[1] * w[0])};
}

TEST(Tetrahedralize, HollowCubeKeepsItsCavityWithEitherInnerOrientation) {
    for (bool inner_inward : {true, false}) {
        SCOPED_TRACE(inner_inward ? "inner cube facing inward" : "inner cube facing outward");
        SurfaceMesh surface = unit_cube();
        add_cube(surface, 0.25, 0.5);
        if (inner_inward) flip_from(surface, 12);
        check_and_orient_surface(surface, "hollow");
        EXPECT_NEAR(enclosed_volume(surface), 0.875, 1e-14) << "cavity shell oriented inward";
        const TetMesh mesh = tetrahedralize(surface, {}, "hollow");
        expect_valid_mesh_of(mesh, surface);
        EXPECT_NEAR(total_volume(mesh), 0.875, 1e-9);
        EXPECT_EQ(num_components(build_topology(mesh)), 1);
        for (const Cell& c : mesh.cells)
            EXPECT_GT(distance_from_centre(cell_centroid(mesh, c)), 0.25) << "cell in the cavity";

        // The boundary is the outer cube (normals away from the centre) and the cavity's walls
        // (normals towards the centre, into the cavity), each with its full area.
        double outer_area = 0, cavity_area = 0;
        for (const Tri& t : boundary_faces(mesh)) {
            double lo = 1, hi = 0;
            Vec3 centroid{};
            for (Index v : t) {
                const double d = distance_from_centre(mesh.positions[v]);
                lo = std::min(lo, d);
                hi = std::max(hi, d);
                for (int k = 0; k < 3; ++k) centroid[k] += mesh.positions[v][k] / 3;
            }
            const Vec3 area = area_vector(mesh, t);
            const double outwards = area[0] * (centroid[0] - 0.5) + area[1] * (centroid[1] - 0.5) +
                                    area[2] * (centroid[2] - 0.5);
            const double size =
                std::sqrt(area[0] * area[0] + area[1] * area[1] + area[2] * area[2]);
            if (std::abs(lo - 0.5) < 1e-12 && std::abs(hi - 0.5) < 1e-12) {
                outer_area += size;
                EXPECT_GT(outwards, 0.0);
            } else if (std::abs(lo - 0.25) < 1e-12 && std::abs(hi - 0.25) < 1e-12) {
                cavity_area += size;
                EXPECT_LT(outwards, 0.0);
            } else {
                ADD_FAILURE() << "boundary face off both cubes";
            }
        }
        EXPECT_NEAR(outer_area, 6.0, 1e-9);
        EXPECT_NEAR(cavity_area, 6 * 0.25, 1e-9);
    }
}

TEST(Tetrahedralize, CavityIsCarvedWhateverTheShellsOrientation) {
    // tetrahedralize finds the cavities itself: both shells outward (unchecked) still mesh hollow.
    SurfaceMesh surface = unit_cube();
    add_cube(surface, 0.25, 0.5);
    const TetMesh mesh = tetrahedralize(surface, {}, "hollow, both outward");
    EXPECT_NEAR(total_volume(mesh), 0.875, 1e-9);
}

TEST(Tetrahedralize, SolidInsideACavityIsASeparateBody) {
    // Three nested cubes, orientations mixed: body, cavity, a solid cube floating in the cavity.
    SurfaceMesh surface = unit_cube();
    flip_from(surface, 0);
    add_cube(surface, 0.25, 0.5);
    add_cube(surface, 0.375, 0.25);
    flip_from(surface, 24);
    check_and_orient_surface(surface, "nested");
    const double expected = 1.0 - 0.5 * 0.5 * 0.5 + 0.25 * 0.25 * 0.25;
    EXPECT_NEAR(enclosed_volume(surface), expected, 1e-14);
    const TetMesh mesh = tetrahedralize(surface, {}, "nested");
    expect_valid_mesh_of(mesh, surface);
    EXPECT_NEAR(total_volume(mesh), expected, 1e-9);
    EXPECT_EQ(num_components(build_topology(mesh)), 2);
    double innermost = 0;
    for (const Cell& c : mesh.cells) {
        const double d = distance_from_centre(cell_centroid(mesh, c));
        EXPECT_FALSE(d > 0.125 && d < 0.25) << "cell in the cavity";
        if (d < 0.125) innermost += cell_volume(mesh, c);
    }
    EXPECT_NEAR(innermost, 0.25 * 0.25 * 0.25, 1e-9);
}

TEST(Tetrahedralize, DisjointCubesSideBySideAreTwoBodies) {
    SurfaceMesh surface = unit_cube();
    add_cube(surface, 2.0, 1.0);
    check_and_orient_surface(surface, "two cubes");
    const TetMesh mesh = tetrahedralize(surface, {}, "two cubes");
    expect_valid_mesh_of(mesh, surface);
    EXPECT_NEAR(total_volume(mesh), 2.0, 1e-9);
    EXPECT_EQ(num_components(build_topology(mesh)), 2);
}

// ---- mesh_loader --------------------------------------------------------------------------------

/// A fresh temporary directory, removed at the end of the test.
struct TempDir : test::TempDir {
    TempDir() : test::TempDir("edn_tetrahedralize_test") {}
};

using test::write_text;

TEST(MeshLoader, DispatchesOnCaseInsensitiveExtension) {
    const TempDir dir;
    std::string obj_text;
    const SurfaceMesh cube = unit_cube();
    for (const Vec3& p : cube.positions)
        obj_text += "v " + std::to_string(p[0]) + " " + std::to_string(p[1]) + " " +
                    std::to_string(p[2]) + "\n";
    for (const Tri& t : cube.triangles)
        obj_text += "f " + std::to_string(t[0] + 1) + " " + std::to_string(t[1] + 1) + " " +
                    std::to_string(t[2] + 1) + "\n";
    write_text(dir.path / "CUBE.OBJ", obj_text);
    const TetMesh from_obj = load_tet_mesh(dir.path / "CUBE.OBJ");
    expect_valid_mesh_of(from_obj, cube);

    const fs::path node = test::data_path("good/cube.node");
    if (fs::exists(node)) {
        const TetMesh a = load_tet_mesh(node);
        const TetMesh b = load_tet_mesh(test::data_path("good/cube.ele"));
        EXPECT_EQ(a.cells, b.cells);
        EXPECT_EQ(a.positions, b.positions);
        EXPECT_NEAR(total_volume(a), 1.0, 1e-12);
    }
    const fs::path msh = test::data_path("good/cube_v41.msh");
    if (fs::exists(msh)) {
        EXPECT_NEAR(total_volume(load_tet_mesh(msh)), 1.0, 1e-12);
    }
}

TEST(MeshLoader, UnknownFormatAndMissingFile) {
    const TempDir dir;
    write_text(dir.path / "mesh.xyz", "1 2 3\n");
    const std::string message =
        expect_error(ErrorCode::Parse, [&] { load_tet_mesh(dir.path / "mesh.xyz"); });
    EXPECT_NE(message.find("unknown mesh format '.xyz' (expected .obj, .node, .ele or .msh)"),
              std::string::npos)
        << message;
    expect_error(ErrorCode::Parse, [&] { load_tet_mesh(dir.path / "no_extension"); });
    const std::string missing =
        expect_error(ErrorCode::Io, [&] { load_tet_mesh(dir.path / "missing.obj"); });
    EXPECT_NE(missing.find("missing.obj"), std::string::npos);
    expect_error(ErrorCode::Io, [&] { load_tet_mesh(dir.path / "missing.node"); });
    expect_error(ErrorCode::Io, [&] { load_tet_mesh(dir.path / "missing.msh"); });
}

TEST(MeshLoader, RefusesDevicesPipesAndDirectoriesBeforeOpeningThem) {
    const TempDir dir;
    // A pipe blocks open() until a writer comes, and a link to a device reads without end (or
    // nothing): each is refused by its kind, before it is opened.
    for (const char* name : {"pipe.obj", "pipe.node", "pipe.msh"})
        ASSERT_EQ(::mkfifo((dir.path / name).c_str(), 0600), 0) << name;
    for (const char* name : {"null.obj", "null.node", "null.msh"})
        fs::create_symlink("/dev/null", dir.path / name);
    for (const char* name :
         {"pipe.obj", "pipe.node", "pipe.msh", "null.obj", "null.node", "null.msh"}) {
        const std::string message =
            expect_error(ErrorCode::Io, [&] { load_tet_mesh(dir.path / name); });
        EXPECT_NE(message.find(std::string(name) +
                               ": cannot open: not a regular file (a device, pipe or socket)"),
                  std::string::npos)
            << message;
    }
    // The .ele of a pair is checked too (named by the .node).
    write_text(dir.path / "pair.node", "4 3 0 0\n0 0 0 0\n1 1 0 0\n2 0 1 0\n3 0 0 1\n");
    fs::create_symlink("/dev/null", dir.path / "pair.ele");
    std::string message =
        expect_error(ErrorCode::Io, [&] { load_tet_mesh(dir.path / "pair.node"); });
    EXPECT_NE(message.find("pair.ele: cannot open: not a regular file"), std::string::npos)
        << message;
    fs::create_directory(dir.path / "folder.obj");
    message = expect_error(ErrorCode::Io, [&] { load_tet_mesh(dir.path / "folder.obj"); });
    EXPECT_NE(message.find("folder.obj: cannot open: is a directory"), std::string::npos)
        << message;
    fs::create_symlink(dir.path / "nothing.node", dir.path / "dangling.node");
    message = expect_error(ErrorCode::Io, [&] { load_tet_mesh(dir.path / "dangling.node"); });
    EXPECT_NE(message.find("dangling.node: cannot open: no such file"), std::string::npos)
        << message;
}

} // namespace
} // namespace edn

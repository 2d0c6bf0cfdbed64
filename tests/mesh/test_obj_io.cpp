#include "core/error.hpp"
#include "mesh/obj_io.hpp"
#include "support/errors.hpp"
#include "support/files.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <functional>
#include <gtest/gtest.h>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <unistd.h>

namespace edn {
namespace {

using test::expect_error;

namespace fs = std::filesystem;

/// Reads and checks a bad file, expecting `code` and the file name in the message.
void expect_bad_obj(const std::string& name, ErrorCode code, const std::string& fragment = "") {
    SCOPED_TRACE(name);
    const fs::path path = test::data_path("bad/" + name);
    ASSERT_TRUE(fs::exists(path));
    expect_error(
        [&] {
            SurfaceMesh surface = read_obj_surface(path);
            check_and_orient_surface(surface, path.string());
        },
        code, name);
    if (!fragment.empty())
        expect_error(
            [&] {
                SurfaceOrigin origin; // as the loader does: the file's numbering in messages
                SurfaceMesh surface = read_obj_surface(path, &origin);
                check_and_orient_surface(surface, path.string(), &origin);
            },
            code, fragment);
}

/// Enclosed volume by the divergence theorem (brute force, no shared code with the engine).
double enclosed_volume(const SurfaceMesh& s) {
    double sum = 0.0;
    for (const Tri& t : s.triangles) {
        const Vec3& a = s.positions[t[0]];
        const Vec3& b = s.positions[t[1]];
        const Vec3& c = s.positions[t[2]];
        sum += a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) +
               a[2] * (b[0] * c[1] - b[1] * c[0]);
    }
    return sum / 6.0;
}

/// Consistently oriented and closed: every directed edge occurs once and its reverse once.
void expect_consistent(const SurfaceMesh& s) {
    std::map<std::pair<Index, Index>, int> directed;
    for (const Tri& t : s.triangles)
        for (int k = 0; k < 3; ++k) ++directed[{t[k], t[(k + 1) % 3]}];
    for (const auto& [edge, count] : directed) {
        EXPECT_EQ(count, 1) << edge.first << "->" << edge.second;
        EXPECT_EQ(directed.count({edge.second, edge.first}), 1u)
            << edge.first << "-" << edge.second;
    }
}

TEST(ObjIo, BadFiles) {
    expect_bad_obj("empty.obj", ErrorCode::EmptyMesh, "no faces");
    expect_bad_obj("points_only.obj", ErrorCode::EmptyMesh, "no faces");
    expect_bad_obj("lines_only.obj", ErrorCode::EmptyMesh, "no faces");
    expect_bad_obj("out_of_range_index.obj", ErrorCode::IndexOutOfRange,
                   "face 3 references vertex 12 of 8");
    expect_bad_obj("zero_index.obj", ErrorCode::IndexOutOfRange, "face 3 references vertex 0");
    expect_bad_obj("nan_coordinate.obj", ErrorCode::NonFinite,
                   "vertex 5 has a non-finite coordinate");
    // binary_garbage.obj: 512 bytes from a fixed-seed LCG, starting with an ELF magic and NULs.
    expect_bad_obj("binary_garbage.obj", ErrorCode::Parse, "not a text OBJ file");
    expect_bad_obj("open_surface.obj", ErrorCode::OpenSurface, "open surface: 4 boundary edges");
    // Vertices and faces numbered as in the file (1-based), as the files' comments name them.
    expect_bad_obj("non_manifold_edge.obj", ErrorCode::NonManifold,
                   "non-manifold edge at vertices 1-2");
    expect_bad_obj("non_manifold_vertex.obj", ErrorCode::NonManifold, "non-manifold vertex 1");
    expect_bad_obj("degenerate_triangle.obj", ErrorCode::DegenerateElement,
                   "degenerate_triangle.obj:7: face 2 is degenerate (zero area)");
}

TEST(ObjIo, MessagesNumberVerticesAndFacesAsTheFileDoes) {
    // Welding renumbers: the unused first vertex is dropped and the duplicate of vertex 2 merged,
    // so the surface's own numbering differs from the file's; messages must use the file's.
    const test::TempDir scratch("edn_obj");
    const fs::path path = scratch / "shifted.obj";
    std::ofstream(path) << "# two tetrahedra touching at vertex 3 only\n"
                        << "v 9 9 9\nv 1 0 0\nv 0 0 0\nv 0 1 0\nv 0 0 1\n"
                        << "v -1 0 0\nv 0 -1 0\nv 0 0 -1\nv 1 0 0\n"
                        << "g a\nf 3 4 9\nf 3 2 5\nf 3 5 4\nf 2 4 5\n"
                        << "g b\nf 3 6 7\nf 3 7 8\nf 3 8 6\nf 7 6 8\n";
    expect_error(
        [&] {
            SurfaceOrigin origin;
            SurfaceMesh surface = read_obj_surface(path, &origin);
            EXPECT_EQ(origin.file_vertex.size(), surface.positions.size());
            check_and_orient_surface(surface, path.string(), &origin);
        },
        ErrorCode::NonManifold, "non-manifold vertex 3");
    // Without the origin the surface's own order is used, still from 1 (file vertex 3 is the
    // second surface vertex).
    expect_error(
        [&] {
            SurfaceMesh surface = read_obj_surface(path);
            check_and_orient_surface(surface, path.string());
        },
        ErrorCode::NonManifold, "non-manifold vertex 2");
    // After a quad (two triangles) a degenerate face 2 is the third triangle: it is named by its
    // face number and line in the file.
    const fs::path flat = scratch / "flat_quad.obj";
    std::ofstream(flat) << "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 2 0 0\n"
                        << "f 1 2 3 4\nf 1 5 2\n";
    expect_error(
        [&] {
            SurfaceOrigin origin;
            SurfaceMesh surface = read_obj_surface(flat, &origin);
            check_and_orient_surface(surface, flat.string(), &origin);
        },
        ErrorCode::DegenerateElement, "flat_quad.obj:7: face 2 is degenerate");
}

TEST(ObjIo, MissingFileAndDirectoryAreIoErrors) {
    expect_error([] { read_obj_surface(test::data_path("bad/no_such_file.obj")); }, ErrorCode::Io,
                 "no_such_file.obj");
    const test::TempDir scratch("edn_obj");
    const fs::path dir = scratch / "folder.obj";
    fs::create_directories(dir);
    expect_error([&] { read_obj_surface(dir); }, ErrorCode::Io, "folder.obj");
}

TEST(ObjIo, CoordinatesWhoseVolumesOverflowAreRejected) {
    // At 1e308 the weld tolerance (from the squared diagonal) overflowed and every triangle
    // looked degenerate.
    const test::TempDir scratch("edn_obj");
    const fs::path path = scratch / "huge.obj";
    std::ofstream(path) << "v 0 0 0\nv 1e308 0 0\nv 0 1e308 0\nv 0 0 1e308\n"
                        << "f 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n";
    expect_error([&] { read_obj_surface(path); }, ErrorCode::NonFinite,
                 "huge.obj:2: vertex 2 has coordinate 1e308, out of range");
}

TEST(ObjIo, CubeOfQuadsIsWeldedAndTriangulated) {
    SurfaceMesh cube = read_obj_surface(test::data_path("good/cube_quads.obj"));
    // 24 face vertices weld to 8 corners; the unreferenced vertex is dropped.
    ASSERT_EQ(cube.positions.size(), 8u);
    ASSERT_EQ(cube.triangles.size(), 12u);
    std::vector<Vec3> sorted = cube.positions;
    std::sort(sorted.begin(), sorted.end());
    std::vector<Vec3> expected;
    for (int x = 0; x < 2; ++x)
        for (int y = 0; y < 2; ++y)
            for (int z = 0; z < 2; ++z) expected.push_back({double(x), double(y), double(z)});
    EXPECT_EQ(sorted, expected);
    expect_consistent(cube);
    EXPECT_NEAR(enclosed_volume(cube), 1.0, 1e-14);
    const SurfaceMesh before = cube;
    check_and_orient_surface(cube, "cube_quads.obj");
    EXPECT_EQ(cube.triangles, before.triangles) << "already outward: nothing to change";
}

/// An OBJ of the prism of height 1 over the planar polygon `outline` (CCW seen from +z), placed at
/// (dx, dy), its caps written as one n-gon `f` each starting at outline vertex `first`.
std::string ngon_prism_obj(const std::vector<std::array<double, 2>>& outline, std::size_t first,
                           double dx, double dy) {
    const std::size_t n = outline.size();
    std::ostringstream obj;
    obj.precision(17);
    for (int z = 0; z < 2; ++z)
        for (std::size_t i = 0; i < n; ++i) {
            const auto& q = outline[(first + i) % n];
            obj << "v " << q[0] + dx << " " << q[1] + dy << " " << z << "\n";
        }
    for (std::size_t i = 0; i < n; ++i) { // side quads, outward
        const std::size_t j = (i + 1) % n;
        obj << "f " << i + 1 << " " << j + 1 << " " << n + j + 1 << " " << n + i + 1 << "\n";
    }
    obj << "f";
    for (std::size_t i = n; i-- > 0;) obj << " " << i + 1; // bottom: seen from -z
    obj << "\nf";
    for (std::size_t i = 0; i < n; ++i) obj << " " << n + i + 1;
    obj << "\n";
    return obj.str();
}

TEST(ObjIo, NonConvexPolygonFacesAreTriangulatedWherever) {
    // The reader's own triangulation tested convexity relative to the origin and dropped what it
    // could not clip: an L-shaped n-gon starting at its reflex corner, or a gear away from the
    // origin, came out degenerate or open. Ear clipping in the polygon's plane gets them all.
    std::vector<std::array<double, 2>> star, gear;
    for (int k = 0; k < 10; ++k) {
        const double r = k % 2 == 0 ? 1.0 : 0.4, a = M_PI * k / 5;
        star.push_back({r * std::cos(a), r * std::sin(a)});
    }
    for (int k = 0; k < 64; ++k) {
        const double r = (k / 2) % 2 == 0 ? 1.0 : 0.8, a = 2 * M_PI * k / 64;
        gear.push_back({r * std::cos(a), r * std::sin(a)});
    }
    const std::vector<std::array<double, 2>> shapes[] = {
        {{0, 0}, {2, 0}, {2, 1}, {1, 1}, {1, 2}, {0, 2}},                 // L, area 3
        {{0, 0}, {3, 0}, {3, 2}, {2, 2}, {2, 1}, {1, 1}, {1, 2}, {0, 2}}, // U, area 5
        star,
        gear};
    const test::TempDir scratch("edn_obj");
    const fs::path path = scratch / "prism.obj";
    for (const auto& outline : shapes) {
        double area = 0;
        for (std::size_t i = 0; i < outline.size(); ++i) {
            const auto& a = outline[i];
            const auto& b = outline[(i + 1) % outline.size()];
            area += 0.5 * (a[0] * b[1] - b[0] * a[1]);
        }
        for (std::size_t first = 0; first < std::min<std::size_t>(outline.size(), 8); ++first)
            for (const auto& [dx, dy] : {std::pair{0.0, 0.0}, {5.0, 5.0}, {-7.0, 3.0}}) {
                SCOPED_TRACE(std::to_string(outline.size()) + "-gon from " + std::to_string(first) +
                             " at " + std::to_string(dx));
                std::ofstream(path) << ngon_prism_obj(outline, first, dx, dy);
                SurfaceMesh prism = read_obj_surface(path);
                EXPECT_EQ(prism.triangles.size(), 4 * outline.size() - 4); // 2n sides + 2(n - 2)
                expect_consistent(prism);
                EXPECT_NEAR(enclosed_volume(prism), area, 1e-12 * area);
                check_and_orient_surface(prism, "prism.obj");
            }
    }
    // A self-intersecting (bow-tie) face: one clear line, no triangles made up.
    std::ofstream(path) << "v 0 0 0\nv 1 1 0\nv 1 0 0\nv 0 1 0\nf 1 2 3 4\n";
    expect_error([&] { read_obj_surface(path); }, ErrorCode::DegenerateElement,
                 "prism.obj:5: face 1 (4 vertices) cannot be triangulated");
}

TEST(ObjIo, MixedOrientationIsFixed) {
    SurfaceMesh cube = read_obj_surface(test::data_path("good/cube_mixed_orientation.obj"));
    ASSERT_EQ(cube.triangles.size(), 12u);
    check_and_orient_surface(cube, "cube_mixed_orientation.obj");
    expect_consistent(cube);
    EXPECT_NEAR(enclosed_volume(cube), 1.0, 1e-14);

    // Entirely inside-out: flipped back.
    for (Tri& t : cube.triangles) std::swap(t[0], t[1]);
    check_and_orient_surface(cube, "inside_out");
    EXPECT_NEAR(enclosed_volume(cube), 1.0, 1e-14);
}

TEST(ObjIo, CavityShellIsOrientedIntoTheCavity) {
    // Whatever the file's orientations, the outer cube ends up outward and the cavity's cube
    // inward (normals away from the material): the signed enclosed volume is the material's.
    const SurfaceMesh file = read_obj_surface(test::data_path("good/hollow_cube.obj"));
    ASSERT_EQ(file.triangles.size(), 24u);
    for (int variant = 0; variant < 4; ++variant) {
        SCOPED_TRACE("variant " + std::to_string(variant));
        SurfaceMesh surface = file;
        for (std::size_t t = 0; t < surface.triangles.size(); ++t)
            if (variant & (t < 12 ? 1 : 2))
                std::swap(surface.triangles[t][1], surface.triangles[t][2]);
        check_and_orient_surface(surface, "hollow_cube.obj");
        expect_consistent(surface);
        EXPECT_NEAR(enclosed_volume(surface), 1.0 - 0.125, 1e-14);
        for (const Tri& t : surface.triangles) {
            // Normal against the direction from the centre: positive on the outer cube, negative
            // on the cavity's walls (vertices 8..15 after welding, in file order).
            const Vec3& a = surface.positions[t[0]];
            const Vec3& b = surface.positions[t[1]];
            const Vec3& c = surface.positions[t[2]];
            const Vec3 u{b[0] - a[0], b[1] - a[1], b[2] - a[2]};
            const Vec3 w{c[0] - a[0], c[1] - a[1], c[2] - a[2]};
            const Vec3 n{u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2],
                         u[0] * w[1] - u[1] * w[0]};
            double outwards = 0;
            for (int k = 0; k < 3; ++k) outwards += n[k] * ((a[k] + b[k] + c[k]) / 3 - 0.5);
            if (t[0] < 8)
                EXPECT_GT(outwards, 0.0);
            else
                EXPECT_LT(outwards, 0.0);
        }
    }
}

TEST(ObjIo, SelfIntersectingSurfacePassesSurfaceChecks) {
    // Two overlapping closed cubes: only TetGen's intersection test can reject this one.
    SurfaceMesh surface = read_obj_surface(test::data_path("bad/self_intersecting.obj"));
    EXPECT_EQ(surface.positions.size(), 16u);
    EXPECT_EQ(surface.triangles.size(), 24u);
    for (Tri& t : surface.triangles)
        if (t[0] >= 8) std::swap(t[1], t[2]); // second cube inside out
    check_and_orient_surface(surface, "self_intersecting.obj");
    expect_consistent(surface);
    EXPECT_NEAR(enclosed_volume(surface), 2.0, 1e-14);
}

TEST(ObjIo, NegativeIndicesAndForwardReferences) {
    const test::TempDir scratch("edn_obj");
    const fs::path path = scratch / "relative.obj";
    {
        std::ofstream out(path);
        out << "v 0 0 0\nv 1 0 0\nv 0 1 0\nf -3 -1 -2\n" // relative to the 3 so far
            << "v 0 0 1\nf 1 2 4\nf -4 -1 -2\nf 2 -2 -1\n";
    }
    SurfaceMesh tet = read_obj_surface(path);
    ASSERT_EQ(tet.triangles.size(), 4u);
    EXPECT_EQ(tet.triangles[0], (Tri{0, 2, 1}));
    EXPECT_EQ(tet.triangles[2], (Tri{0, 3, 2}));
    check_and_orient_surface(tet, path.string());
    EXPECT_NEAR(enclosed_volume(tet), 1.0 / 6.0, 1e-15);

    const fs::path bad = scratch / "relative_bad.obj";
    {
        std::ofstream out(bad);
        out << "v 0 0 0\nv 1 0 0\nf -3 -1 -2\nv 0 1 0\n";
    }
    expect_error([&] { read_obj_surface(bad); }, ErrorCode::IndexOutOfRange,
                 "face 1 references vertex -3 but only 2 vertices precede it");
}

TEST(ObjIo, WeldingMatchesBruteForce) {
    // Distinct random points, each written 1-3 times with jitter far below the weld tolerance.
    std::mt19937 rng(11);
    std::uniform_real_distribution<double> coordinate(-1.0, 1.0);
    std::uniform_real_distribution<double> jitter(-1e-13, 1e-13);
    const int distinct = 300;
    std::vector<Vec3> points(distinct);
    for (Vec3& p : points) p = {coordinate(rng), coordinate(rng), coordinate(rng)};
    std::vector<Vec3> written;
    for (int i = 0; i < distinct; ++i) {
        const int count = 1 + static_cast<int>(rng() % 3);
        for (int c = 0; c < count; ++c) {
            written.push_back({points[i][0] + jitter(rng), points[i][1] + jitter(rng),
                               points[i][2] + jitter(rng)});
        }
    }
    std::shuffle(written.begin(), written.end(), rng);
    // Rebuild which written slot holds which point by nearest search (brute force, O(n^2)).
    std::vector<int> owner(written.size());
    for (std::size_t w = 0; w < written.size(); ++w) {
        double best = 1e300;
        for (int i = 0; i < distinct; ++i) {
            const double d = std::hypot(written[w][0] - points[i][0], written[w][1] - points[i][1],
                                        written[w][2] - points[i][2]);
            if (d < best) best = d, owner[w] = i;
        }
    }
    // Triangles over random written slots, skipping points 0..9 so they stay unreferenced.
    SurfaceMesh input;
    input.positions = written;
    std::set<int> referenced;
    for (int t = 0; t < 400; ++t) {
        Tri tri{};
        for (Index& v : tri) {
            do v = static_cast<Index>(rng() % written.size());
            while (owner[v] < 10);
            referenced.insert(owner[v]);
        }
        input.triangles.push_back(tri);
    }
    const test::TempDir scratch("edn_obj");
    const fs::path path = scratch / "weld.obj";
    write_obj_surface(path, input);
    const SurfaceMesh welded = read_obj_surface(path);

    // Brute-force count of clusters among referenced written vertices.
    EXPECT_EQ(welded.positions.size(), referenced.size());
    ASSERT_EQ(welded.triangles.size(), input.triangles.size());
    for (std::size_t t = 0; t < input.triangles.size(); ++t)
        for (int k = 0; k < 3; ++k) {
            const Vec3& original = points[owner[input.triangles[t][k]]];
            const Vec3& got = welded.positions[welded.triangles[t][k]];
            EXPECT_LT(std::hypot(original[0] - got[0], original[1] - got[1], original[2] - got[2]),
                      1e-12);
        }
    for (std::size_t a = 0; a < welded.positions.size(); ++a)
        for (std::size_t b = a + 1; b < welded.positions.size(); ++b) {
            const Vec3& p = welded.positions[a];
            const Vec3& q = welded.positions[b];
            EXPECT_GT(std::hypot(p[0] - q[0], p[1] - q[1], p[2] - q[2]), 1e-6);
        }
}

TEST(ObjIo, WriteReadRoundTripIsExact) {
    SurfaceMesh cube = read_obj_surface(test::data_path("good/cube_quads.obj"));
    for (Vec3& p : cube.positions)
        for (double& x : p) x = x * 0.1 + 1.0 / 3.0; // values that need 17 digits
    const test::TempDir scratch("edn_obj");
    const fs::path path = scratch / "round.obj";
    write_obj_surface(path, cube);
    const SurfaceMesh back = read_obj_surface(path);
    EXPECT_EQ(back.positions, cube.positions);
    EXPECT_EQ(back.triangles, cube.triangles);
    EXPECT_FALSE(fs::exists(path.string() + ".tmp." + std::to_string(::getpid())));
}

} // namespace
} // namespace edn

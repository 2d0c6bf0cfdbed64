// Shell nesting and cavity points. References are boxes: whether a point lies in a cube is
// decided by its coordinates, not by the winding numbers under test.

#include "core/error.hpp"
#include "mesh/shell_nesting.hpp"

#include <algorithm>
#include <gtest/gtest.h>
#include <random>
#include <utility>

namespace edn {
namespace {

/// An axis-aligned cube [origin, origin + size]^3 as 12 triangles, outward unless `inward`.
struct CubeSpec {
    Vec3 origin;
    double size;
    bool inward = false;
};

/// Appends the cube's vertices and triangles to `surface`.
void add_cube(SurfaceMesh& surface, const CubeSpec& cube) {
    const auto base = static_cast<Index>(surface.positions.size());
    for (int i = 0; i < 8; ++i)
        surface.positions.push_back({cube.origin[0] + cube.size * (i & 1),
                                     cube.origin[1] + cube.size * ((i >> 1) & 1),
                                     cube.origin[2] + cube.size * ((i >> 2) & 1)});
    const int tris[12][3] = {{0, 2, 1}, {1, 2, 3}, {4, 5, 6}, {5, 7, 6}, {0, 1, 4}, {1, 5, 4},
                             {2, 6, 3}, {3, 6, 7}, {0, 4, 2}, {2, 4, 6}, {1, 3, 5}, {3, 7, 5}};
    for (const auto& t : tris) {
        Tri tri{base + t[0], base + t[1], base + t[2]};
        if (cube.inward) std::swap(tri[1], tri[2]);
        surface.triangles.push_back(tri);
    }
}

SurfaceMesh cubes(const std::vector<CubeSpec>& specs) {
    SurfaceMesh surface;
    for (const CubeSpec& spec : specs) add_cube(surface, spec);
    return surface;
}

/// Strictly inside the open cube.
bool inside(const CubeSpec& cube, const Vec3& p) {
    for (int k = 0; k < 3; ++k)
        if (!(p[k] > cube.origin[k] && p[k] < cube.origin[k] + cube.size)) return false;
    return true;
}

std::vector<Index> all_triangles(const SurfaceMesh& surface) {
    std::vector<Index> triangles(surface.triangles.size());
    for (std::size_t t = 0; t < triangles.size(); ++t) triangles[t] = static_cast<Index>(t);
    return triangles;
}

TEST(ShellNesting, WindingNumberIsOneInsideZeroOutsideAndFollowsOrientation) {
    for (bool inward : {false, true}) {
        SCOPED_TRACE(inward ? "inward" : "outward");
        const SurfaceMesh cube = cubes({{{0, 0, 0}, 1.0, inward}});
        const std::vector<Index> triangles = all_triangles(cube);
        const double sign = inward ? -1.0 : 1.0;
        std::mt19937 rng(7);
        std::uniform_real_distribution<double> coordinate(-0.5, 1.5);
        for (int i = 0; i < 200; ++i) {
            const Vec3 p{coordinate(rng), coordinate(rng), coordinate(rng)};
            const double expected = inside({{0, 0, 0}, 1.0}, p) ? sign : 0.0;
            EXPECT_NEAR(winding_number(cube, triangles, p), expected, 1e-9)
                << p[0] << " " << p[1] << " " << p[2];
        }
        // Close to a face, on either side, far from the cube: still integers.
        EXPECT_NEAR(winding_number(cube, triangles, {0.3, 0.4, 1e-9}), sign, 1e-6);
        EXPECT_NEAR(winding_number(cube, triangles, {0.3, 0.4, -1e-9}), 0.0, 1e-6);
        EXPECT_NEAR(winding_number(cube, triangles, {1e6, -3e6, 2e6}), 0.0, 1e-9);
    }
}

TEST(ShellNesting, DepthsOfNestedAndDisjointShellsIgnoreOrientationAndOrder) {
    // A body with a cavity holding a solid cube, and a separate cube beside it.
    const std::vector<CubeSpec> specs = {{{0, 0, 0}, 1.0},
                                         {{0.25, 0.25, 0.25}, 0.5},
                                         {{0.375, 0.375, 0.375}, 0.25},
                                         {{2, 0, 0}, 1.0}};
    const Index expected_depth[] = {0, 1, 2, 0};
    std::mt19937 rng(11);
    for (int trial = 0; trial < 8; ++trial) {
        std::vector<CubeSpec> shuffled = specs;
        for (CubeSpec& spec : shuffled) spec.inward = rng() % 2 == 1;
        SurfaceMesh surface = cubes(shuffled);
        std::shuffle(surface.triangles.begin(), surface.triangles.end(), rng);
        const ShellNesting nesting = find_shell_nesting(surface);
        ASSERT_EQ(nesting.num_shells(), 4);
        ASSERT_EQ(nesting.shell_of_triangle.size(), surface.triangles.size());
        for (std::size_t t = 0; t < surface.triangles.size(); ++t) {
            // Vertices 8c .. 8c+7 belong to cube c.
            const Index cube = surface.triangles[t][0] / 8;
            const Index shell = nesting.shell_of_triangle[t];
            EXPECT_EQ(nesting.depth[shell], expected_depth[cube]) << "cube " << cube;
            EXPECT_EQ(nesting.is_cavity(shell), cube == 1) << "cube " << cube;
        }
    }
}

TEST(ShellNesting, OverlappingShellsWhoseBoxesAreNotNestedAreNotNested) {
    // The second cube's first vertex lies inside the first cube, but the cubes only overlap: such
    // a surface is rejected later as self-intersecting and must not be half-classified now.
    const SurfaceMesh surface = cubes({{{0, 0, 0}, 1.0}, {{0.5, 0.5, 0.5}, 1.0}});
    const ShellNesting nesting = find_shell_nesting(surface);
    ASSERT_EQ(nesting.num_shells(), 2);
    EXPECT_EQ(nesting.depth, (std::vector<Index>{0, 0}));
    EXPECT_TRUE(cavity_points(surface, nesting, "overlap").empty());
}

TEST(ShellNesting, CavityPointLiesInTheCavityWithEitherOrientation) {
    const CubeSpec body{{0, 0, 0}, 1.0};
    for (bool inward : {false, true}) {
        SCOPED_TRACE(inward ? "cavity shell inward" : "cavity shell outward");
        const CubeSpec cavity{{0.25, 0.25, 0.25}, 0.5, inward};
        const SurfaceMesh surface = cubes({body, cavity});
        const std::vector<Vec3> points = cavity_points(surface, find_shell_nesting(surface), "s");
        ASSERT_EQ(points.size(), 1u);
        EXPECT_TRUE(inside(cavity, points[0]));
    }
}

TEST(ShellNesting, CavityPointAvoidsASolidNestedCloseToTheCavityWall) {
    // The first steps (a tenth of the wall triangles' size) land in the inner solid; the point
    // must end up in the 0.01 gap instead.
    const CubeSpec cavity{{0.25, 0.25, 0.25}, 0.5};
    const CubeSpec solid{{0.26, 0.26, 0.26}, 0.48};
    const SurfaceMesh surface = cubes({{{0, 0, 0}, 1.0}, cavity, solid});
    const ShellNesting nesting = find_shell_nesting(surface);
    const std::vector<Vec3> points = cavity_points(surface, nesting, "gap");
    ASSERT_EQ(points.size(), 1u);
    EXPECT_TRUE(inside(cavity, points[0]));
    EXPECT_FALSE(inside(solid, points[0]));
}

TEST(ShellNesting, SingleShellHasNoCavity) {
    const SurfaceMesh surface = cubes({{{0, 0, 0}, 1.0, true}});
    const ShellNesting nesting = find_shell_nesting(surface);
    EXPECT_EQ(nesting.num_shells(), 1);
    EXPECT_EQ(nesting.depth, (std::vector<Index>{0}));
    EXPECT_TRUE(cavity_points(surface, nesting, "one").empty());
}

} // namespace
} // namespace edn

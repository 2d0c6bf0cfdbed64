// make_box_tet_mesh: volume, orientation, conformity (boundary face count) and topology.
#include "core/error.hpp"
#include "mesh/box_mesh.hpp"
#include "mesh/topology.hpp"

#include <algorithm>
#include <gtest/gtest.h>
#include <set>
#include <tuple>

namespace edn {
namespace {

class BoxMeshTest : public ::testing::TestWithParam<std::tuple<int, int, int>> {};

TEST_P(BoxMeshTest, VolumeOrientationAndBoundary) {
    const auto [nx, ny, nz] = GetParam();
    const Vec3 lo = {-1.0, 0.5, 2.0}, hi = {2.0, 1.5, 4.5};
    const TetMesh mesh = make_box_tet_mesh(nx, ny, nz, lo, hi);
    ASSERT_EQ(mesh.num_cells(), 6 * nx * ny * nz);
    ASSERT_EQ(mesh.num_vertices(), (nx + 1) * (ny + 1) * (nz + 1));

    double volume = 0;
    const double box_volume = (hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]);
    const double cell_volume = box_volume / (6.0 * nx * ny * nz);
    std::set<std::array<Index, 4>> unique;
    for (const Cell& c : mesh.cells) {
        const double v = signed_volume(mesh.positions[c[0]], mesh.positions[c[1]],
                                       mesh.positions[c[2]], mesh.positions[c[3]]);
        // Every Kuhn tetrahedron has 1/6 of its hexahedron's volume.
        EXPECT_NEAR(v, cell_volume, 1e-9 * cell_volume);
        volume += v;
        std::array<Index, 4> s = c;
        std::sort(s.begin(), s.end());
        unique.insert(s);
    }
    EXPECT_NEAR(volume, box_volume, 1e-9 * box_volume);
    EXPECT_EQ(unique.size(), mesh.cells.size());
    for (const Vec3& x : mesh.positions)
        for (int d = 0; d < 3; ++d) {
            EXPECT_GE(x[d], lo[d]);
            EXPECT_LE(x[d], hi[d]);
        }

    const Topology topo = build_topology(mesh);
    // Conforming: only the box's faces are used by one cell, 2 triangles per boundary quad.
    EXPECT_EQ(static_cast<int>(topo.boundary_faces.size()), 4 * (nx * ny + ny * nz + nz * nx));
    EXPECT_EQ(num_components(topo), 1);
    // Euler characteristic of a ball: V - E + F - T = 1.
    EXPECT_EQ(topo.num_vertices - topo.num_edges() + topo.num_faces() - topo.num_cells, 1);
}

INSTANTIATE_TEST_SUITE_P(Sizes, BoxMeshTest,
                         ::testing::Values(std::make_tuple(1, 1, 1), std::make_tuple(2, 3, 4),
                                           std::make_tuple(5, 1, 2), std::make_tuple(7, 6, 5)));

TEST(BoxMesh, RejectsBadArguments) {
    EXPECT_THROW(make_box_tet_mesh(0, 1, 1, {0, 0, 0}, {1, 1, 1}), Error);
    EXPECT_THROW(make_box_tet_mesh(1, 1, 1, {0, 0, 0}, {1, 0, 1}), Error);
    EXPECT_THROW(make_box_tet_mesh(100000, 100000, 1000, {0, 0, 0}, {1, 1, 1}), Error);
}

} // namespace
} // namespace edn

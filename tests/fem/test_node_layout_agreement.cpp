// The element bases (fem/lagrange_tet.hpp) and the global node numbering (mesh/node_layout.hpp)
// must agree on the canonical local node order; otherwise assembled matrices are silently wrong.
#include "fem/element_geometry.hpp"
#include "fem/lagrange_tet.hpp"
#include "mesh/node_layout.hpp"
#include "mesh/tet_mesh.hpp"
#include "mesh/topology.hpp"

#include <gtest/gtest.h>
#include <vector>

namespace edn {
namespace {

TEST(FemNodeLayoutAgreement, LocalNodeBarycentricMatchesMesh) {
    for (int p = 1; p <= 3; ++p)
        for (int k = 0; k < lagrange_tet_num_nodes(p); ++k) {
            double mine[4];
            ASSERT_TRUE(local_node_barycentric(p, k, mine));
            const std::array<double, 4> theirs = local_node_barycentric(p, k);
            for (int i = 0; i < 4; ++i)
                EXPECT_NEAR(mine[i], theirs[i], 1e-15) << "order " << p << " node " << k;
        }
    for (int p = 1; p <= 3; ++p) EXPECT_EQ(lagrange_tet_num_nodes(p), nodes_per_cell(p));
}

// Two tets sharing face (1,2,3), with local vertex orders that disagree on the shared edges'
// directions, so edge nodes must be mapped through the "lower global vertex first" rule.
TEST(FemNodeLayoutAgreement, CellNodePositionsMatchElementNodePositions) {
    TetMesh mesh;
    mesh.positions = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 1}};
    mesh.cells = {{0, 1, 2, 3}, {4, 3, 2, 1}};
    ASSERT_GT(
        signed_volume(mesh.positions[0], mesh.positions[1], mesh.positions[2], mesh.positions[3]),
        0.0);
    ASSERT_GT(
        signed_volume(mesh.positions[4], mesh.positions[3], mesh.positions[2], mesh.positions[1]),
        0.0);
    const Topology topology = build_topology(mesh);
    for (int p = 1; p <= 3; ++p) {
        const NodeLayout layout = make_node_layout(topology, p);
        const std::vector<Vec3> nodes = node_positions(mesh, topology, layout);
        for (Index c = 0; c < mesh.num_cells(); ++c) {
            double X[4][3];
            for (int v = 0; v < 4; ++v)
                for (int r = 0; r < 3; ++r) X[v][r] = mesh.positions[mesh.cells[c][v]][r];
            double local[20][3];
            if (p == 1) element_node_positions<1>(X, local);
            if (p == 2) element_node_positions<2>(X, local);
            if (p == 3) element_node_positions<3>(X, local);
            std::vector<Index> global(nodes_per_cell(p));
            cell_nodes(topology, mesh.cells, layout, c, global.data());
            for (int a = 0; a < nodes_per_cell(p); ++a)
                for (int r = 0; r < 3; ++r)
                    EXPECT_NEAR(nodes[global[a]][r], local[a][r], 1e-14)
                        << "order " << p << " cell " << c << " local node " << a;
        }
    }
}

} // namespace
} // namespace edn

// Higher-order node layout and Eq. (6) row counts against brute force.
#include "core/error.hpp"
#include "mesh/node_layout.hpp"
#include "mesh/topology.hpp"
#include "support/mesh_fixtures.hpp"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <set>
#include <string>
#include <vector>

namespace edn {
namespace {

struct NamedMesh {
    std::string name;
    TetMesh mesh;
};

std::vector<NamedMesh> fixture_meshes() {
    return {
        {"single_tet", test::make_single_tet()},
        {"two_tets", test::make_two_tets()},
        {"box_1x1x1", test::make_box_mesh(1, 1, 1, 1.0, 1.0, 1.0)},
        {"box_3x2x2", test::make_box_mesh(3, 2, 2, 3.0, 1.5, 2.0)},
        {"perturbed_5x4x3", test::make_random_perturbed_box(5, 4, 3, 1.0, 1.0, 1.0)},
        {"shuffled_perturbed_3x3x2",
         test::shuffle_mesh(test::make_random_perturbed_box(3, 3, 2, 1.0, 2.0, 1.0, 0.12, 11), 17)},
        {"two_boxes", test::concatenate_meshes(test::make_box_mesh(1, 1, 2, 1.0, 1.0, 1.0),
                                               test::make_box_mesh(2, 1, 1, 1.0, 1.0, 1.0))},
    };
}

double distance(const Vec3& a, const Vec3& b) {
    return std::sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) +
                     (a[2] - b[2]) * (a[2] - b[2]));
}

Vec3 from_barycentric(const TetMesh& mesh, Index cell, const std::array<double, 4>& bary) {
    Vec3 x = {0.0, 0.0, 0.0};
    for (int i = 0; i < 4; ++i)
        for (int d = 0; d < 3; ++d) x[d] += bary[i] * mesh.positions[mesh.cells[cell][i]][d];
    return x;
}

std::vector<Index> nodes_of(const Topology& topo, const TetMesh& mesh, const NodeLayout& layout,
                            Index cell) {
    std::vector<Index> nodes(nodes_per_cell(layout.order));
    cell_nodes(topo, mesh.cells, layout, cell, nodes.data());
    return nodes;
}

TEST(NodeLayout, BinomialFollowsPascalWithZeroConvention) {
    std::vector<std::vector<std::int64_t>> pascal(12, std::vector<std::int64_t>(14, 0));
    for (int n = 0; n < 12; ++n) {
        pascal[n][0] = 1;
        for (int k = 1; k <= n; ++k) pascal[n][k] = pascal[n - 1][k - 1] + pascal[n - 1][k];
    }
    for (int n = 0; n < 12; ++n)
        for (int k = -2; k < 14; ++k)
            EXPECT_EQ(binomial(n, k), k < 0 ? 0 : pascal[n][k]) << n << " " << k;
}

TEST(NodeLayout, LocalBarycentricsAreTheFullLattice) {
    for (int p = 1; p <= 3; ++p) {
        // Brute force: all (i,j,k,l)/p with i+j+k+l = p (no interior node exists for p <= 3).
        std::set<std::array<int, 4>> lattice;
        for (int i = 0; i <= p; ++i)
            for (int j = 0; i + j <= p; ++j)
                for (int k = 0; i + j + k <= p; ++k) lattice.insert({i, j, k, p - i - j - k});
        ASSERT_EQ(nodes_per_cell(p), static_cast<int>(lattice.size()));
        std::set<std::array<int, 4>> seen;
        for (int local = 0; local < nodes_per_cell(p); ++local) {
            const auto bary = local_node_barycentric(p, local);
            std::array<int, 4> scaled;
            double sum = 0.0;
            for (int i = 0; i < 4; ++i) {
                sum += bary[i];
                scaled[i] = static_cast<int>(std::lround(bary[i] * p));
                EXPECT_NEAR(bary[i] * p, scaled[i], 1e-12);
            }
            EXPECT_NEAR(sum, 1.0, 1e-14);
            EXPECT_TRUE(lattice.count(scaled)) << "p=" << p << " local " << local;
            EXPECT_TRUE(seen.insert(scaled).second) << "duplicate local node " << local;
            if (local < 4) {
                EXPECT_EQ(bary[local], 1.0);
            }
        }
    }
    EXPECT_THROW(local_node_barycentric(2, 10), Error);
    EXPECT_THROW(local_node_barycentric(4, 0), Error);
}

TEST(NodeLayout, LocalOrderIsVerticesThenEdgesThenFaces) {
    const int local_edges[6][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};
    for (int p = 2; p <= 3; ++p) {
        int local = 4;
        for (const auto& edge : local_edges)
            for (int m = 0; m < p - 1; ++m, ++local) {
                const auto bary = local_node_barycentric(p, local);
                EXPECT_NEAR(bary[edge[1]], (m + 1.0) / p, 1e-14) << "p=" << p << " local " << local;
                EXPECT_NEAR(bary[edge[0]] + bary[edge[1]], 1.0, 1e-14);
            }
        if (p == 3)
            for (int face = 0; face < 4; ++face, ++local) {
                const auto bary = local_node_barycentric(p, local);
                for (int i = 0; i < 4; ++i)
                    EXPECT_NEAR(bary[i], i == face ? 0.0 : 1.0 / 3.0, 1e-14);
            }
        EXPECT_EQ(local, nodes_per_cell(p));
    }
}

TEST(NodeLayout, NodeCountsAndKinds) {
    for (const auto& [name, mesh] : fixture_meshes()) {
        SCOPED_TRACE(name);
        const Topology topo = build_topology(mesh);
        for (int p = 1; p <= 3; ++p) {
            const NodeLayout layout = make_node_layout(topo, p);
            const Index v = topo.num_vertices, e = topo.num_edges(), f = topo.num_faces();
            ASSERT_EQ(layout.num_nodes(), v + (p - 1) * e + (p - 1) * (p - 2) / 2 * f);
            std::vector<int> hits(layout.num_nodes(), 0);
            for (Index i = 0; i < v; ++i) {
                EXPECT_EQ(node_kind(layout, i), NodeKind::Vertex);
                EXPECT_EQ(node_simplex(layout, i), i);
                ++hits[i];
            }
            for (Index i = 0; i < e; ++i)
                for (int k = 0; k < p - 1; ++k) {
                    const Index node = layout.edge_node(i, k);
                    ASSERT_LT(node, layout.num_nodes());
                    EXPECT_EQ(node_kind(layout, node), NodeKind::Edge);
                    EXPECT_EQ(node_simplex(layout, node), i);
                    EXPECT_EQ(node_local_index(layout, node), k);
                    ++hits[node];
                }
            for (Index i = 0; i < f; ++i)
                for (int k = 0; k < layout.nodes_per_face(); ++k) {
                    const Index node = layout.face_node(i, k);
                    ASSERT_LT(node, layout.num_nodes());
                    EXPECT_EQ(node_kind(layout, node), NodeKind::Face);
                    EXPECT_EQ(node_simplex(layout, node), i);
                    EXPECT_EQ(node_local_index(layout, node), k);
                    ++hits[node];
                }
            // The three ranges partition [0, num_nodes).
            EXPECT_TRUE(std::all_of(hits.begin(), hits.end(), [](int h) { return h == 1; }));
        }
    }
    const Topology topo = build_topology(test::make_single_tet());
    EXPECT_THROW(make_node_layout(topo, 0), Error);
    EXPECT_THROW(make_node_layout(topo, 4), Error);
}

TEST(NodeLayout, CellNodesMatchBarycentricPositions) {
    for (const auto& [name, mesh] : fixture_meshes()) {
        SCOPED_TRACE(name);
        const Topology topo = build_topology(mesh);
        for (int p = 1; p <= 3; ++p) {
            const NodeLayout layout = make_node_layout(topo, p);
            const auto positions = node_positions(mesh, topo, layout);
            ASSERT_EQ(positions.size(), static_cast<std::size_t>(layout.num_nodes()));
            std::vector<char> used(layout.num_nodes(), 0);
            for (Index c = 0; c < mesh.num_cells(); ++c) {
                const auto nodes = nodes_of(topo, mesh, layout, c);
                std::set<Index> distinct(nodes.begin(), nodes.end());
                EXPECT_EQ(distinct.size(), nodes.size()) << "cell " << c;
                for (int k = 0; k < nodes_per_cell(p); ++k) {
                    ASSERT_GE(nodes[k], 0);
                    ASSERT_LT(nodes[k], layout.num_nodes());
                    used[nodes[k]] = 1;
                    const Vec3 x = from_barycentric(mesh, c, local_node_barycentric(p, k));
                    EXPECT_LT(distance(x, positions[nodes[k]]), 1e-12)
                        << "p=" << p << " cell " << c << " local " << k;
                }
            }
            EXPECT_TRUE(std::all_of(used.begin(), used.end(), [](char u) { return u == 1; }))
                << "a node belongs to no cell";
        }
    }
}

TEST(NodeLayout, EdgeNodesRunFromLowerVertex) {
    const TetMesh mesh =
        test::shuffle_mesh(test::make_random_perturbed_box(2, 2, 2, 1.0, 1.0, 1.0), 4);
    const Topology topo = build_topology(mesh);
    for (int p = 2; p <= 3; ++p) {
        const NodeLayout layout = make_node_layout(topo, p);
        const auto positions = node_positions(mesh, topo, layout);
        for (Index e = 0; e < topo.num_edges(); ++e) {
            const Vec3& a = mesh.positions[topo.edges[e][0]];
            const Vec3& b = mesh.positions[topo.edges[e][1]];
            for (int k = 0; k < p - 1; ++k) {
                const double t = (k + 1.0) / p;
                const Vec3 x = {a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1]),
                                a[2] + t * (b[2] - a[2])};
                EXPECT_LT(distance(x, positions[layout.edge_node(e, k)]), 1e-14);
            }
        }
    }
}

// Nodes of `cell` lying on its local face `face` (barycentric weight of the opposite vertex 0).
std::vector<std::pair<Vec3, Index>> face_nodes(const TetMesh& mesh, const std::vector<Index>& nodes,
                                               int order, Index cell, int face) {
    std::vector<std::pair<Vec3, Index>> out;
    for (int k = 0; k < nodes_per_cell(order); ++k) {
        const auto bary = local_node_barycentric(order, k);
        if (bary[face] == 0.0) out.push_back({from_barycentric(mesh, cell, bary), nodes[k]});
    }
    return out;
}

TEST(NodeLayout, NeighboursAgreeOnSharedFaceNodes) {
    for (const auto& [name, mesh] : fixture_meshes()) {
        SCOPED_TRACE(name);
        const Topology topo = build_topology(mesh);
        for (int p = 1; p <= 3; ++p) {
            const NodeLayout layout = make_node_layout(topo, p);
            const auto positions = node_positions(mesh, topo, layout);
            int shared = 0;
            for (Index f = 0; f < topo.num_faces(); ++f) {
                if (topo.face_cells.row_size(f) != 2) continue;
                ++shared;
                const Index ca = topo.face_cells.row(f)[0], cb = topo.face_cells.row(f)[1];
                auto local_face = [&](Index c) {
                    int i = 0;
                    while (topo.cell_faces[c][i] != f) ++i;
                    return i;
                };
                const auto a =
                    face_nodes(mesh, nodes_of(topo, mesh, layout, ca), p, ca, local_face(ca));
                const auto b =
                    face_nodes(mesh, nodes_of(topo, mesh, layout, cb), p, cb, local_face(cb));
                ASSERT_EQ(a.size(), static_cast<std::size_t>(binomial(p + 2, 2)));
                ASSERT_EQ(b.size(), a.size());
                for (const auto& [xa, na] : a) {
                    EXPECT_LT(distance(xa, positions[na]), 1e-12);
                    int matches = 0;
                    for (const auto& [xb, nb] : b)
                        if (distance(xa, xb) < 1e-12) {
                            ++matches;
                            EXPECT_EQ(na, nb) << "face " << f << " p=" << p;
                        }
                    EXPECT_EQ(matches, 1) << "face " << f << " p=" << p;
                }
            }
            if (mesh.num_cells() > 1) {
                EXPECT_GT(shared, 0);
            }
        }
    }
}

TEST(NodeLayout, AllNodePositionsDistinct) {
    for (const auto& [name, mesh] : fixture_meshes()) {
        SCOPED_TRACE(name);
        if (name == "two_boxes") continue; // the two boxes overlap in space
        const Topology topo = build_topology(mesh);
        for (int p = 2; p <= 3; ++p) {
            const NodeLayout layout = make_node_layout(topo, p);
            const auto positions = node_positions(mesh, topo, layout);
            for (std::size_t i = 0; i < positions.size(); ++i)
                for (std::size_t j = i + 1; j < positions.size(); ++j)
                    ASSERT_GT(distance(positions[i], positions[j]), 1e-9)
                        << "nodes " << i << " " << j << " p=" << p;
        }
    }
}

TEST(NodeLayout, RowCountsEq6MatchBruteForce) {
    for (const auto& [name, mesh] : fixture_meshes()) {
        SCOPED_TRACE(name);
        const Topology topo = build_topology(mesh);
        for (int p = 1; p <= 3; ++p) {
            const NodeLayout layout = make_node_layout(topo, p);
            // Brute force: the nodes sharing at least one cell with each node (itself included).
            std::vector<std::vector<Index>> neighbours(layout.num_nodes());
            for (Index c = 0; c < mesh.num_cells(); ++c) {
                const auto nodes = nodes_of(topo, mesh, layout, c);
                for (Index i : nodes)
                    neighbours[i].insert(neighbours[i].end(), nodes.begin(), nodes.end());
            }
            const auto counts = row_counts_eq6(topo, layout);
            ASSERT_EQ(counts.size(), neighbours.size());
            for (Index i = 0; i < layout.num_nodes(); ++i) {
                auto& row = neighbours[i];
                std::sort(row.begin(), row.end());
                row.erase(std::unique(row.begin(), row.end()), row.end());
                EXPECT_EQ(counts[i], static_cast<Index>(row.size())) << "p=" << p << " node " << i;
            }
        }
    }
}

} // namespace
} // namespace edn

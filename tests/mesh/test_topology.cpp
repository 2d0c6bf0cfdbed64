// Topology against brute-force references on small fixture meshes.
#include "core/error.hpp"
#include "mesh/topology.hpp"
#include "support/mesh_fixtures.hpp"

#include <algorithm>
#include <gtest/gtest.h>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace edn {
namespace {

using test::orient3d;

struct NamedMesh {
    std::string name;
    TetMesh mesh;
    bool is_ball = true; // one component homeomorphic to a ball
};

std::vector<NamedMesh> fixture_meshes() {
    std::vector<NamedMesh> meshes;
    meshes.push_back({"single_tet", test::make_single_tet()});
    meshes.push_back({"two_tets", test::make_two_tets()});
    meshes.push_back({"box_1x1x1", test::make_box_mesh(1, 1, 1, 1.0, 1.0, 1.0)});
    meshes.push_back({"box_3x2x2", test::make_box_mesh(3, 2, 2, 3.0, 1.5, 2.0)});
    meshes.push_back({"perturbed_5x4x3", test::make_random_perturbed_box(5, 4, 3, 1.0, 1.0, 1.0)});
    meshes.push_back(
        {"shuffled_perturbed_4x3x3",
         test::shuffle_mesh(test::make_random_perturbed_box(4, 3, 3, 2.0, 1.0, 1.0, 0.12, 7), 99)});
    meshes.push_back({"two_boxes",
                      test::concatenate_meshes(test::make_box_mesh(2, 1, 1, 1.0, 1.0, 1.0),
                                               test::make_box_mesh(1, 2, 1, 1.0, 1.0, 1.0)),
                      false});
    return meshes;
}

Edge sorted_pair(Index a, Index b) {
    return {std::min(a, b), std::max(a, b)};
}

Face sorted_triple(Index a, Index b, Index c) {
    Face f = {a, b, c};
    std::sort(f.begin(), f.end());
    return f;
}

std::set<Edge> brute_edges(const TetMesh& mesh) {
    std::set<Edge> edges;
    for (const Cell& c : mesh.cells)
        for (int i = 0; i < 4; ++i)
            for (int j = i + 1; j < 4; ++j) edges.insert(sorted_pair(c[i], c[j]));
    return edges;
}

std::set<Face> brute_faces(const TetMesh& mesh) {
    std::set<Face> faces;
    for (const Cell& c : mesh.cells)
        for (int i = 0; i < 4; ++i)
            for (int j = i + 1; j < 4; ++j)
                for (int k = j + 1; k < 4; ++k) faces.insert(sorted_triple(c[i], c[j], c[k]));
    return faces;
}

bool cell_has(const Cell& cell, Index v) {
    return std::find(cell.begin(), cell.end(), v) != cell.end();
}

// Rows of a transpose computed the slow way: scan all cells in ascending order per simplex.
template <class Simplex>
std::vector<std::vector<Index>> brute_cells_of(const TetMesh& mesh,
                                               const std::vector<Simplex>& simplices) {
    std::vector<std::vector<Index>> rows(simplices.size());
    for (std::size_t s = 0; s < simplices.size(); ++s)
        for (Index c = 0; c < mesh.num_cells(); ++c)
            if (std::all_of(simplices[s].begin(), simplices[s].end(),
                            [&](Index v) { return cell_has(mesh.cells[c], v); }))
                rows[s].push_back(c);
    return rows;
}

void expect_csr_equals(const Csr& csr, const std::vector<std::vector<Index>>& rows,
                       const std::string& what) {
    ASSERT_EQ(csr.num_rows(), static_cast<Index>(rows.size())) << what;
    ASSERT_EQ(csr.offsets.front(), 0) << what;
    std::size_t total = 0;
    for (std::size_t r = 0; r < rows.size(); ++r) {
        const auto row = csr.row(static_cast<Index>(r));
        EXPECT_EQ(std::vector<Index>(row.begin(), row.end()), rows[r]) << what << " row " << r;
        total += rows[r].size();
    }
    EXPECT_EQ(csr.indices.size(), total) << what;
}

TEST(Topology, FixturesArePositivelyOriented) {
    for (const auto& [name, mesh, ball] : fixture_meshes())
        for (Index c = 0; c < mesh.num_cells(); ++c) {
            const auto& p = mesh.positions;
            const Cell& cell = mesh.cells[c];
            EXPECT_GT(orient3d(p[cell[0]], p[cell[1]], p[cell[2]], p[cell[3]]), 0.0)
                << name << " cell " << c;
        }
}

TEST(Topology, EdgesAndFacesMatchBruteForce) {
    for (const auto& [name, mesh, ball] : fixture_meshes()) {
        SCOPED_TRACE(name);
        const Topology topo = build_topology(mesh);
        const auto edges = brute_edges(mesh);
        const auto faces = brute_faces(mesh);
        // std::set iterates in lexicographic order: equality checks sorted + unique as well.
        EXPECT_EQ(topo.edges, std::vector<Edge>(edges.begin(), edges.end()));
        EXPECT_EQ(topo.faces, std::vector<Face>(faces.begin(), faces.end()));
        EXPECT_EQ(topo.num_vertices, mesh.num_vertices());
        EXPECT_EQ(topo.num_cells, mesh.num_cells());
    }
}

TEST(Topology, CellEdgesAndFacesFollowLocalOrder) {
    const int local_edges[6][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};
    for (const auto& [name, mesh, ball] : fixture_meshes()) {
        SCOPED_TRACE(name);
        const Topology topo = build_topology(mesh);
        ASSERT_EQ(topo.cell_edges.size(), mesh.cells.size());
        ASSERT_EQ(topo.cell_faces.size(), mesh.cells.size());
        for (Index c = 0; c < mesh.num_cells(); ++c) {
            const Cell& cell = mesh.cells[c];
            for (int le = 0; le < 6; ++le) {
                const Index e = topo.cell_edges[c][le];
                ASSERT_GE(e, 0);
                ASSERT_LT(e, topo.num_edges());
                EXPECT_EQ(topo.edges[e],
                          sorted_pair(cell[local_edges[le][0]], cell[local_edges[le][1]]));
            }
            for (int i = 0; i < 4; ++i) {
                const Index f = topo.cell_faces[c][i];
                ASSERT_GE(f, 0);
                ASSERT_LT(f, topo.num_faces());
                std::vector<Index> others;
                for (int j = 0; j < 4; ++j)
                    if (j != i) others.push_back(cell[j]);
                EXPECT_EQ(topo.faces[f], sorted_triple(others[0], others[1], others[2]))
                    << "face opposite " << i;
            }
        }
        for (Index f = 0; f < topo.num_faces(); ++f) {
            const Face& face = topo.faces[f];
            EXPECT_EQ(topo.edges[topo.face_edges[f][0]], sorted_pair(face[0], face[1]));
            EXPECT_EQ(topo.edges[topo.face_edges[f][1]], sorted_pair(face[0], face[2]));
            EXPECT_EQ(topo.edges[topo.face_edges[f][2]], sorted_pair(face[1], face[2]));
        }
    }
}

TEST(Topology, FindEdgeAndFace) {
    const TetMesh mesh = test::shuffle_mesh(test::make_box_mesh(2, 2, 1, 1.0, 1.0, 1.0), 3);
    const Topology topo = build_topology(mesh);
    const auto edges = brute_edges(mesh);
    const auto faces = brute_faces(mesh);
    for (Index a = 0; a < mesh.num_vertices(); ++a)
        for (Index b = 0; b < mesh.num_vertices(); ++b) {
            const Index e = find_edge(topo, a, b);
            if (a != b && edges.count(sorted_pair(a, b))) {
                ASSERT_GE(e, 0);
                EXPECT_EQ(topo.edges[e], sorted_pair(a, b));
            } else {
                EXPECT_EQ(e, -1) << a << " " << b;
            }
            for (Index c = 0; c < mesh.num_vertices(); c += 3) {
                const Index f = find_face(topo, a, b, c);
                if (a != b && b != c && a != c && faces.count(sorted_triple(a, b, c))) {
                    ASSERT_GE(f, 0);
                    EXPECT_EQ(topo.faces[f], sorted_triple(a, b, c));
                } else {
                    EXPECT_EQ(f, -1);
                }
            }
        }
    EXPECT_EQ(find_edge(topo, -1, 0), -1);
    EXPECT_EQ(find_edge(topo, 0, mesh.num_vertices()), -1);
}

TEST(Topology, TransposesAreExact) {
    for (const auto& [name, mesh, ball] : fixture_meshes()) {
        SCOPED_TRACE(name);
        const Topology topo = build_topology(mesh);
        std::vector<std::vector<Index>> vertex_rows(mesh.num_vertices());
        for (Index c = 0; c < mesh.num_cells(); ++c)
            for (Index v : mesh.cells[c]) vertex_rows[v].push_back(c);
        expect_csr_equals(topo.vertex_cells, vertex_rows, "vertex_cells");
        // Both directions pair by pair: every (v, c) of the cells is in the transpose and back.
        for (Index c = 0; c < mesh.num_cells(); ++c)
            for (Index v : mesh.cells[c]) {
                const auto row = topo.vertex_cells.row(v);
                EXPECT_EQ(std::count(row.begin(), row.end(), c), 1);
            }
        for (Index v = 0; v < mesh.num_vertices(); ++v)
            for (Index c : topo.vertex_cells.row(v)) EXPECT_TRUE(cell_has(mesh.cells[c], v));

        expect_csr_equals(topo.edge_cells, brute_cells_of(mesh, topo.edges), "edge_cells");
        expect_csr_equals(topo.face_cells, brute_cells_of(mesh, topo.faces), "face_cells");
    }
}

TEST(Topology, CountsMatchBruteForce) {
    for (const auto& [name, mesh, ball] : fixture_meshes()) {
        SCOPED_TRACE(name);
        const Topology topo = build_topology(mesh);
        const auto edges = brute_edges(mesh);
        const auto faces = brute_faces(mesh);
        std::vector<Index> vertex_edges(mesh.num_vertices(), 0),
            vertex_faces(mesh.num_vertices(), 0);
        std::map<Edge, Index> edge_faces;
        for (const Edge& e : edges)
            for (Index v : e) ++vertex_edges[v];
        for (const Face& f : faces) {
            for (Index v : f) ++vertex_faces[v];
            ++edge_faces[sorted_pair(f[0], f[1])];
            ++edge_faces[sorted_pair(f[0], f[2])];
            ++edge_faces[sorted_pair(f[1], f[2])];
        }
        EXPECT_EQ(topo.vertex_edge_count, vertex_edges);
        EXPECT_EQ(topo.vertex_face_count, vertex_faces);
        ASSERT_EQ(topo.edge_face_count.size(), edges.size());
        for (Index e = 0; e < topo.num_edges(); ++e)
            EXPECT_EQ(topo.edge_face_count[e], edge_faces[topo.edges[e]]) << "edge " << e;
    }
}

TEST(Topology, InteriorFacesHaveTwoCellsBoundaryFacesOne) {
    for (const auto& [name, mesh, ball] : fixture_meshes()) {
        SCOPED_TRACE(name);
        const Topology topo = build_topology(mesh);
        std::map<Face, int> uses;
        for (const Cell& c : mesh.cells)
            for (int i = 0; i < 4; ++i) {
                std::vector<Index> others;
                for (int j = 0; j < 4; ++j)
                    if (j != i) others.push_back(c[j]);
                ++uses[sorted_triple(others[0], others[1], others[2])];
            }
        std::vector<Index> expected_boundary;
        for (Index f = 0; f < topo.num_faces(); ++f) {
            const int n = uses[topo.faces[f]];
            EXPECT_TRUE(n == 1 || n == 2) << "face " << f;
            EXPECT_EQ(topo.face_cells.row_size(f), n);
            if (n == 1) expected_boundary.push_back(f);
        }
        EXPECT_EQ(topo.boundary_face_ids, expected_boundary);
        ASSERT_EQ(topo.boundary_faces.size(), expected_boundary.size());
        ASSERT_EQ(topo.boundary_face_cell.size(), expected_boundary.size());
        for (std::size_t b = 0; b < expected_boundary.size(); ++b) {
            const Tri& t = topo.boundary_faces[b];
            EXPECT_EQ(sorted_triple(t[0], t[1], t[2]), topo.faces[expected_boundary[b]]);
            const Cell& owner = mesh.cells[topo.boundary_face_cell[b]];
            for (Index v : t) EXPECT_TRUE(cell_has(owner, v));
        }
    }
}

TEST(Topology, BoundaryFacesPointOutward) {
    for (const auto& [name, mesh, ball] : fixture_meshes()) {
        SCOPED_TRACE(name);
        const Topology topo = build_topology(mesh);
        const auto& p = mesh.positions;
        for (std::size_t b = 0; b < topo.boundary_faces.size(); ++b) {
            const Tri& t = topo.boundary_faces[b];
            const Cell& owner = mesh.cells[topo.boundary_face_cell[b]];
            Index apex = -1;
            for (Index v : owner)
                if (!cell_has({t[0], t[1], t[2], t[2]}, v)) apex = v;
            ASSERT_GE(apex, 0);
            // The owner's fourth vertex lies on the negative side of the outward normal.
            EXPECT_LT(orient3d(p[t[0]], p[t[1]], p[t[2]], p[apex]), 0.0) << "boundary face " << b;
        }
    }
    // For a convex box: normal . (face centroid - box centre) > 0.
    const TetMesh box = test::make_random_perturbed_box(4, 3, 2, 2.0, 1.5, 1.0);
    const Topology topo = build_topology(box);
    const Vec3 centre = {1.0, 0.75, 0.5};
    for (const Tri& t : topo.boundary_faces) {
        const Vec3 &a = box.positions[t[0]], &b = box.positions[t[1]], &c = box.positions[t[2]];
        const Vec3 u = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
        const Vec3 v = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
        const Vec3 n = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2],
                        u[0] * v[1] - u[1] * v[0]};
        double dot = 0.0;
        for (int d = 0; d < 3; ++d) dot += n[d] * ((a[d] + b[d] + c[d]) / 3.0 - centre[d]);
        EXPECT_GT(dot, 0.0);
    }
    // Each side of an nx x ny x nz box is split into 2 triangles per square.
    EXPECT_EQ(topo.boundary_faces.size(), static_cast<std::size_t>(4 * (4 * 3 + 3 * 2 + 4 * 2)));
}

TEST(Topology, BoundaryIsClosedAndConsistentlyOriented) {
    for (const auto& [name, mesh, ball] : fixture_meshes()) {
        SCOPED_TRACE(name);
        const Topology topo = build_topology(mesh);
        std::map<std::pair<Index, Index>, int> directed;
        std::map<Edge, int> undirected;
        for (const Tri& t : topo.boundary_faces)
            for (int i = 0; i < 3; ++i) {
                ++directed[{t[i], t[(i + 1) % 3]}];
                ++undirected[sorted_pair(t[i], t[(i + 1) % 3])];
            }
        for (const auto& [edge, n] : undirected) EXPECT_EQ(n, 2) << edge[0] << "-" << edge[1];
        // Outward orientation everywhere means neighbours traverse a shared edge in opposite
        // directions: each directed edge once, its reverse once.
        for (const auto& [edge, n] : directed) {
            EXPECT_EQ(n, 1);
            EXPECT_EQ(directed.count({edge.second, edge.first}), 1u);
        }
    }
}

TEST(Topology, EulerCharacteristicAndComponents) {
    for (const auto& [name, mesh, ball] : fixture_meshes()) {
        SCOPED_TRACE(name);
        const Topology topo = build_topology(mesh);
        const long chi = static_cast<long>(topo.num_vertices) - topo.num_edges() +
                         topo.num_faces() - topo.num_cells;
        const Index components = num_components(topo);
        if (ball) {
            EXPECT_EQ(chi, 1);
            EXPECT_EQ(components, 1);
        } else {
            EXPECT_EQ(chi, 2); // two disjoint balls
            EXPECT_EQ(components, 2);
        }
    }
}

TEST(Topology, EmptyMeshAndUnreferencedVertices) {
    TetMesh empty;
    empty.positions = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
    const Topology topo = build_topology(empty);
    EXPECT_EQ(topo.num_vertices, 3);
    EXPECT_EQ(topo.num_edges(), 0);
    EXPECT_EQ(topo.num_faces(), 0);
    EXPECT_EQ(topo.vertex_cells.num_rows(), 3);
    EXPECT_TRUE(topo.vertex_cells.indices.empty());
    EXPECT_EQ(num_components(topo), 0);

    TetMesh extra = test::make_single_tet();
    extra.positions.push_back({5, 5, 5}); // referenced by no cell
    const Topology t2 = build_topology(extra);
    EXPECT_EQ(t2.vertex_cells.row_size(4), 0);
    EXPECT_EQ(t2.vertex_edge_count[4], 0);
    EXPECT_EQ(num_components(t2), 1);
}

TEST(Topology, RejectsInvalidCells) {
    TetMesh out_of_range = test::make_single_tet();
    out_of_range.cells[0][2] = 4;
    try {
        build_topology(out_of_range);
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::IndexOutOfRange);
    }

    TetMesh repeated = test::make_single_tet();
    repeated.cells[0][3] = 1;
    try {
        build_topology(repeated);
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::DegenerateElement);
    }

    TetMesh fan = test::make_two_tets();
    fan.positions.push_back({-1, 2, 2}); // a third cell on face (1,2,3)
    fan.cells.push_back({1, 2, 3, 5});
    try {
        build_topology(fan);
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::NonManifold);
        EXPECT_NE(std::string(e.what()).find("3 cells"), std::string::npos) << e.what();
    }
}

/// Checks one node slot order: a permutation with its inverse, windows of kNodeSlotWindow slots
/// holding the ids of the same window, stably sorted by `key`.
template <class Key>
void expect_slot_order(const std::vector<Index>& slot, const std::vector<Index>& at, Index n,
                       Key key) {
    ASSERT_EQ(static_cast<Index>(at.size()), n);
    ASSERT_EQ(static_cast<Index>(slot.size()), n);
    for (Index i = 0; i < n; ++i) {
        ASSERT_GE(at[i], 0);
        ASSERT_LT(at[i], n);
        ASSERT_EQ(slot[at[i]], i);
        EXPECT_EQ(at[i] / kNodeSlotWindow, i / kNodeSlotWindow) << "slot " << i;
        if (i % kNodeSlotWindow != 0) {
            const Index k0 = key(at[i - 1]), k1 = key(at[i]);
            EXPECT_LE(k0, k1) << "slot " << i;
            if (k0 == k1) {
                EXPECT_LT(at[i - 1], at[i]) << "slot " << i; // stable
            }
        }
    }
}

TEST(Topology, NodeSlotOrderSortsEachWindowByCellAndFaceCounts) {
    // ~20K edges and ~33K faces: many windows, interior and boundary simplices of several counts.
    const TetMesh mesh =
        test::shuffle_mesh(test::make_random_perturbed_box(16, 14, 12, 1.0, 1.0, 1.0), 9);
    const Topology t = build_topology(mesh);
    ASSERT_GT(t.num_edges(), 8 * kNodeSlotWindow);
    expect_slot_order(t.edge_slot, t.edge_at, t.num_edges(), [&](Index e) {
        return node_slot_key(t.edge_cells.row_size(e) + t.edge_face_count[e]);
    });
    expect_slot_order(t.face_slot, t.face_at, t.num_faces(),
                      [&](Index f) { return node_slot_key(t.face_cells.row_size(f)); });
    // The order is not the identity on such a mesh (else it would not group anything).
    Index moved = 0;
    for (Index e = 0; e < t.num_edges(); ++e) moved += t.edge_at[e] != e;
    EXPECT_GT(moved, t.num_edges() / 4);
}

TEST(Topology, DeterministicAcrossRuns) {
    const TetMesh mesh =
        test::shuffle_mesh(test::make_random_perturbed_box(6, 5, 4, 1.0, 1.0, 1.0), 5);
    const Topology a = build_topology(mesh);
    const Topology b = build_topology(mesh);
    EXPECT_EQ(a.edges, b.edges);
    EXPECT_EQ(a.faces, b.faces);
    EXPECT_EQ(a.vertex_cells.indices, b.vertex_cells.indices);
    EXPECT_EQ(a.edge_cells.indices, b.edge_cells.indices);
    EXPECT_EQ(a.face_cells.indices, b.face_cells.indices);
    EXPECT_EQ(a.boundary_faces, b.boundary_faces);
    EXPECT_EQ(a.edge_at, b.edge_at);
    EXPECT_EQ(a.face_at, b.face_at);
}

} // namespace
} // namespace edn

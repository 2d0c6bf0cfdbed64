// Morton reordering keeps the mesh; topology on real TetGen meshes matches brute force.
#include "core/error.hpp"
#include "mesh/mesh_loader.hpp"
#include "mesh/node_layout.hpp"
#include "mesh/reorder.hpp"
#include "mesh/topology.hpp"
#include "sparse/bin_bcsr_pattern.hpp"
#include "support/files.hpp"
#include "support/mesh_fixtures.hpp"

#include <algorithm>
#include <gtest/gtest.h>
#include <map>
#include <set>

namespace edn {
namespace {


TEST(Reorder, MortonKeepsGeometryOrientationAndImprovesLocality) {
    const TetMesh mesh = test::shuffle_mesh(test::make_random_perturbed_box(8, 7, 6, 1, 1, 1), 5);
    const TetMesh sorted = reorder_mesh(mesh, Reordering::Morton);
    ASSERT_EQ(sorted.positions.size(), mesh.positions.size());
    ASSERT_EQ(sorted.cells.size(), mesh.cells.size());
    EXPECT_NEAR(total_volume(sorted), total_volume(mesh), 1e-12);
    // The same set of cells, as sets of positions; every cell still positively oriented.
    auto cell_key = [](const TetMesh& m, const Cell& c) {
        std::array<Vec3, 4> p = {m.positions[c[0]], m.positions[c[1]], m.positions[c[2]],
                                 m.positions[c[3]]};
        std::sort(p.begin(), p.end());
        return p;
    };
    std::set<std::array<Vec3, 4>> a, b;
    for (const Cell& c : mesh.cells) a.insert(cell_key(mesh, c));
    for (const Cell& c : sorted.cells) {
        b.insert(cell_key(sorted, c));
        EXPECT_GT(signed_volume(sorted.positions[c[0]], sorted.positions[c[1]],
                                sorted.positions[c[2]], sorted.positions[c[3]]),
                  0.0);
    }
    EXPECT_EQ(a, b);
    // Locality: the median index span inside a cell shrinks a lot against the shuffled
    // numbering (the mean is dominated by the few cells that straddle a Z-curve jump).
    auto median_span = [](const TetMesh& m) {
        std::vector<Index> spans;
        for (const Cell& c : m.cells)
            spans.push_back(*std::max_element(c.begin(), c.end()) -
                            *std::min_element(c.begin(), c.end()));
        std::nth_element(spans.begin(), spans.begin() + spans.size() / 2, spans.end());
        return spans[spans.size() / 2];
    };
    EXPECT_LT(median_span(sorted), median_span(mesh) / 4);
}

TEST(Reorder, RejectsNonPermutations) {
    const TetMesh mesh = test::make_two_tets();
    EXPECT_THROW(reorder_mesh(mesh, std::vector<Index>{0, 1, 2, 3}), Error);
    EXPECT_THROW(reorder_mesh(mesh, std::vector<Index>{0, 1, 2, 3, 3}), Error);
}

/// Brute-force edges/faces and cell incidences of a mesh against build_topology.
void expect_topology_matches_brute_force(const TetMesh& mesh) {
    const Topology t = build_topology(mesh);
    std::set<std::array<Index, 2>> edges;
    std::set<std::array<Index, 3>> faces;
    std::map<std::array<Index, 3>, int> face_uses;
    for (const Cell& c : mesh.cells)
        for (int i = 0; i < 4; ++i) {
            for (int j = i + 1; j < 4; ++j)
                edges.insert({std::min(c[i], c[j]), std::max(c[i], c[j])});
            std::array<Index, 3> f = {c[(i + 1) % 4], c[(i + 2) % 4], c[(i + 3) % 4]};
            std::sort(f.begin(), f.end());
            faces.insert(f);
            ++face_uses[f];
        }
    const std::vector<Edge> brute_edges(edges.begin(), edges.end());
    const std::vector<Face> brute_faces(faces.begin(), faces.end());
    EXPECT_EQ(brute_edges, t.edges);
    EXPECT_EQ(brute_faces, t.faces);
    std::size_t boundary = 0;
    for (const auto& [f, uses] : face_uses) {
        EXPECT_LE(uses, 2);
        boundary += uses == 1;
    }
    EXPECT_EQ(boundary, t.boundary_faces.size());
    for (Index v = 0; v < mesh.num_vertices(); ++v)
        for (Index c : t.vertex_cells.row(v))
            EXPECT_NE(std::find(mesh.cells[c].begin(), mesh.cells[c].end(), v),
                      mesh.cells[c].end());
    std::size_t incidences = 0;
    for (Index v = 0; v < mesh.num_vertices(); ++v) incidences += t.vertex_cells.row(v).size();
    EXPECT_EQ(incidences, 4 * mesh.cells.size());
}

TEST(TetgenTopology, AssetsAndTheirMortonOrderMatchBruteForce) {
    TetrahedralizeOptions options;
    options.quality = 2.0;
    for (const char* name : {"sphere.obj", "bunny.obj"}) {
        const auto path = test::source_dir() / "assets" / name;
        if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " missing";
        const TetMesh mesh = load_tet_mesh(path, options);
        ASSERT_GT(mesh.num_cells(), 100);
        expect_topology_matches_brute_force(mesh);
        expect_topology_matches_brute_force(reorder_mesh(mesh, Reordering::Morton));
    }
}

// The balanced order keeps Morton's windows (a permutation of each, sorted by cells per vertex)
// and cuts the bins' padding on a TetGen mesh, where rows of very different lengths meet in a
// bin of 32 consecutive Morton nodes, without losing Morton's locality.
TEST(Reorder, BalancedBinsCutThePaddingOfATetgenMesh) {
    const auto path = test::source_dir() / "assets" / "bunny.obj";
    if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " missing";
    TetrahedralizeOptions options;
    options.max_volume = 2e-5;
    const TetMesh mesh = reorder_mesh(load_tet_mesh(path, options), Reordering::None);
    ASSERT_GT(mesh.num_vertices(), 4 * kBalanceWindow);
    const std::vector<Index> morton = morton_vertex_order(mesh);
    const std::vector<Index> balanced = balance_bins(mesh, morton);
    std::vector<Index> cells_at(mesh.positions.size(), 0);
    for (const Cell& c : mesh.cells)
        for (Index v : c) ++cells_at[v];
    for (std::size_t begin = 0; begin < morton.size(); begin += kBalanceWindow) {
        const std::size_t end = std::min(morton.size(), begin + kBalanceWindow);
        std::vector<Index> a(morton.begin() + begin, morton.begin() + end);
        std::vector<Index> b(balanced.begin() + begin, balanced.begin() + end);
        for (std::size_t i = 1; i < b.size(); ++i) ASSERT_LE(cells_at[b[i - 1]], cells_at[b[i]]);
        std::sort(a.begin(), a.end());
        std::sort(b.begin(), b.end());
        ASSERT_EQ(a, b) << "window at " << begin;
    }
    auto padding_and_span = [](const TetMesh& m) {
        const Topology t = build_topology(m);
        const BinBcsrPattern p = build_bin_bcsr_pattern(t, m.cells, make_node_layout(t, 1));
        const BinBcsrPatternView v = p.view();
        const double off_diagonal = double(p.nnz_blocks() - p.num_rows);
        double span = 0;
        for (Index row = 0; row < p.num_rows; ++row)
            for (Index j = 0; j < p.row_counts[row]; ++j)
                span += std::abs(p.columns[v.slot(row, j)] - row);
        return std::pair{double(p.padded_blocks()) / off_diagonal, span / off_diagonal};
    };
    const auto [pad_morton, span_morton] = padding_and_span(reorder_mesh(mesh, morton));
    const auto [pad_balanced, span_balanced] =
        padding_and_span(reorder_mesh(mesh, Reordering::MortonBalanced));
    EXPECT_GT(pad_morton, 0.15);
    EXPECT_LT(pad_balanced, 0.5 * pad_morton);
    EXPECT_LT(span_balanced, 1.5 * span_morton);
}

} // namespace
} // namespace edn

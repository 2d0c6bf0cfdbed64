#include "support/assembly_fixture.hpp"

#include <algorithm>
#include <gtest/gtest.h>
#include <set>

namespace edn {
namespace {

using test::AssemblyFixture;

std::vector<TetMesh> pattern_meshes() {
    return {test::make_single_tet(), test::make_two_tets(),
            test::make_box_mesh(3, 2, 2, 1.0, 1.0, 1.0),
            test::shuffle_mesh(test::make_random_perturbed_box(5, 4, 3, 2.0, 1.0, 1.0), 7),
            test::concatenate_meshes(test::make_two_tets(), test::make_box_mesh(2, 2, 2, 1, 1, 1))};
}

class BinBcsrPatternTest : public ::testing::TestWithParam<int> {};

TEST_P(BinBcsrPatternTest, EqualsBruteForcePattern) {
    const int order = GetParam();
    for (const TetMesh& mesh : pattern_meshes()) {
        AssemblyFixture f(mesh, order);
        const BinBcsrPattern& p = f.pattern;
        const int m = f.per_cell();
        // Brute force: all node pairs sharing a cell.
        std::vector<std::set<Index>> neighbours(p.num_rows);
        for (Index t = 0; t < mesh.num_cells(); ++t)
            for (int a = 0; a < m; ++a)
                for (int b = 0; b < m; ++b)
                    if (f.cell_nodes[t * m + a] != f.cell_nodes[t * m + b])
                        neighbours[f.cell_nodes[t * m + a]].insert(f.cell_nodes[t * m + b]);
        ASSERT_EQ(p.num_rows, f.layout.num_nodes());
        std::int64_t total = 0;
        for (Index row = 0; row < p.num_rows; ++row) {
            ASSERT_EQ(p.row_counts[row], static_cast<Index>(neighbours[row].size()))
                << "row " << row;
            std::vector<Index> cols;
            for (Index j = 0; j < p.row_counts[row]; ++j)
                cols.push_back(p.columns[p.view().slot(row, j)]);
            EXPECT_EQ(cols, std::vector<Index>(neighbours[row].begin(), neighbours[row].end()));
            // Padding slots of the row point at the row itself.
            const Index width = p.view().width(row / kBinRows);
            for (Index j = p.row_counts[row]; j < width; ++j)
                EXPECT_EQ(p.columns[p.view().slot(row, j)], row);
            total += neighbours[row].size();
        }
        EXPECT_EQ(p.nnz_blocks(), total + p.num_rows);
    }
}

TEST_P(BinBcsrPatternTest, BinsAreExactAndPaddingOnlyInsideBins) {
    const int order = GetParam();
    for (const TetMesh& mesh : pattern_meshes()) {
        AssemblyFixture f(mesh, order);
        const BinBcsrPattern& p = f.pattern;
        ASSERT_EQ(p.num_bins(), (p.num_rows + kBinRows - 1) / kBinRows);
        EXPECT_EQ(p.bin_offsets.front(), 0);
        std::int64_t slots = 0, padding = 0;
        for (Index b = 0; b < p.num_bins(); ++b) {
            Index width = 0;
            for (Index r = b * kBinRows; r < std::min(p.num_rows, (b + 1) * kBinRows); ++r)
                width = std::max(width, p.row_counts[r]);
            EXPECT_EQ(p.bin_offsets[b + 1] - p.bin_offsets[b], width * kBinRows);
            for (Index lane = 0; lane < kBinRows; ++lane) {
                const Index r = b * kBinRows + lane;
                padding += width - (r < p.num_rows ? p.row_counts[r] : 0);
            }
            slots += width * kBinRows;
        }
        EXPECT_EQ(p.num_slots(), slots);
        EXPECT_EQ(p.padded_blocks(), padding);
        EXPECT_EQ(static_cast<std::int64_t>(p.columns.size()), slots);
    }
}

TEST_P(BinBcsrPatternTest, FindSlotLocatesEveryColumnAndRejectsOthers) {
    AssemblyFixture f(test::make_random_perturbed_box(3, 3, 2, 1, 1, 1), GetParam());
    const BinBcsrPattern& p = f.pattern;
    for (Index row = 0; row < p.num_rows; ++row) {
        std::set<Index> present;
        for (Index j = 0; j < p.row_counts[row]; ++j) {
            const Index slot = p.view().slot(row, j);
            present.insert(p.columns[slot]);
            EXPECT_EQ(p.find_slot(row, p.columns[slot]), slot);
        }
        for (Index col = 0; col < p.num_rows; col += 7) {
            if (col != row && !present.count(col)) {
                EXPECT_EQ(p.find_slot(row, col), -1);
            }
        }
    }
}

TEST_P(BinBcsrPatternTest, NodeSlotOrderRelabelsTheNaturalPatternWithLessPadding) {
    // The same matrix pattern as the natural (simplex id) numbering, rows and columns relabeled
    // through the slot order, and bins of equal-length rows: less padding on a mesh of many
    // windows.
    const int order = GetParam();
    const TetMesh mesh = test::make_box_mesh(12, 12, 12, 1.0, 1.0, 1.0);
    const Topology sorted = build_topology(mesh);
    Topology natural = sorted;
    natural.edge_slot.clear();
    natural.edge_at.clear();
    natural.face_slot.clear();
    natural.face_at.clear();
    const NodeLayout ls = make_node_layout(sorted, order);
    const NodeLayout ln = make_node_layout(natural, order);
    EXPECT_EQ(ls.edge_at != nullptr, order >= 2);
    EXPECT_EQ(ls.face_at != nullptr, order >= 3);
    EXPECT_EQ(ln.edge_at, nullptr);
    const BinBcsrPattern ps = build_bin_bcsr_pattern(sorted, mesh.cells, ls);
    const BinBcsrPattern pn = build_bin_bcsr_pattern(natural, mesh.cells, ln);
    ASSERT_EQ(ps.num_rows, pn.num_rows);
    // natural node -> sorted node, through (kind, simplex, local index).
    auto relabel = [&](Index node) {
        const Index simplex = node_simplex(ln, node);
        const int k = node_local_index(ln, node);
        switch (node_kind(ln, node)) {
        case NodeKind::Vertex:
            return node;
        case NodeKind::Edge:
            return ls.edge_node(simplex, k);
        case NodeKind::Face:
            return ls.face_node(simplex, k);
        }
        return Index(-1);
    };
    std::vector<bool> hit(ps.num_rows, false);
    for (Index row = 0; row < pn.num_rows; ++row) {
        const Index to = relabel(row);
        ASSERT_GE(to, 0);
        ASSERT_LT(to, ps.num_rows);
        ASSERT_FALSE(hit[to]) << "two rows relabeled to " << to;
        hit[to] = true;
        ASSERT_EQ(ps.row_counts[to], pn.row_counts[row]);
        std::vector<Index> expected, got;
        for (Index j = 0; j < pn.row_counts[row]; ++j) {
            expected.push_back(relabel(pn.columns[pn.view().slot(row, j)]));
            got.push_back(ps.columns[ps.view().slot(to, j)]);
        }
        std::sort(expected.begin(), expected.end());
        EXPECT_EQ(got, expected) << "row " << row;
    }
    if (order >= 2) {
        const double pad_sorted = double(ps.padded_blocks()) / double(ps.nnz_blocks());
        const double pad_natural = double(pn.padded_blocks()) / double(pn.nnz_blocks());
        EXPECT_LT(pad_sorted, 0.5 * pad_natural);
        EXPECT_LT(pad_sorted, 0.05);
    } else {
        EXPECT_EQ(ps.columns, pn.columns); // vertex rows are not reordered
    }
}

INSTANTIATE_TEST_SUITE_P(Orders, BinBcsrPatternTest, ::testing::Values(1, 2, 3));

} // namespace
} // namespace edn

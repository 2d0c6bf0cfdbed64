// The upper part of a Bin-BCSR* matrix (sparse/upper_part.hpp): pattern against brute force,
// values and SpMV against the full matrix.
#include "sparse/spmv.hpp"
#include "sparse/upper_part.hpp"
#include "support/assembly_fixture.hpp"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <random>
#include <set>

namespace edn {
namespace {

using test::AssemblyFixture;

std::vector<TetMesh> upper_meshes() {
    return {test::make_single_tet(), test::make_two_tets(),
            test::shuffle_mesh(test::make_random_perturbed_box(5, 4, 3, 2.0, 1.0, 1.0), 7),
            test::shuffle_mesh(test::make_random_perturbed_box(7, 6, 5, 1.0, 1.0, 1.0), 9),
            test::concatenate_meshes(test::make_two_tets(), test::make_box_mesh(2, 2, 2, 1, 1, 1))};
}

class UpperPartTest : public ::testing::TestWithParam<int> {};

TEST_P(UpperPartTest, PatternIsTheStrictlyUpperNeighbours) {
    for (const TetMesh& mesh : upper_meshes()) {
        AssemblyFixture f(mesh, GetParam());
        const int m = f.per_cell();
        std::vector<std::set<Index>> upper(f.pattern.num_rows); // brute force
        for (Index t = 0; t < mesh.num_cells(); ++t)
            for (int a = 0; a < m; ++a)
                for (int b = 0; b < m; ++b)
                    if (f.cell_nodes[t * m + a] < f.cell_nodes[t * m + b])
                        upper[f.cell_nodes[t * m + a]].insert(f.cell_nodes[t * m + b]);
        const UpperPattern up = build_upper_pattern(f.pattern);
        ASSERT_EQ(up.num_rows, f.pattern.num_rows);
        ASSERT_EQ(up.num_bins(), f.pattern.num_bins());
        for (Index row = 0; row < up.num_rows; ++row) {
            ASSERT_EQ(up.counts[row], static_cast<Index>(upper[row].size())) << "row " << row;
            EXPECT_EQ(up.first[row] + up.counts[row], f.pattern.row_counts[row]);
            const Index bin = row / kBinRows;
            std::vector<Index> cols;
            for (Index j = 0; j < up.counts[row]; ++j)
                cols.push_back(up.columns[up.bin_offsets[bin] + j * kBinRows + row % kBinRows]);
            EXPECT_EQ(cols, std::vector<Index>(upper[row].begin(), upper[row].end()));
        }
        for (Index b = 0; b < up.num_bins(); ++b) { // each bin as wide as its longest row
            Index width = 0;
            for (Index row = b * kBinRows; row < std::min(up.num_rows, (b + 1) * kBinRows); ++row)
                width = std::max(width, up.counts[row]);
            EXPECT_EQ(up.bin_offsets[b + 1] - up.bin_offsets[b], kBinRows * width);
        }
    }
}

TEST_P(UpperPartTest, SpmvEqualsFullSpmv) {
    for (const TetMesh& mesh : upper_meshes()) {
        AssemblyFixture f(mesh, GetParam());
        BinBcsrMatrix<double> a(f.pattern);
        const PerEntryMap map = cpu::build_per_entry_map(f.pattern, f.cell_nodes_view());
        cpu::sum_per_entry(map.view(), f.element_blocks.data(), a.view());
        const UpperPattern up = build_upper_pattern(f.pattern);
        std::vector<double> values = gather_upper_values(a, up);
        // Padding values are zero; every stored upper value is the full matrix's.
        std::size_t nonzero = 0;
        for (double v : values) nonzero += v != 0.0;
        std::size_t full_upper = 0;
        for (Index row = 0; row < a.pattern->num_rows; ++row)
            for (Index j = up.first[row]; j < a.pattern->row_counts[row]; ++j)
                for (int k = 0; k < 9; ++k)
                    full_upper +=
                        a.values[bin_bcsr_value_index(a.pattern->bin_offsets.data(), row, j, k)] !=
                        0.0;
        EXPECT_EQ(nonzero, full_upper);
        std::mt19937 rng(5);
        std::uniform_real_distribution<double> u(-1, 1);
        std::vector<double> x(3 * std::size_t(f.pattern.num_rows)), y(x.size()), y_up(x.size());
        for (double& v : x) v = u(rng);
        cpu::spmv(a.view(), x.data(), y.data());
        cpu::spmv_upper(upper_view(up, values, a), x.data(), y_up.data());
        double err = 0, ref = 0;
        for (std::size_t i = 0; i < y.size(); ++i) {
            err = std::max(err, std::abs(y[i] - y_up[i]));
            ref = std::max(ref, std::abs(y[i]));
        }
        EXPECT_LT(err, 1e-12 * ref);
        // A non-symmetric change shows: the upper part ignores the lower blocks.
        if (f.pattern.num_rows > 1 && up.counts[0] > 0) {
            a.values[bin_bcsr_value_index(a.pattern->bin_offsets.data(), 0, up.first[0], 1)] += 1.0;
            const std::vector<double> changed = gather_upper_values(a, up);
            EXPECT_NE(changed, values);
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Orders, UpperPartTest, ::testing::Values(1, 2, 3));

} // namespace
} // namespace edn

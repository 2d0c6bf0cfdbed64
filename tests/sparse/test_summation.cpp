#include "sparse/spmv.hpp"
#include "support/assembly_fixture.hpp"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <random>

namespace edn {
namespace {

using test::AssemblyFixture;

/// Max |A - reference| over all reference blocks, relative to max |reference|.
double relative_difference(const BinBcsrMatrix<double>& a,
                           const std::map<std::pair<Index, Index>, std::array<double, 9>>& ref) {
    double diff = 0, scale = 0;
    for (const auto& [key, block] : ref)
        for (int k = 0; k < 9; ++k) {
            diff =
                std::max(diff, std::abs(a.entry(key.first, key.second, k / 3, k % 3) - block[k]));
            scale = std::max(scale, std::abs(block[k]));
        }
    return diff / scale;
}

BinBcsrMatrix<double> assemble(const AssemblyFixture& f, SummationMethod method) {
    BinBcsrMatrix<double> k(f.pattern);
    switch (method) {
    case SummationMethod::PerEntry: {
        const PerEntryMap map = cpu::build_per_entry_map(f.pattern, f.cell_nodes_view());
        cpu::sum_per_entry(map.view(), f.element_blocks.data(), k.view());
        break;
    }
    case SummationMethod::PerSimplex:
        cpu::sum_per_simplex(f.node_cells(), f.cell_nodes_view(), f.element_blocks.data(),
                             k.view());
        break;
    case SummationMethod::Inline: {
        std::vector<double> x;
        for (const Vec3& p : f.mesh.positions) x.insert(x.end(), p.begin(), p.end());
        cpu::sum_inline_linear_p1(f.node_cells(), f.mesh.cells.data(), x.data(),
                                  lame_from_young_poisson(1000.0, 0.3), k.view());
        break;
    }
    }
    return k;
}

struct Case {
    int order;
    SummationMethod method;
};

class SummationTest : public ::testing::TestWithParam<Case> {};

TEST_P(SummationTest, EqualsCooReferenceAndIsSymmetric) {
    const auto [order, method] = GetParam();
    for (const TetMesh& mesh :
         {test::make_two_tets(),
          test::shuffle_mesh(test::make_random_perturbed_box(4, 3, 3, 2, 1, 1), 3)}) {
        AssemblyFixture f(mesh, order);
        const BinBcsrMatrix<double> k = assemble(f, method);
        const auto ref = test::reference_blocks(f);
        EXPECT_LT(relative_difference(k, ref), 1e-12);
        // Every stored block is in the reference (no stray contributions) and K = K^T.
        const auto coo = to_coo(k);
        EXPECT_EQ(coo.size(), 9 * ref.size());
        std::map<std::pair<std::int64_t, std::int64_t>, double> entries;
        for (const auto& e : coo) entries[{e.row, e.col}] = e.value;
        double asym = 0, scale = 0;
        for (const auto& [rc, v] : entries) {
            asym = std::max(asym, std::abs(v - entries.at({rc.second, rc.first})));
            scale = std::max(scale, std::abs(v));
        }
        EXPECT_LT(asym, 1e-12 * scale);
        // Padding stays zero.
        const BinBcsrPatternView p = f.pattern.view();
        for (Index row = 0; row < p.num_rows; ++row)
            for (Index j = p.row_counts[row]; j < p.width(row / kBinRows); ++j)
                for (int kk = 0; kk < 9; ++kk)
                    EXPECT_EQ(k.values[bin_bcsr_value_index(p.bin_offsets, row, j, kk)], 0.0);
    }
}

TEST_P(SummationTest, RigidModesInNullSpaceAndPatchTest) {
    const auto [order, method] = GetParam();
    AssemblyFixture f(test::make_random_perturbed_box(3, 3, 3, 1, 1, 1, 0.12, 99), order);
    BinBcsrMatrix<double> k = assemble(f, method);
    const std::vector<Vec3> x = node_positions(f.mesh, f.topology, f.layout);
    const Index n = f.layout.num_nodes();
    std::vector<double> u(3 * n), y(3 * n);
    auto apply = [&](auto field) {
        for (Index i = 0; i < n; ++i) {
            const std::array<double, 3> v = field(x[i]);
            for (int d = 0; d < 3; ++d) u[3 * i + d] = v[d];
        }
        cpu::spmv(k.view(), u.data(), y.data());
    };
    double kscale = 0;
    for (double v : k.diag) kscale = std::max(kscale, std::abs(v));
    // Three translations and three infinitesimal rotations: K u = 0.
    for (int axis = 0; axis < 3; ++axis) {
        apply([&](const Vec3&) {
            std::array<double, 3> t{};
            t[axis] = 1;
            return t;
        });
        for (double v : y) EXPECT_NEAR(v, 0.0, 1e-10 * kscale);
        apply([&](const Vec3& p) {
            std::array<double, 3> w{};
            w[axis] = 1;
            return std::array<double, 3>{w[1] * p[2] - w[2] * p[1], w[2] * p[0] - w[0] * p[2],
                                         w[0] * p[1] - w[1] * p[0]};
        });
        for (double v : y) EXPECT_NEAR(v, 0.0, 1e-10 * kscale);
    }
    // Patch test: a linear displacement gives constant stress, so the internal force vanishes at
    // interior nodes and the energy equals volume * psi(strain).
    const double A[3][3] = {{0.01, 0.002, -0.003}, {0.004, -0.02, 0.001}, {0.0, 0.003, 0.015}};
    apply([&](const Vec3& p) {
        std::array<double, 3> v{};
        for (int r = 0; r < 3; ++r) v[r] = A[r][0] * p[0] + A[r][1] * p[1] + A[r][2] * p[2] + 0.1;
        return v;
    });
    std::vector<bool> boundary(n, false);
    {
        const int m = f.per_cell();
        for (std::size_t b = 0; b < f.topology.boundary_face_ids.size(); ++b) {
            // A node lies on the boundary when it is a node of a boundary face's closure: mark
            // the owning cell's nodes whose barycentric weight on the opposite vertex is zero.
            const Index t = f.topology.boundary_face_cell[b];
            const Index face = f.topology.boundary_face_ids[b];
            int opposite = 0;
            while (f.topology.cell_faces[t][opposite] != face) ++opposite;
            for (int a = 0; a < m; ++a)
                if (local_node_barycentric(order, a)[opposite] == 0.0)
                    boundary[f.cell_nodes[t * m + a]] = true;
        }
    }
    double energy = 0;
    for (Index i = 0; i < 3 * n; ++i) energy += 0.5 * u[i] * y[i];
    for (Index i = 0; i < n; ++i)
        if (!boundary[i]) {
            for (int d = 0; d < 3; ++d)
                EXPECT_NEAR(y[3 * i + d], 0.0, 1e-9 * kscale) << "node " << i;
        }
    const auto lame = lame_from_young_poisson(1000.0, 0.3);
    double eps[3][3], tr = 0, eps2 = 0, volume = 0;
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) eps[r][c] = 0.5 * (A[r][c] + A[c][r]);
    for (int r = 0; r < 3; ++r) tr += eps[r][r];
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) eps2 += eps[r][c] * eps[r][c];
    for (const Cell& c : f.mesh.cells)
        volume += signed_volume(f.mesh.positions[c[0]], f.mesh.positions[c[1]],
                                f.mesh.positions[c[2]], f.mesh.positions[c[3]]);
    EXPECT_NEAR(energy, volume * (lame.mu * eps2 + 0.5 * lame.lambda * tr * tr), 1e-10);
}

std::vector<Case> cases() {
    std::vector<Case> all;
    for (int p = 1; p <= 3; ++p) {
        all.push_back({p, SummationMethod::PerEntry});
        all.push_back({p, SummationMethod::PerSimplex});
    }
    all.push_back({1, SummationMethod::Inline});
    return all;
}

INSTANTIATE_TEST_SUITE_P(Methods, SummationTest, ::testing::ValuesIn(cases()),
                         [](const auto& info) {
                             return std::string(summation_method_name(info.param.method)) + "_p" +
                                    std::to_string(info.param.order);
                         });

// The widths that size the device per-simplex summation's shared memory: the widest bin, and
// the 95th percentile of the bins' slot counts.
TEST(BinWidths, WidestAndThe95thPercentile) {
    std::vector<Index> offsets = {0}, widths;
    for (int b = 0; b < 100; ++b) widths.push_back(32 * (b % 20 == 7 ? 50 + b : 4 + b % 3));
    for (Index w : widths) offsets.push_back(offsets.back() + w);
    const BinWidths bw = bin_widths(offsets);
    EXPECT_EQ(bw.widest, 32 * (50 + 87));
    std::vector<Index> sorted = widths;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(bw.common, sorted[94]);
    EXPECT_LT(bw.common, 32 * 50); // five wide bins of 100: the common width is a narrow one's
    EXPECT_EQ(bin_widths({0}).widest, 0);
    EXPECT_EQ(bin_widths({}).common, 0);
}

TEST(Spmv, EqualsReferenceProductInDoubleAndFloat) {
    for (int order = 1; order <= 3; ++order) {
        AssemblyFixture f(test::shuffle_mesh(test::make_random_perturbed_box(4, 3, 2, 1, 1, 1), 5),
                          order);
        BinBcsrMatrix<double> k = assemble(f, SummationMethod::PerEntry);
        const auto ref = test::reference_blocks(f);
        const Index n = f.layout.num_nodes();
        std::mt19937 rng(42);
        std::uniform_real_distribution<double> dist(-1, 1);
        std::vector<double> x(3 * n), y(3 * n), y_ref(3 * n, 0.0);
        for (double& v : x) v = dist(rng);
        for (const auto& [key, block] : ref)
            for (int r = 0; r < 3; ++r)
                for (int c = 0; c < 3; ++c)
                    y_ref[3 * key.first + r] += block[3 * r + c] * x[3 * key.second + c];
        cpu::spmv(k.view(), x.data(), y.data());
        double err = 0, scale = 0;
        for (Index i = 0; i < 3 * n; ++i) {
            err = std::max(err, std::abs(y[i] - y_ref[i]));
            scale = std::max(scale, std::abs(y_ref[i]));
        }
        EXPECT_LT(err, 1e-12 * scale);
        // The same product split over the threads (these matrices are below the serial bound).
        std::vector<double> y_parallel(3 * n);
        cpu::spmv(k.view(), x.data(), y_parallel.data(), 0);
        EXPECT_EQ(y_parallel, y);
        // Float matrix and vectors agree to single precision.
        BinBcsrMatrix<float> kf(f.pattern);
        for (std::size_t i = 0; i < k.values.size(); ++i)
            kf.values[i] = static_cast<float>(k.values[i]);
        for (std::size_t i = 0; i < k.diag.size(); ++i) kf.diag[i] = static_cast<float>(k.diag[i]);
        std::vector<float> xf(x.begin(), x.end()), yf(3 * n);
        cpu::spmv(kf.view(), xf.data(), yf.data());
        double errf = 0;
        for (Index i = 0; i < 3 * n; ++i) errf = std::max(errf, std::abs(yf[i] - y_ref[i]));
        EXPECT_LT(errf, 1e-4 * scale);
    }
}

TEST(Spmv, EqualsThePerRowLoopBitForBit) {
    // The product runs rows in vector lanes (SSE2, or AVX2 where the CPU has it) over each lane
    // group's own slot count; every row must still sum in the per-row order: diagonal block, then
    // the row's blocks in slot order, each block row as (v0 x0 + v1 x1) + v2 x2.
    for (int order = 1; order <= 2; ++order) {
        AssemblyFixture f(test::shuffle_mesh(test::make_random_perturbed_box(5, 4, 3, 1, 1, 1), 7),
                          order);
        BinBcsrMatrix<double> k = assemble(f, SummationMethod::PerEntry);
        const BinBcsrPatternView p = f.pattern.view();
        const std::int64_t n = p.num_rows;
        std::mt19937 rng(3);
        std::uniform_real_distribution<double> dist(-1, 1);
        std::vector<double> x(3 * n), y(3 * n), y_row(3 * n);
        for (double& v : x) v = dist(rng);
        for (std::int64_t row = 0; row < n; ++row) {
            const std::int64_t bin = row / kBinRows, begin = p.bin_offsets[bin];
            const std::int64_t plane = p.bin_offsets[bin + 1] - begin;
            for (int r = 0; r < 3; ++r) {
                double acc = k.diag[(3 * r) * n + row] * x[3 * row] +
                             k.diag[(3 * r + 1) * n + row] * x[3 * row + 1] +
                             k.diag[(3 * r + 2) * n + row] * x[3 * row + 2];
                for (Index j = 0; j < p.row_counts[row]; ++j) {
                    const std::int64_t s = begin + j * kBinRows + row % kBinRows;
                    const std::int64_t col = p.columns[s];
                    const double* v = k.values.data() + 9 * begin + (s - begin);
                    acc += v[(3 * r) * plane] * x[3 * col] +
                           v[(3 * r + 1) * plane] * x[3 * col + 1] +
                           v[(3 * r + 2) * plane] * x[3 * col + 2];
                }
                y_row[3 * row + r] = acc;
            }
        }
        cpu::spmv(k.view(), x.data(), y.data());
        EXPECT_EQ(y, y_row) << "p" << order;
    }
}

TEST(BlockJacobi, InverseDiagonalTimesDiagonalIsIdentity) {
    AssemblyFixture f(test::make_random_perturbed_box(3, 2, 2, 1, 1, 1), 2);
    BinBcsrMatrix<double> k = assemble(f, SummationMethod::PerSimplex);
    const Index n = f.layout.num_nodes();
    std::vector<double> inv(9 * n), x(3 * n), dx(3 * n), back(3 * n);
    cpu::invert_diagonal(k.view(), inv.data());
    std::mt19937 rng(1);
    std::uniform_real_distribution<double> dist(-1, 1);
    for (double& v : x) v = dist(rng);
    for (Index i = 0; i < n; ++i)
        for (int r = 0; r < 3; ++r) {
            dx[3 * i + r] = 0;
            for (int c = 0; c < 3; ++c) dx[3 * i + r] += k.diag[(3 * r + c) * n + i] * x[3 * i + c];
        }
    cpu::apply_block_jacobi(n, inv.data(), dx.data(), back.data());
    for (Index i = 0; i < 3 * n; ++i) EXPECT_NEAR(back[i], x[i], 1e-9);
}

} // namespace
} // namespace edn

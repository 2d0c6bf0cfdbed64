// Two-level preconditioner (solver/two_level.hpp): the coarse space against brute force, the
// flexible PCG against block-Jacobi PCG, and the CPU simulation with it.
#include "core/error.hpp"
#include "mesh/node_layout.hpp"
#include "sim/simulation.hpp"
#include "solver/two_level.hpp"
#include "sparse/spmv.hpp"
#include "support/compare.hpp"
#include "support/linear_system.hpp"
#include "support/random.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <gtest/gtest.h>
#include <map>
#include <random>

namespace edn {
namespace {

using test::AssemblyFixture;

using test::random_vector;

/// Fine matrix K + shift * mean (0,0) diagonal entry, from the fixture's element blocks.
BinBcsrMatrix<double> fine_matrix(const AssemblyFixture& f, double shift) {
    return test::shifted_stiffness(f, shift, test::DiagonalMean::FirstAxis);
}

class TwoLevelTest : public ::testing::TestWithParam<int> {};

// Every cell that holds a node gives it the same interpolation (its vertices, with the local
// barycentric weights of the node's local index there) up to the last bit of a weight: a p = 3
// edge node's 1/3 is 1 - 2/3 from one end; make_coarse_space takes the first cell's, and so does
// the GPU's make_p1_transfer (bit for bit the host's).
TEST_P(TwoLevelTest, EveryCellGivesANodeTheSameInterpolation) {
    const int order = GetParam();
    AssemblyFixture f(test::make_random_perturbed_box(3, 4, 5, 0.5, 0.5, 1.0, 0.1, 7), order);
    const int m = nodes_per_cell(order);
    std::vector<Index> nodes(static_cast<std::size_t>(m));
    std::map<Index, std::vector<std::pair<Index, double>>> first;
    Index mismatches = 0;
    for (Index t = 0; t < f.mesh.num_cells(); ++t) {
        cell_nodes(f.topology, f.mesh.cells, f.layout, t, nodes.data());
        for (int a = 0; a < m; ++a) {
            const std::array<double, 4> w = local_node_barycentric(order, a);
            std::vector<std::pair<Index, double>> entries;
            for (int v = 0; v < 4; ++v)
                if (w[v] != 0) entries.emplace_back(f.mesh.cells[t][v], w[v]);
            std::sort(entries.begin(), entries.end());
            const auto [it, inserted] = first.emplace(nodes[a], entries);
            if (inserted) continue;
            bool same = it->second.size() == entries.size();
            for (std::size_t k = 0; same && k < entries.size(); ++k)
                same = it->second[k].first == entries[k].first &&
                       std::abs(it->second[k].second - entries[k].second) <= 1e-15;
            mismatches += !same;
        }
    }
    EXPECT_EQ(mismatches, 0);
}

TEST_P(TwoLevelTest, ProlongationInterpolatesLinearFieldsAndRestrictionIsItsTranspose) {
    const int order = GetParam();
    AssemblyFixture f(test::make_random_perturbed_box(4, 3, 3, 1.0, 0.8, 0.7, 0.15, 3), order);
    const CoarseSpace c = make_coarse_space(f.mesh, f.topology, f.layout);
    ASSERT_EQ(c.num_nodes, f.layout.num_nodes());
    const std::vector<Vec3> x = node_positions(f.mesh, f.topology, f.layout);
    // u(X) = A X + t at the vertices, prolonged: equals u at every node (P1 fields are exact).
    const double A[3][3] = {{0.3, -1.2, 0.5}, {2.0, 0.1, -0.7}, {-0.4, 0.9, 1.1}};
    const double t[3] = {0.2, -0.3, 0.05};
    for (Index i = 0; i < c.num_nodes; ++i) {
        double sum_w = 0;
        for (int d = 0; d < 3; ++d) {
            double u = 0;
            for (int k = 0; k < 3; ++k) {
                const Index v = c.pro_vertex[3 * i + k];
                if (v < 0) continue;
                const Vec3& X = f.mesh.positions[v];
                u += c.pro_weight[3 * i + k] *
                     (A[d][0] * X[0] + A[d][1] * X[1] + A[d][2] * X[2] + t[d]);
                if (d == 0) sum_w += c.pro_weight[3 * i + k];
            }
            const double expected =
                A[d][0] * x[i][0] + A[d][1] * x[i][1] + A[d][2] * x[i][2] + t[d];
            EXPECT_NEAR(u, expected, 1e-12) << "node " << i;
        }
        EXPECT_NEAR(sum_w, 1.0, 1e-14);
    }
    // (P c) . r == c . (P^T r) for random c, r.
    const std::vector<double> cv = random_vector(c.num_vertices, 5),
                              r = random_vector(c.num_nodes, 6);
    double left = 0, right = 0;
    for (Index i = 0; i < c.num_nodes; ++i)
        for (int k = 0; k < 3; ++k)
            if (c.pro_vertex[3 * i + k] >= 0)
                left += c.pro_weight[3 * i + k] * cv[c.pro_vertex[3 * i + k]] * r[i];
    for (Index v = 0; v < c.num_vertices; ++v)
        for (Index k = c.restriction.offsets[v]; k < c.restriction.offsets[v + 1]; ++k)
            right += cv[v] * c.restriction_weight[k] * r[c.restriction.indices[k]];
    EXPECT_NEAR(left, right, 1e-12 * std::abs(left));
}

TEST_P(TwoLevelTest, CoarseMatrixIsTheGalerkinProductPlusRestrictedDiagonal) {
    const int order = GetParam();
    AssemblyFixture f(test::make_random_perturbed_box(3, 3, 2, 1.0, 1.0, 0.6, 0.1, 4), order);
    const CoarseSpace c = make_coarse_space(f.mesh, f.topology, f.layout);
    const std::vector<double> d = random_vector(c.num_nodes, 7, 0.5, 2.0);
    BinBcsrMatrix<double> coarse(c.pattern);
    std::vector<double> scratch;
    cpu::assemble_coarse(c, f.element_blocks.data(), f.mesh.num_cells(), d, scratch, coarse);
    // Brute force: P^T K P from the COO blocks of K, plus sum_i w_ia d_i on the diagonal.
    std::map<std::pair<Index, Index>, std::array<double, 9>> expected;
    for (const auto& [ij, block] : test::reference_blocks(f))
        for (int ka = 0; ka < 3; ++ka)
            for (int kb = 0; kb < 3; ++kb) {
                const Index a = c.pro_vertex[3 * ij.first + ka],
                            b = c.pro_vertex[3 * ij.second + kb];
                if (a < 0 || b < 0) continue;
                const double w = c.pro_weight[3 * ij.first + ka] * c.pro_weight[3 * ij.second + kb];
                auto& e = expected[{a, b}];
                for (int k = 0; k < 9; ++k) e[k] += w * block[k];
            }
    for (Index i = 0; i < c.num_nodes; ++i)
        for (int k = 0; k < 3; ++k) {
            const Index a = c.pro_vertex[3 * i + k];
            if (a < 0) continue;
            auto& e = expected[{a, a}];
            for (int kk : {0, 4, 8}) e[kk] += c.pro_weight[3 * i + k] * d[i];
        }
    double scale = 0;
    for (const auto& [ab, block] : expected)
        for (double v : block) scale = std::max(scale, std::abs(v));
    std::size_t stored = 0;
    for (const auto& [ab, block] : expected) {
        for (int r = 0; r < 3; ++r)
            for (int col = 0; col < 3; ++col)
                EXPECT_NEAR(coarse.entry(ab.first, ab.second, r, col), block[3 * r + col],
                            1e-12 * scale)
                    << "block (" << ab.first << "," << ab.second << ")";
        ++stored;
    }
    EXPECT_EQ(static_cast<std::int64_t>(stored), c.pattern.nnz_blocks()); // the P1 pattern exactly
}

TEST_P(TwoLevelTest, FlexiblePcgMatchesBlockJacobiWithFarFewerIterations) {
    const int order = GetParam();
    const int n = order == 2 ? 9 : 6;
    AssemblyFixture f(test::make_random_perturbed_box(n, n, n, 1.0, 1.0, 1.0, 0.1, 8), order);
    const CoarseSpace c = make_coarse_space(f.mesh, f.topology, f.layout);
    BinBcsrMatrix<double> a = fine_matrix(f, 0.003);
    BinBcsrMatrix<double> coarse(c.pattern);
    std::vector<double> scratch;
    cpu::assemble_coarse(c, f.element_blocks.data(), f.mesh.num_cells(), {}, scratch, coarse);
    // The shift on the coarse diagonal too (row sums of the fine shift: the same per vertex).
    const std::int64_t nf = c.num_nodes, nv = c.num_vertices;
    {
        std::vector<double> d(nf, a.diag[0] - 0.0);
        BinBcsrMatrix<double> k = fine_matrix(f, 0.0);
        for (std::int64_t i = 0; i < nf; ++i) d[i] = a.diag[i] - k.diag[i];
        cpu::assemble_coarse(c, f.element_blocks.data(), f.mesh.num_cells(), d, scratch, coarse);
    }
    // Pins: the bottom face.
    const std::vector<Vec3> x0 = node_positions(f.mesh, f.topology, f.layout);
    std::vector<std::uint8_t> fixed(nf, 0);
    for (std::int64_t i = 0; i < nf; ++i) fixed[i] = x0[i][2] < 1e-9;
    std::vector<double> b(3 * nf);
    for (std::int64_t i = 0; i < nf; ++i) b[3 * i] = 0.1, b[3 * i + 1] = 0.0, b[3 * i + 2] = -1.0;
    PcgSettings s;
    s.relative_tolerance = 1e-8;
    s.max_iterations = 5000;
    s.warm_start = false;
    // Cold start: free dofs from 0 whatever their input; fixed dofs keep theirs (0 here).
    std::vector<double> xb(3 * nf, 0.0), xt(3 * nf, 7.0);
    for (std::int64_t i = 0; i < nf; ++i)
        if (fixed[i]) xt[3 * i] = xt[3 * i + 1] = xt[3 * i + 2] = 0.0;
    PcgWorkspace<double> wsb;
    const PcgResult rb = cpu::pcg(a.view(), b.data(), xb.data(), s, wsb, fixed.data());
    PcgSettings inner;
    inner.relative_tolerance = 0.1;
    inner.max_iterations = 50;
    TwoLevelWorkspace wst;
    const PcgResult rt = cpu::pcg_two_level(a.view(), c, coarse.view(), b.data(), xt.data(), s,
                                            inner, wst, fixed.data());
    ASSERT_TRUE(rb.converged);
    ASSERT_TRUE(rt.converged);
    EXPECT_FALSE(rt.breakdown);
    EXPECT_GT(wst.inner_iterations, 0);
    EXPECT_LT(2 * rt.iterations, rb.iterations)
        << "two-level " << rt.iterations << " vs " << rb.iterations;
    double diff = 0, norm = 0;
    for (std::size_t k = 0; k < xb.size(); ++k) {
        diff = std::max(diff, std::abs(xt[k] - xb[k]));
        norm = std::max(norm, std::abs(xb[k]));
    }
    EXPECT_LT(diff, 1e-6 * norm);
    for (std::int64_t i = 0; i < nf; ++i)
        if (fixed[i]) {
            EXPECT_EQ(xt[3 * i + 2], 0.0); // pinned dofs keep their value
        }
    // The true residual meets the tolerance (the flexible recurrences do not drift).
    std::vector<double> ax(3 * nf);
    cpu::spmv(a.view(), xt.data(), ax.data());
    double rr = 0, bb = 0;
    for (std::int64_t i = 0; i < nf; ++i)
        if (!fixed[i])
            for (int d = 0; d < 3; ++d) {
                rr += (b[3 * i + d] - ax[3 * i + d]) * (b[3 * i + d] - ax[3 * i + d]);
                bb += b[3 * i + d] * b[3 * i + d];
            }
    EXPECT_LT(std::sqrt(rr), 1e-7 * std::sqrt(bb));
    // Zero right-hand side: x = 0 at once.
    std::vector<double> zero(3 * nf, 0.0), xz(3 * nf, 1.0);
    for (std::int64_t i = 0; i < nf; ++i)
        if (fixed[i]) xz[3 * i] = xz[3 * i + 1] = xz[3 * i + 2] = 0.0;
    const PcgResult rz = cpu::pcg_two_level(a.view(), c, coarse.view(), zero.data(), xz.data(), s,
                                            inner, wst, fixed.data());
    EXPECT_TRUE(rz.converged);
    EXPECT_EQ(rz.iterations, 0);
    (void)nv;
}

INSTANTIATE_TEST_SUITE_P(Orders, TwoLevelTest, ::testing::Values(2, 3));

TEST(TwoLevel, OrderOneHasNoCoarseSpace) {
    AssemblyFixture f(test::make_box_mesh(2, 2, 2, 1, 1, 1), 1);
    EXPECT_THROW(make_coarse_space(f.mesh, f.topology, f.layout), Error);
}

TEST(TwoLevel, SimulationMatchesBlockJacobiWithFewerIterations) {
    const TetMesh mesh = test::make_box_mesh(5, 5, 5, 1.0, 1.0, 1.0);
    for (Material material : {Material::NeoHookean, Material::Corotational}) {
        SimulationSettings s;
        s.order = 2;
        s.material = material;
        s.max_newton_iterations = 3;
        s.pcg.relative_tolerance = 1e-9;
        s.pcg.max_iterations = 2000;
        s.cg_forcing = false; // both preconditioners solve to 1e-9: the same trajectory
        s.preconditioner = Preconditioner::BlockJacobi;
        Simulation bj(mesh, s);
        s.preconditioner = Preconditioner::TwoLevel;
        Simulation tl(mesh, s);
        const std::vector<double> rest = bj.positions();
        for (Index i = 0; i < bj.num_nodes(); ++i)
            if (rest[3 * i + 2] < 1e-9) bj.set_pinned(i, true), tl.set_pinned(i, true);
        int cg_bj = 0, cg_tl = 0;
        for (int frame = 0; frame < 10; ++frame) {
            const StepResult a = bj.step(), b = tl.step();
            cg_bj += a.cg_iterations;
            cg_tl += b.cg_iterations;
            EXPECT_EQ(b.pcg_breakdowns, 0);
            EXPECT_EQ(b.pcg_unconverged, 0);
        }
        const std::vector<double> xa = bj.positions(), xb = tl.positions();
        const double diff = test::max_abs_diff(xa, xb);
        const double motion = test::max_abs_diff(xa, rest);
        EXPECT_GT(motion, 1e-4); // it moved
        EXPECT_LT(diff, 1e-6 * motion);
        EXPECT_LT(cg_tl, cg_bj);
    }
}

} // namespace
} // namespace edn

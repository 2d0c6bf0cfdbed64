// Smoothed-aggregation multigrid (solver/multigrid.hpp): the transfer operators and every coarse
// operator against dense brute force, re-valued hierarchies against fresh ones, the cycle's
// symmetry and definiteness, and CG iteration counts that do not grow with the mesh.
#include "core/error.hpp"
#include "core/parallel.hpp"
#include "mesh/node_layout.hpp"
#include "mesh/topology.hpp"
#include "sim/simulation.hpp"
#include "solver/lanczos.hpp"
#include "solver/multigrid.hpp"
#include "solver/two_level.hpp"
#include "sparse/bin_bcsr_pattern.hpp"
#include "sparse/spmv.hpp"
#include "support/compare.hpp"
#include "support/linear_system.hpp"
#include "support/multigrid_checks.hpp"
#include "support/random.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <gtest/gtest.h>
#include <map>

namespace edn {
namespace {

using Dense = std::vector<std::vector<double>>;

Dense zeros(std::size_t r, std::size_t c) {
    return Dense(r, std::vector<double>(c, 0.0));
}

// A square block operator in the binned layout as a dense matrix (block b, b*b planes).
Dense dense_operator(const BinBcsrPattern& p, int b, const std::vector<double>& values,
                     const std::vector<double>& diag) {
    const std::size_t n = static_cast<std::size_t>(p.num_rows);
    Dense d = zeros(n * b, n * b);
    const BinBcsrPatternView v = p.view();
    for (Index row = 0; row < p.num_rows; ++row) {
        for (int k = 0; k < b * b; ++k) d[row * b + k / b][row * b + k % b] = diag[k * n + row];
        const Index bin = row / kBinRows, w = v.width(bin);
        for (Index j = 0; j < p.row_counts[row]; ++j) {
            const Index col = v.columns[v.slot(row, j)];
            for (int k = 0; k < b * b; ++k)
                d[row * b + k / b][col * b + k % b] =
                    values[static_cast<std::size_t>(b * b) * v.bin_offsets[bin] +
                           (k * w + j) * kBinRows + row % kBinRows];
        }
    }
    return d;
}

Dense dense_csr(const BlockCsr& m) {
    Dense d = zeros(static_cast<std::size_t>(m.num_rows) * m.row_block,
                    static_cast<std::size_t>(m.num_cols) * m.col_block);
    const std::size_t bs = static_cast<std::size_t>(m.row_block) * m.col_block;
    for (Index i = 0; i < m.num_rows; ++i)
        for (Index k = m.offsets[i]; k < m.offsets[i + 1]; ++k)
            for (int r = 0; r < m.row_block; ++r)
                for (int c = 0; c < m.col_block; ++c)
                    d[i * m.row_block + r][m.columns[k] * m.col_block + c] =
                        m.values[k * bs + r * m.col_block + c];
    return d;
}

Dense multiply(const Dense& a, const Dense& b, bool transpose_a = false) {
    const std::size_t n = transpose_a ? a[0].size() : a.size(), inner = b.size(), m = b[0].size();
    Dense c = zeros(n, m);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t k = 0; k < inner; ++k) {
            const double aik = transpose_a ? a[k][i] : a[i][k];
            if (aik != 0)
                for (std::size_t j = 0; j < m; ++j) c[i][j] += aik * b[k][j];
        }
    return c;
}

double max_abs(const Dense& a) {
    double m = 0;
    for (const auto& row : a)
        for (double v : row) m = std::max(m, std::abs(v));
    return m;
}

// A pinned, mass-shifted linear-elastic system (the Newton matrix of a step at rest).
struct System {
    test::LinearSystem s;
    std::vector<std::uint8_t> fixed;
    std::vector<double> positions;
    System(const TetMesh& mesh, double shift) : s(mesh, 1, shift), fixed(s.bottom_nodes()) {
        for (const Vec3& x : s.f->mesh.positions)
            for (int a = 0; a < 3; ++a) positions.push_back(x[a]);
    }
};

MultigridSettings small_coarsest(int modes) {
    MultigridSettings m;
    m.modes = modes;
    m.coarsest_dofs = 20; // force three or more levels on test meshes
    return m;
}

TEST(Multigrid, RigidBodyModesAreTheNullSpaceOfTheStiffness) {
    System sys(test::make_random_perturbed_box(4, 3, 3, 1.0, 0.8, 0.7, 0.15, 3), 0.0);
    const Index n = sys.s.rows();
    const double center[3] = {0.4, 0.3, 0.2};
    std::vector<double> modes(static_cast<std::size_t>(n) * 18);
    for (Index i = 0; i < n; ++i)
        rigid_body_modes(sys.positions.data() + 3 * i, center, 6, modes.data() + 18 * i);
    const double scale = max_abs(dense_operator(sys.s.f->pattern, 3, sys.s.a.values, sys.s.a.diag));
    for (int m = 0; m < 6; ++m) {
        std::vector<double> v(3 * n), kv(3 * n);
        for (Index i = 0; i < n; ++i)
            for (int a = 0; a < 3; ++a) v[3 * i + a] = modes[18 * i + a * 6 + m];
        cpu::spmv(sys.s.a.view(), v.data(), kv.data());
        double worst = 0;
        for (double x : kv) worst = std::max(worst, std::abs(x));
        EXPECT_LT(worst, 1e-12 * scale) << "mode " << m;
    }
}

class MultigridModes : public ::testing::TestWithParam<int> {};

// The hierarchy of sys built with `settings`: T orthonormal per aggregate, P the smoothed T and
// every coarse operator P^T A P, each against dense brute force; the coarse patterns exact and
// their upper blocks mirrored.
void expect_brute_force_galerkin(System& sys, const MultigridSettings& settings) {
    const int modes = settings.modes;
    MultigridHierarchy h =
        cpu::build_multigrid(sys.s.f->pattern, sys.positions.data(), sys.fixed.data(), settings);
    ASSERT_GE(h.num_levels(), 3);
    cpu::revalue_multigrid(h, sys.s.a.view());
    Dense a = dense_operator(sys.s.f->pattern, 3, sys.s.a.values, sys.s.a.diag);
    for (std::size_t l = 0; l < h.levels.size(); ++l) {
        const MultigridLevel& level = h.levels[l];
        const int b = level.block;
        // T dense, then P = T - w D^-1 A T (D^-1 the level's inverse diagonal), on aggregated rows.
        Dense t = zeros(static_cast<std::size_t>(level.num_nodes) * b,
                        static_cast<std::size_t>(level.coarse_nodes) * modes);
        Dense dinv = zeros(t.size(), t.size());
        for (Index i = 0; i < level.num_nodes; ++i) {
            for (int r = 0; r < b; ++r)
                for (int c = 0; c < b; ++c)
                    dinv[i * b + r][i * b + c] = level.inverse_diag[(i * b + r) * b + c];
            if (level.aggregate[i] < 0) continue;
            for (int r = 0; r < b; ++r)
                for (int c = 0; c < modes; ++c)
                    t[i * b + r][level.aggregate[i] * modes + c] =
                        level.tentative[(static_cast<std::size_t>(i) * b + r) * modes + c];
        }
        // T^T T is the identity on the kept columns (orthonormal per aggregate).
        const Dense tt = multiply(t, t, true);
        for (std::size_t i = 0; i < tt.size(); ++i)
            for (std::size_t j = 0; j < tt.size(); ++j) {
                const double expected = (i == j && tt[i][i] > 0.5) ? 1.0 : 0.0;
                EXPECT_NEAR(tt[i][j], expected, 1e-12);
            }
        const double omega = h.settings.prolongator_damping / level.lambda_max;
        Dense p = multiply(dinv, multiply(a, t));
        for (std::size_t i = 0; i < p.size(); ++i)
            for (std::size_t j = 0; j < p[0].size(); ++j)
                p[i][j] = level.aggregate[i / b] < 0 ? 0.0 : t[i][j] - omega * p[i][j];
        const Dense p_got = dense_csr(level.prolongator);
        double err = 0;
        for (std::size_t i = 0; i < p.size(); ++i)
            for (std::size_t j = 0; j < p[0].size(); ++j)
                err = std::max(err, std::abs(p[i][j] - p_got[i][j]));
        EXPECT_LT(err, 1e-12 * max_abs(p)) << "level " << l;
        // A_c = P^T A P
        const Dense ac = multiply(p_got, multiply(a, p_got), true);
        const BlockMatrix& c = h.coarse[l];
        const Dense ac_got = dense_operator(c.pattern, c.block, c.values, c.diag);
        err = 0;
        for (std::size_t i = 0; i < ac.size(); ++i)
            for (std::size_t j = 0; j < ac.size(); ++j)
                err = std::max(err, std::abs(ac[i][j] - ac_got[i][j]));
        EXPECT_LT(err, 1e-11 * max_abs(ac)) << "level " << l;
        // every structurally nonzero block of P^T A P is in the exact pattern, and no more rows
        EXPECT_EQ(c.pattern.num_rows, level.coarse_nodes);
        // Symmetric A_c: the upper blocks are summed and mirrored, the lower ones have no pairs.
        const BinBcsrPatternView cv = c.pattern.view();
        ASSERT_EQ(level.galerkin_mirror.size(), static_cast<std::size_t>(c.pattern.num_slots()));
        Index upper = 0;
        for (Index row = 0; row < cv.num_rows; ++row)
            for (Index j = 0; j < c.pattern.row_counts[row]; ++j) {
                const Index s = cv.slot(row, j), col = cv.columns[s];
                const bool has_pairs = level.galerkin_offsets[s + 1] > level.galerkin_offsets[s];
                EXPECT_EQ(has_pairs, col > row);
                if (col < row) continue;
                ++upper;
                ASSERT_GE(level.galerkin_mirror[s], 0);
                EXPECT_EQ(cv.columns[level.galerkin_mirror[s]], row);
            }
        if (l == 0) EXPECT_GT(upper, 0) << "the first coarse level couples its nodes";
        a = ac_got;
    }
}

// f(settings) for small_coarsest(modes) with each aggregation (traced).
template <class F> void for_each_aggregation(int modes, F&& f) {
    for (const Aggregation aggregation : {Aggregation::Greedy, Aggregation::Parallel}) {
        SCOPED_TRACE(aggregation == Aggregation::Greedy ? "greedy" : "parallel");
        MultigridSettings settings = small_coarsest(modes);
        settings.aggregation = aggregation;
        f(settings);
    }
}

TEST_P(MultigridModes, ProlongatorAndCoarseOperatorsEqualBruteForceGalerkin) {
    System sys(test::make_random_perturbed_box(6, 5, 5, 1.0, 0.8, 0.7, 0.15, 7), 0.02);
    for_each_aggregation(GetParam(), [&](const MultigridSettings& settings) {
        expect_brute_force_galerkin(sys, settings);
    });
}

TEST_P(MultigridModes, RevaluedHierarchyEqualsAFreshOne) {
    const int modes = GetParam();
    System one(test::make_random_perturbed_box(5, 4, 4, 1.0, 0.8, 0.7, 0.15, 7), 0.02);
    System two(test::make_random_perturbed_box(5, 4, 4, 1.0, 0.8, 0.7, 0.15, 7), 0.3);
    MultigridHierarchy reused = cpu::build_multigrid(one.s.f->pattern, one.positions.data(),
                                                     one.fixed.data(), small_coarsest(modes));
    cpu::revalue_multigrid(reused, one.s.a.view());
    // same pattern and pins, other values (the next Newton iteration)
    BinBcsrMatrix<double> a2 = two.s.a;
    a2.pattern = &one.s.f->pattern;
    cpu::revalue_multigrid(reused, a2.view());
    MultigridHierarchy fresh = cpu::build_multigrid(one.s.f->pattern, one.positions.data(),
                                                    one.fixed.data(), small_coarsest(modes));
    cpu::revalue_multigrid(fresh, a2.view());
    ASSERT_EQ(reused.coarse.size(), fresh.coarse.size());
    for (std::size_t l = 0; l < fresh.coarse.size(); ++l) {
        EXPECT_EQ(reused.coarse[l].values, fresh.coarse[l].values);
        EXPECT_EQ(reused.coarse[l].diag, fresh.coarse[l].diag);
        EXPECT_EQ(reused.levels[l].prolongator.values, fresh.levels[l].prolongator.values);
    }
    EXPECT_EQ(reused.coarsest_factor, fresh.coarsest_factor);
}

TEST_P(MultigridModes, CycleIsSymmetricPositiveDefiniteOnFreeDofs) {
    System sys(test::make_random_perturbed_box(6, 5, 4, 1.0, 0.8, 0.7, 0.15, 9), 0.01);
    for_each_aggregation(GetParam(), [&](const MultigridSettings& settings) {
        MultigridHierarchy h = cpu::build_multigrid(sys.s.f->pattern, sys.positions.data(),
                                                    sys.fixed.data(), settings);
        cpu::revalue_multigrid(h, sys.s.a.view());
        test::expect_cycle_symmetric_positive(h, sys.s.a.view(), sys.fixed);
    });
}

// The cycle smooths the matrix it was re-valued with (MultigridHierarchy::fine_values): applied
// with a later matrix (a lagged hierarchy) it is the same operator, so it stays symmetric
// positive definite; re-valued with the later matrix it changes.
TEST(Multigrid, LaggedCycleIsTheReValuedMatrixOperator) {
    System sys(test::make_random_perturbed_box(6, 5, 4, 1.0, 0.8, 0.7, 0.15, 9), 0.01);
    MultigridHierarchy h = cpu::build_multigrid(sys.s.f->pattern, sys.positions.data(),
                                                sys.fixed.data(), small_coarsest(6));
    cpu::revalue_multigrid(h, sys.s.a.view());
    const Index n = sys.s.rows();
    std::vector<double> u = test::random_vector(3 * n, 5);
    for (Index i = 0; i < n; ++i)
        if (sys.fixed[i]) u[3 * i] = u[3 * i + 1] = u[3 * i + 2] = 0;
    std::vector<double> before(3 * n), lagged(3 * n), fresh(3 * n);
    cpu::apply_multigrid(h, sys.s.a.view(), u.data(), before.data());
    // A later matrix: every value scaled by 1.5 (the pattern is the same).
    std::vector<double> values = sys.s.a.values, diag = sys.s.a.diag;
    for (double& v : values) v *= 1.5;
    for (double& v : diag) v *= 1.5;
    BinBcsrMatrixView<double> later = sys.s.a.view();
    later.values = values.data();
    later.diag = diag.data();
    cpu::apply_multigrid(h, later, u.data(), lagged.data());
    EXPECT_EQ(before, lagged);
    cpu::revalue_multigrid(h, later);
    cpu::apply_multigrid(h, later, u.data(), fresh.data());
    EXPECT_GT(test::max_abs_diff(before, fresh), 1e-3 * test::max_abs_diff(before, u));
}

INSTANTIATE_TEST_SUITE_P(Modes, MultigridModes, ::testing::Values(3, 6), [](const auto& info) {
    return info.param == 6 ? "Rigid" : "Translations";
});

// CG iterations to 1e-8 on the pinned, mass-shifted stiffness of a box refined twice: few, and
// not growing like block Jacobi's.
TEST(Multigrid, IterationsDoNotGrowWithTheMesh) {
    std::vector<int> its, jacobi;
    for (int k : {3, 6, 12}) {
        System sys(test::make_box_mesh(k, k, 2 * k, 0.5, 0.5, 1.0), 1e-3);
        MultigridSettings s;
        MultigridHierarchy h =
            cpu::build_multigrid(sys.s.f->pattern, sys.positions.data(), sys.fixed.data(), s);
        cpu::revalue_multigrid(h, sys.s.a.view());
        const Index n = sys.s.rows();
        std::vector<double> b(3 * n, 0.0), x;
        for (Index i = 0; i < n; ++i) b[3 * i + 2] = -1.0; // gravity
        const PcgResult r = test::solve_with_multigrid(h, sys.s.a.view(), b, sys.fixed, 2000, x);
        EXPECT_TRUE(r.converged) << k;
        // the true residual meets the tolerance
        std::vector<double> ax(3 * n);
        cpu::spmv(sys.s.a.view(), x.data(), ax.data());
        double rr = 0, bb = 0;
        for (Index i = 0; i < n; ++i)
            if (!sys.fixed[i])
                for (int a = 0; a < 3; ++a) {
                    rr += (b[3 * i + a] - ax[3 * i + a]) * (b[3 * i + a] - ax[3 * i + a]);
                    bb += b[3 * i + a] * b[3 * i + a];
                }
        EXPECT_LT(std::sqrt(rr), 2e-8 * std::sqrt(bb)) << k;
        its.push_back(r.iterations);
        std::vector<double> xj(3 * n, 0.0);
        PcgSettings cg;
        cg.relative_tolerance = 1e-8;
        cg.max_iterations = 2000;
        cg.warm_start = false;
        PcgWorkspace<double> wj;
        jacobi.push_back(
            cpu::pcg(sys.s.a.view(), b.data(), xj.data(), cg, wj, sys.fixed.data()).iterations);
    }
    std::printf("multigrid its %d %d %d, jacobi %d %d %d\n", its[0], its[1], its[2], jacobi[0],
                jacobi[1], jacobi[2]);
    EXPECT_LE(its.back(), 40);
    EXPECT_LE(its.back(), 1.5 * its[1]) << its[0] << " " << its[1] << " " << its[2];
    EXPECT_LT(3 * its.back(), jacobi.back()) << jacobi.back();
}

// The nodes' graph of a pattern: a breadth-first search from `from` over the active nodes that
// `inside` accepts; the distances (-1: not reached).
std::vector<Index> distances(const BinBcsrPatternView& p, const std::vector<std::uint8_t>& active,
                             Index from, const std::function<bool(Index)>& inside) {
    std::vector<Index> d(static_cast<std::size_t>(p.num_rows), -1), queue{from};
    d[from] = 0;
    for (std::size_t q = 0; q < queue.size(); ++q) {
        const Index i = queue[q];
        for (Index j = 0; j < p.row_counts[i]; ++j) {
            const Index c = p.columns[p.slot(i, j)];
            if (active[c] && inside(c) && d[c] < 0) {
                d[c] = d[i] + 1;
                queue.push_back(c);
            }
        }
    }
    return d;
}

// Aggregation::Parallel on a pinned box: every active node is in one aggregate (the pinned ones
// in none), every aggregate is connected and reaches all its nodes within 2 edges of one of
// them (its root: the set's nodes are at least 3 edges apart), there are about as many as the
// greedy aggregation makes, and the thread count changes nothing.
TEST(MultigridAggregation, ParallelAggregatesCoverConnectAndDoNotDependOnThreads) {
    System sys(test::make_random_perturbed_box(16, 12, 24, 1.0, 0.8, 1.6, 0.15, 3), 0.01);
    const BinBcsrPatternView p = sys.s.f->pattern.view();
    std::vector<std::uint8_t> active(sys.fixed.size());
    for (std::size_t i = 0; i < active.size(); ++i) active[i] = sys.fixed[i] ? 0 : 1;
    ASSERT_GT(p.num_rows, 2 * kParallelThreshold); // parallel passes
    std::vector<Index> agg, greedy, serial;
    const Index count = cpu::aggregate_nodes(p, active, Aggregation::Parallel, agg);
    const Index greedy_count = cpu::aggregate_nodes(p, active, Aggregation::Greedy, greedy);
    EXPECT_GT(count, greedy_count / 2);
    EXPECT_LT(count, 2 * greedy_count);
    const int threads = set_num_threads(1);
    EXPECT_EQ(cpu::aggregate_nodes(p, active, Aggregation::Parallel, serial), count);
    set_num_threads(threads);
    EXPECT_EQ(serial, agg);
    std::vector<std::vector<Index>> members(static_cast<std::size_t>(count));
    for (Index i = 0; i < p.num_rows; ++i) {
        if (!active[i]) {
            EXPECT_EQ(agg[i], -1) << i;
            continue;
        }
        ASSERT_GE(agg[i], 0) << i;
        ASSERT_LT(agg[i], count) << i;
        members[agg[i]].push_back(i);
    }
    for (Index a = 0; a < count; ++a) {
        ASSERT_FALSE(members[a].empty()) << "aggregate " << a;
        // some member reaches every other one within 2 edges inside the aggregate
        bool rooted = false;
        for (Index root : members[a]) {
            const std::vector<Index> d =
                distances(p, active, root, [&](Index c) { return agg[c] == a; });
            bool all = true;
            for (Index m : members[a]) all = all && d[m] >= 0 && d[m] <= 2;
            if (all) {
                rooted = true;
                break;
            }
        }
        EXPECT_TRUE(rooted) << "aggregate " << a << " of " << members[a].size();
    }
}

// Aggregation::Greedy by its definition, written out plainly (votes counted in a map): (1) in
// index order a node whose active neighbours are all unaggregated roots an aggregate with them;
// (2) every other active node joins the aggregate most of its neighbours are in, the smallest of
// equals, as the first pass left them; (3) the rest root aggregates with their unaggregated
// neighbours. On a pinned box's pattern and on its first coarse level's (rows of tens of
// neighbours: many ties of votes).
std::vector<Index> greedy_by_definition(const BinBcsrPatternView& p,
                                        const std::vector<std::uint8_t>& active, Index& count) {
    const Index n = p.num_rows;
    std::vector<Index> agg(static_cast<std::size_t>(n), -1);
    count = 0;
    auto neighbours = [&](Index i) {
        std::vector<Index> c;
        for (Index j = 0; j < p.row_counts[i]; ++j) c.push_back(p.columns[p.slot(i, j)]);
        return c;
    };
    for (Index i = 0; i < n; ++i) {
        if (!active[i] || agg[i] >= 0) continue;
        bool free = true;
        for (Index c : neighbours(i)) free = free && !(active[c] && agg[c] >= 0);
        if (!free) continue;
        agg[i] = count;
        for (Index c : neighbours(i))
            if (active[c]) agg[c] = count;
        ++count;
    }
    std::vector<Index> joined = agg;
    for (Index i = 0; i < n; ++i) {
        if (!active[i] || agg[i] >= 0) continue;
        std::map<Index, Index> votes;
        for (Index c : neighbours(i))
            if (agg[c] >= 0) ++votes[agg[c]];
        Index best = -1, most = 0;
        for (const auto& [a, v] : votes) // ascending aggregates: the first of the most wins
            if (v > most) best = a, most = v;
        joined[i] = best;
    }
    agg = joined;
    for (Index i = 0; i < n; ++i) {
        if (!active[i] || agg[i] >= 0) continue;
        agg[i] = count;
        for (Index c : neighbours(i))
            if (active[c] && agg[c] < 0) agg[c] = count;
        ++count;
    }
    return agg;
}

TEST(MultigridAggregation, GreedyAggregatesFollowTheirDefinition) {
    System sys(test::make_random_perturbed_box(12, 10, 16, 1.0, 0.8, 1.4, 0.15, 5), 0.05);
    std::vector<std::uint8_t> active(sys.fixed.size());
    for (std::size_t i = 0; i < active.size(); ++i) active[i] = sys.fixed[i] ? 0 : 1;
    const MultigridHierarchy h = cpu::build_multigrid(sys.s.f->pattern, sys.positions.data(),
                                                      sys.fixed.data(), small_coarsest(6));
    ASSERT_FALSE(h.coarse.empty());
    const BinBcsrPatternView coarse = h.coarse[0].pattern.view();
    const std::vector<std::uint8_t> all(static_cast<std::size_t>(coarse.num_rows), 1);
    Index longest = 0;
    for (Index i = 0; i < coarse.num_rows; ++i) longest = std::max(longest, coarse.row_counts[i]);
    EXPECT_GE(longest, 20) << "the coarse rows are long";
    for (const auto& [p, on] :
         {std::pair(sys.s.f->pattern.view(), active), std::pair(coarse, all)}) {
        Index expected_count = 0, count = 0;
        const std::vector<Index> expected = greedy_by_definition(p, on, expected_count);
        std::vector<Index> got;
        count = cpu::aggregate_nodes(p, on, Aggregation::Greedy, got);
        EXPECT_EQ(count, expected_count);
        EXPECT_EQ(got, expected);
    }
}

// CG iterations with the parallel aggregation's hierarchy on the boxes of
// IterationsDoNotGrowWithTheMesh: converged, few and not growing with the mesh either.
TEST(MultigridAggregation, ParallelIterationsDoNotGrowWithTheMesh) {
    std::vector<int> its;
    for (int k : {3, 6, 12}) {
        System sys(test::make_box_mesh(k, k, 2 * k, 0.5, 0.5, 1.0), 1e-3);
        MultigridSettings s;
        s.aggregation = Aggregation::Parallel;
        MultigridHierarchy h =
            cpu::build_multigrid(sys.s.f->pattern, sys.positions.data(), sys.fixed.data(), s);
        cpu::revalue_multigrid(h, sys.s.a.view());
        const Index n = sys.s.rows();
        std::vector<double> b(3 * n, 0.0), x;
        for (Index i = 0; i < n; ++i) b[3 * i + 2] = -1.0;
        const PcgResult r = test::solve_with_multigrid(h, sys.s.a.view(), b, sys.fixed, 2000, x);
        EXPECT_TRUE(r.converged) << k;
        its.push_back(r.iterations);
    }
    std::printf("parallel aggregation: multigrid its %d %d %d\n", its[0], its[1], its[2]);
    EXPECT_LE(its.back(), 40);
    EXPECT_LE(its.back(), 1.5 * its[1]) << its[0] << " " << its[1] << " " << its[2];
}

// A perturbed box's P1 pattern with its vertex positions (3 per node) and its base pinned.
struct PinnedBox {
    TetMesh mesh;
    BinBcsrPattern pattern;
    std::vector<double> positions;
    std::vector<std::uint8_t> fixed;
};
PinnedBox pinned_box(int nx, int ny, int nz, std::uint64_t seed) {
    PinnedBox b;
    b.mesh = test::make_random_perturbed_box(nx, ny, nz, 1.0, 0.8, 1.1, 0.1, seed);
    const Topology topology = build_topology(b.mesh);
    b.pattern = build_bin_bcsr_pattern(topology, b.mesh.cells, make_node_layout(topology, 1));
    for (const Vec3& x : b.mesh.positions) {
        for (int a = 0; a < 3; ++a) b.positions.push_back(x[a]);
        b.fixed.push_back(x[2] < 1e-12 ? 1 : 0);
    }
    return b;
}

// The symbolic arrays of two levels (aggregates, patterns, maps; not the tentative prolongator)
// and of their coarse operators' patterns are equal.
void expect_same_symbolic_level(const MultigridLevel& a, const BlockMatrix& ca,
                                const MultigridLevel& b, const BlockMatrix& cb) {
    EXPECT_EQ(a.num_nodes, b.num_nodes);
    EXPECT_EQ(a.block, b.block);
    EXPECT_EQ(a.coarse_nodes, b.coarse_nodes);
    EXPECT_EQ(a.aggregate, b.aggregate);
    EXPECT_EQ(a.prolongator.offsets, b.prolongator.offsets);
    EXPECT_EQ(a.prolongator.columns, b.prolongator.columns);
    EXPECT_EQ(a.prolongator.row_block, b.prolongator.row_block);
    EXPECT_EQ(a.prolongator.col_block, b.prolongator.col_block);
    EXPECT_EQ(a.smooth_target, b.smooth_target);
    EXPECT_EQ(a.product.offsets, b.product.offsets);
    EXPECT_EQ(a.product.columns, b.product.columns);
    EXPECT_EQ(a.product_offsets, b.product_offsets);
    EXPECT_EQ(a.product_entry, b.product_entry);
    EXPECT_EQ(a.product_p, b.product_p);
    EXPECT_EQ(a.restriction_offsets, b.restriction_offsets);
    EXPECT_EQ(a.restriction_blocks, b.restriction_blocks);
    EXPECT_EQ(a.restriction_rows, b.restriction_rows);
    EXPECT_EQ(a.galerkin_offsets, b.galerkin_offsets);
    EXPECT_EQ(a.galerkin_p, b.galerkin_p);
    EXPECT_EQ(a.galerkin_ap, b.galerkin_ap);
    EXPECT_EQ(a.galerkin_mirror, b.galerkin_mirror);
    EXPECT_EQ(ca.block, cb.block);
    EXPECT_EQ(ca.pattern.bin_offsets, cb.pattern.bin_offsets);
    EXPECT_EQ(ca.pattern.row_counts, cb.pattern.row_counts);
    EXPECT_EQ(ca.pattern.columns, cb.pattern.columns);
}

// The symbolic phase runs its rows in parallel chunks (and the parallel aggregation's passes in
// parallel): built with one thread and with all of them, on a box large enough for several
// chunks on every pass (67K nodes, 2K+ coarse nodes), the hierarchies are the same, map by map.
TEST(MultigridAggregation, SymbolicPhaseDoesNotDependOnTheThreadCount) {
    const PinnedBox box = pinned_box(40, 34, 46, 5);
    const BinBcsrPattern& pattern = box.pattern;
    const std::vector<double>& positions = box.positions;
    const std::vector<std::uint8_t>& fixed = box.fixed;
    for (const Aggregation aggregation : {Aggregation::Greedy, Aggregation::Parallel}) {
        SCOPED_TRACE(aggregation == Aggregation::Greedy ? "greedy" : "parallel");
        MultigridSettings settings;
        settings.aggregation = aggregation;
        const MultigridHierarchy all =
            cpu::build_multigrid(pattern, positions.data(), fixed.data(), settings);
        const int threads = set_num_threads(1);
        const MultigridHierarchy one =
            cpu::build_multigrid(pattern, positions.data(), fixed.data(), settings);
        set_num_threads(threads);
        ASSERT_EQ(all.levels.size(), one.levels.size());
        ASSERT_GE(all.levels.size(), 2u);
        EXPECT_GT(all.levels[0].coarse_nodes, kParallelThreshold);
        for (std::size_t l = 0; l < all.levels.size(); ++l) {
            SCOPED_TRACE("level " + std::to_string(l));
            EXPECT_EQ(all.levels[l].tentative, one.levels[l].tentative);
            expect_same_symbolic_level(all.levels[l], all.coarse[l], one.levels[l], one.coarse[l]);
        }
        // The maps relate what they say (the small meshes' brute-force tests build one chunk):
        // every A P pair of block (i, J) is an entry of row i with a P block of column J, and
        // every Galerkin pair of coarse entry (I, J) a P block (i, I) with an A P block (i, J).
        const MultigridLevel& level = all.levels[0];
        const BinBcsrPatternView v = pattern.view();
        const Index slots = v.bin_offsets[v.num_bins];
        auto row_of = [&](const BinBcsrPatternView& pv, Index e) {
            const Index s = pv.bin_offsets[pv.num_bins];
            if (e >= s) return e - s;
            const Index bin = static_cast<Index>(
                std::upper_bound(pv.bin_offsets, pv.bin_offsets + pv.num_bins + 1, e) -
                pv.bin_offsets - 1);
            return bin * kBinRows + (e - pv.bin_offsets[bin]) % kBinRows;
        };
        auto p_row = [&](Index k) {
            return static_cast<Index>(std::upper_bound(level.prolongator.offsets.begin(),
                                                       level.prolongator.offsets.end(), k) -
                                      level.prolongator.offsets.begin() - 1);
        };
        ASSERT_EQ(level.product_offsets.size(), level.product.columns.size() + 1);
        for (Index i = 0; i < level.num_nodes; ++i)
            for (Index q = level.product.offsets[i]; q < level.product.offsets[i + 1]; ++q)
                for (Index t = level.product_offsets[q]; t < level.product_offsets[q + 1]; ++t) {
                    ASSERT_EQ(row_of(v, level.product_entry[t]), i) << "A P block " << q;
                    const Index e = level.product_entry[t];
                    const Index col = e >= slots ? i : v.columns[e];
                    const Index k = level.product_p[t];
                    ASSERT_EQ(p_row(k), col) << "A P block " << q;
                    ASSERT_EQ(level.prolongator.columns[k], level.product.columns[q]);
                }
        const BinBcsrPatternView cv = all.coarse[0].pattern.view();
        const Index cslots = cv.bin_offsets[cv.num_bins];
        Index pairs = 0;
        for (Index e = 0; e + 1 < static_cast<Index>(level.galerkin_offsets.size()); ++e) {
            const Index I = row_of(cv, e), J = e >= cslots ? I : cv.columns[e];
            for (Index t = level.galerkin_offsets[e]; t < level.galerkin_offsets[e + 1]; ++t) {
                const Index k = level.galerkin_p[t], q = level.galerkin_ap[t];
                ASSERT_EQ(level.prolongator.columns[k], I) << "coarse entry " << e;
                ASSERT_EQ(level.product.columns[q], J) << "coarse entry " << e;
                ASSERT_TRUE(level.product.offsets[p_row(k)] <= q &&
                            q < level.product.offsets[p_row(k) + 1])
                    << "coarse entry " << e;
                ++pairs;
            }
        }
        EXPECT_GT(pairs, 0);
    }
}

// cpu::build_aggregated_level (the step of build_multigrid's loop that the CUDA build runs alone
// for its small levels) on each level's operator pattern, with the pins, block and dofs the CUDA
// build passes, gives that level of build_multigrid: aggregates, patterns, block sizes and maps
// equal, no tentative prolongator (it fails when part of a level is left to build_multigrid's
// loop); on the last coarse operator, where the hierarchy ended for want of coarsening
// (coarsest_dofs 1, levels unlimited), it declines.
TEST(MultigridAggregation, AggregatedLevelIsTheHierarchysLevel) {
    const PinnedBox box = pinned_box(9, 8, 11, 7);
    MultigridSettings settings;
    settings.coarsest_dofs = 1;
    settings.max_levels = 64;
    const MultigridHierarchy h =
        cpu::build_multigrid(box.pattern, box.positions.data(), box.fixed.data(), settings);
    ASSERT_GE(h.levels.size(), 2u);
    std::vector<std::uint8_t> active(box.fixed.size());
    for (std::size_t i = 0; i < box.fixed.size(); ++i) active[i] = box.fixed[i] ? 0 : 1;
    Index level_dofs = 3 * static_cast<Index>(std::count(active.begin(), active.end(), 1));
    int block = 3;
    for (std::size_t l = 0; l <= h.levels.size(); ++l) {
        SCOPED_TRACE("level " + std::to_string(l));
        const BinBcsrPattern& op = l == 0 ? box.pattern : h.coarse[l - 1].pattern;
        MultigridLevel level;
        BlockMatrix coarse;
        const bool built = cpu::build_aggregated_level(op.view(), active, block, level_dofs,
                                                       settings, level, coarse);
        if (l == h.levels.size()) { // (the hierarchy ended here: no useful coarsening)
            EXPECT_FALSE(built);
            break;
        }
        ASSERT_TRUE(built);
        EXPECT_TRUE(level.tentative.empty());
        expect_same_symbolic_level(level, coarse, h.levels[l], h.coarse[l]);
        block = settings.modes;
        active.assign(static_cast<std::size_t>(coarse.pattern.num_rows), 1);
        level_dofs = coarse.pattern.num_rows * settings.modes;
    }
}

TEST(Multigrid, SmallSystemsAreSolvedDirectly) {
    System sys(test::make_box_mesh(2, 2, 2, 1, 1, 1), 1e-3);
    MultigridHierarchy h = cpu::build_multigrid(sys.s.f->pattern, sys.positions.data(),
                                                sys.fixed.data(), MultigridSettings{});
    EXPECT_EQ(h.num_levels(), 1);
    cpu::revalue_multigrid(h, sys.s.a.view());
    const Index n = sys.s.rows();
    std::vector<double> b = test::random_vector(3 * n, 3), x(3 * n, 0.0);
    PcgSettings cg;
    cg.relative_tolerance = 1e-10;
    PcgWorkspace<double> ws;
    const PcgResult r =
        cpu::pcg_multigrid(sys.s.a.view(), h, b.data(), x.data(), cg, ws, sys.fixed.data());
    EXPECT_TRUE(r.converged);
    EXPECT_LE(r.iterations, 1);
}

TEST(Multigrid, InvalidSettingsAreUsageErrors) {
    System sys(test::make_box_mesh(2, 2, 2, 1, 1, 1), 1e-3);
    MultigridSettings s;
    s.modes = 4;
    try {
        (void)cpu::build_multigrid(sys.s.f->pattern, sys.positions.data(), nullptr, s);
        FAIL() << "expected a usage error";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::Usage);
    }
}

} // namespace
} // namespace edn

namespace edn {
namespace {

// p-multigrid: the first transfer is the P1 interpolation of the two-level coarse space, its
// coarse operator the exact Galerkin P^T A P, and CG iterations stay flat as the mesh is refined.
struct HighOrderSystem {
    test::LinearSystem s;
    std::vector<std::uint8_t> fixed;
    CoarseSpace space;
    GivenTransfer transfer;
    HighOrderSystem(const TetMesh& mesh, int order, double shift)
        : s(mesh, order, shift), fixed(s.bottom_nodes()),
          space(make_coarse_space(s.f->mesh, s.f->topology, s.f->layout)),
          transfer(p1_transfer(space, s.f->mesh, fixed.data())) {}
};

TEST(PMultigrid, FirstCoarseOperatorIsTheGalerkinProductOfTheP1Interpolation) {
    HighOrderSystem sys(test::make_random_perturbed_box(3, 3, 2, 1.0, 0.8, 0.7, 0.15, 5), 2, 0.02);
    MultigridSettings settings;
    settings.coarsest_dofs = 20;
    MultigridHierarchy h =
        cpu::build_multigrid(sys.s.f->pattern, nullptr, sys.fixed.data(), settings, &sys.transfer);
    ASSERT_GE(h.num_levels(), 3);
    cpu::revalue_multigrid(h, sys.s.a.view());
    const Dense a = dense_operator(sys.s.f->pattern, 3, sys.s.a.values, sys.s.a.diag);
    // P from the coarse space, pinned rows and pinned vertex columns removed
    Dense p = zeros(a.size(), 3 * static_cast<std::size_t>(sys.space.num_vertices));
    for (Index i = 0; i < sys.space.num_nodes; ++i)
        for (int k = 0; k < 3; ++k) {
            const Index v = sys.space.pro_vertex[3 * i + k];
            if (v < 0 || sys.fixed[i] || sys.fixed[v]) continue;
            for (int d = 0; d < 3; ++d) p[3 * i + d][3 * v + d] = sys.space.pro_weight[3 * i + k];
        }
    const Dense ac = multiply(p, multiply(a, p), true);
    const BlockMatrix& c = h.coarse[0];
    const Dense got = dense_operator(c.pattern, 3, c.values, c.diag);
    double err = 0;
    for (std::size_t i = 0; i < ac.size(); ++i)
        for (std::size_t j = 0; j < ac.size(); ++j)
            err = std::max(err, std::abs(ac[i][j] - got[i][j]));
    EXPECT_LT(err, 1e-12 * max_abs(ac));
    // without pins the exact coarse pattern is the P1 pattern of the mesh (pinned vertices: empty)
    const std::vector<std::uint8_t> none(sys.fixed.size(), 0);
    const GivenTransfer free_transfer = p1_transfer(sys.space, sys.s.f->mesh, none.data());
    const MultigridHierarchy unpinned =
        cpu::build_multigrid(sys.s.f->pattern, nullptr, none.data(), settings, &free_transfer);
    test::AssemblyFixture p1(sys.s.f->mesh, 1);
    EXPECT_EQ(unpinned.coarse[0].pattern.row_counts, p1.pattern.row_counts);
    EXPECT_EQ(unpinned.coarse[0].pattern.columns, p1.pattern.columns);
}

// The p-multigrid cycle is symmetric positive definite at p = 2 and 3 with either degree on the
// order-p level. Its post-smoother starts from r - (A P) x_c instead of b - A x (cycle in
// cpu/multigrid.cpp): a residual that missed the correction, or took it with a wrong A P,
// leaves the post-smoother unmatched to the pre-smoother and the cycle unsymmetric.
TEST(PMultigrid, CycleIsSymmetricPositiveDefiniteWithTheProductResidual) {
    for (int order : {2, 3}) {
        HighOrderSystem sys(test::make_random_perturbed_box(3, 3, 2, 1.0, 0.8, 0.7, 0.15, 5),
                            order, 0.02);
        for (int given_degree : {1, 2}) {
            MultigridSettings settings;
            settings.coarsest_dofs = 20;
            settings.given_smoother_degree = given_degree;
            MultigridHierarchy h = cpu::build_multigrid(sys.s.f->pattern, nullptr,
                                                        sys.fixed.data(), settings, &sys.transfer);
            ASSERT_GE(h.num_levels(), 3);
            ASSERT_TRUE(h.levels[0].fixed_prolongator);
            cpu::revalue_multigrid(h, sys.s.a.view());
            SCOPED_TRACE("p" + std::to_string(order) + " degree " + std::to_string(given_degree));
            test::expect_cycle_symmetric_positive(h, sys.s.a.view(), sys.fixed);
        }
    }
}

// lambda_max takes power_iterations Lanczos steps on the fine level and, at p = 1,
// coarse_power_iterations on the aggregated levels: fewer steps from the same start give a Ritz
// value no larger (Cauchy interlacing), and a different one. p-multigrid takes power_iterations
// on every level.
TEST(PMultigrid, AggregatedLevelsOfP1TakeTheirOwnLanczosSteps) {
    MultigridSettings many;
    many.coarsest_dofs = 20;
    many.coarse_power_iterations = many.power_iterations;
    MultigridSettings few = many;
    few.coarse_power_iterations = 3;
    const TetMesh mesh = test::make_random_perturbed_box(6, 5, 4, 1.0, 0.8, 0.7, 0.15, 5);
    for (const int order : {1, 2}) {
        SCOPED_TRACE("p = " + std::to_string(order));
        test::LinearSystem s(mesh, order, 0.02);
        const std::vector<std::uint8_t> fixed = s.bottom_nodes();
        std::vector<double> positions;
        for (const Vec3& x : mesh.positions)
            for (int k = 0; k < 3; ++k) positions.push_back(x[k]);
        auto build = [&](const MultigridSettings& settings) {
            MultigridHierarchy h;
            if (order == 1) {
                h = cpu::build_multigrid(s.f->pattern, positions.data(), fixed.data(), settings);
            } else {
                const CoarseSpace space = make_coarse_space(s.f->mesh, s.f->topology, s.f->layout);
                const GivenTransfer t = p1_transfer(space, s.f->mesh, fixed.data());
                h = cpu::build_multigrid(s.f->pattern, nullptr, fixed.data(), settings, &t);
            }
            cpu::revalue_multigrid(h, s.a.view());
            return h;
        };
        const MultigridHierarchy a = build(many), b = build(few);
        ASSERT_GE(a.levels.size(), 2u); // a level below the fine one
        ASSERT_EQ(a.levels.size(), b.levels.size());
        EXPECT_EQ(a.levels[0].lambda_max, b.levels[0].lambda_max); // the fine level
        for (std::size_t l = 1; l < a.levels.size(); ++l) {
            SCOPED_TRACE("level " + std::to_string(l));
            if (order > 1) {
                EXPECT_EQ(a.levels[l].lambda_max, b.levels[l].lambda_max);
                continue;
            }
            EXPECT_LE(b.levels[l].lambda_max, a.levels[l].lambda_max * (1 + 1e-12));
            EXPECT_NE(b.levels[l].lambda_max, a.levels[l].lambda_max);
            EXPECT_GT(b.levels[l].lambda_max, 0.5 * a.levels[l].lambda_max);
        }
        for (const int steps : {0, kMaxLanczosSteps + 1}) {
            MultigridSettings bad = many;
            bad.coarse_power_iterations = steps;
            EXPECT_THROW(build(bad), Error);
        }
    }
}

TEST(PMultigrid, IterationsDoNotGrowWithTheMesh) {
    std::vector<int> its;
    for (int k : {2, 4, 8}) {
        HighOrderSystem sys(test::make_box_mesh(k, k, 2 * k, 0.5, 0.5, 1.0), 2, 1e-3);
        MultigridHierarchy h = cpu::build_multigrid(sys.s.f->pattern, nullptr, sys.fixed.data(),
                                                    MultigridSettings{}, &sys.transfer);
        cpu::revalue_multigrid(h, sys.s.a.view());
        const Index n = sys.s.rows();
        std::vector<double> b(3 * n, 0.0), x(3 * n, 0.0);
        for (Index i = 0; i < n; ++i) b[3 * i + 2] = -1.0;
        PcgSettings cg;
        cg.relative_tolerance = 1e-8;
        cg.max_iterations = 500;
        cg.warm_start = false;
        PcgWorkspace<double> ws;
        const PcgResult r =
            cpu::pcg_multigrid(sys.s.a.view(), h, b.data(), x.data(), cg, ws, sys.fixed.data());
        EXPECT_TRUE(r.converged) << k;
        its.push_back(r.iterations);
    }
    std::printf("p-multigrid its %d %d %d\n", its[0], its[1], its[2]);
    EXPECT_LE(its.back(), 40);
    EXPECT_LE(its.back(), 1.5 * its[1]);
}

} // namespace
} // namespace edn

namespace edn {
namespace {

// The CPU backend with the multigrid preconditioner: the same trajectory as block Jacobi (solves
// to 1e-9) with far fewer CG iterations, at p = 1 and p = 2, and a rebuilt hierarchy when the
// pins change between frames.
TEST(MultigridSimulation, MatchesBlockJacobiWithFewerIterations) {
    const TetMesh mesh = test::make_box_mesh(3, 3, 9, 0.3, 0.3, 1.0);
    for (int order : {1, 2}) {
        SimulationSettings s = test::tight_solve_settings(order, 4000);
        s.max_newton_iterations = 3;
        s.preconditioner = Preconditioner::BlockJacobi;
        Simulation bj(mesh, s);
        s.preconditioner = Preconditioner::Multigrid;
        Simulation mg(mesh, s);
        const std::vector<double> rest = bj.positions();
        bj.pin_below(1e-9);
        mg.pin_below(1e-9);
        int cg_bj = 0, cg_mg = 0;
        for (int frame = 0; frame < 6; ++frame) {
            if (frame == 3) // pin the top too: the hierarchy follows the pins
                for (Index i = 0; i < bj.num_nodes(); ++i)
                    if (rest[3 * i + 2] > 1.0 - 1e-9)
                        bj.set_pinned(i, true), mg.set_pinned(i, true);
            const StepResult a = bj.step(), b = mg.step();
            cg_bj += a.cg_iterations;
            cg_mg += b.cg_iterations;
            EXPECT_EQ(b.pcg_breakdowns, 0);
            EXPECT_EQ(b.pcg_unconverged, 0);
        }
        const std::vector<double> xa = bj.positions(), xb = mg.positions();
        const double diff = test::max_abs_diff(xa, xb);
        const double motion = test::max_abs_diff(xa, rest);
        EXPECT_GT(motion, 1e-4) << order;
        EXPECT_LT(diff, 1e-6 * motion) << order;
        EXPECT_LT(2 * cg_mg, cg_bj) << order;
    }
}

// The lag rule (solver/multigrid.hpp): once per step, again after a solve that needed more than
// twice the first solve's iterations per decade (+ 2) or did not converge, at once after a lagged
// breakdown.
TEST(MultigridRefresh, RevaluesOncePerStepUnlessTheLaggedSolvesDegrade) {
    auto solved = [](int iterations, double decades, bool converged = true,
                     bool breakdown = false) {
        PcgResult r;
        r.iterations = iterations;
        r.initial_residual = 1;
        r.final_residual = std::pow(10.0, -decades);
        r.converged = converged;
        r.breakdown = breakdown;
        return r;
    };
    MultigridRefresh refresh;
    EXPECT_TRUE(refresh.revalue_at_assembly(false));  // the first assembly
    refresh.after_solve(solved(5, 1));                // 5 per decade
    EXPECT_FALSE(refresh.revalue_at_assembly(false)); // the same step: lagged
    refresh.after_solve(solved(36, 3));               // 12 per decade <= 2 * 5 + 2
    EXPECT_FALSE(refresh.revalue_at_assembly(false));
    refresh.after_solve(solved(39, 3)); // 13 per decade: due
    EXPECT_TRUE(refresh.revalue_at_assembly(false));
    refresh.after_solve(solved(12, 2));
    EXPECT_FALSE(refresh.revalue_at_assembly(false));
    refresh.after_solve(solved(12, 2, false)); // unconverged with a lagged hierarchy: due
    EXPECT_TRUE(refresh.revalue_at_assembly(false));
    refresh.new_step();
    EXPECT_TRUE(refresh.revalue_at_assembly(false));            // a new step
    EXPECT_FALSE(refresh.retry_now(solved(3, 0, false, true))); // current: no retry
    EXPECT_FALSE(refresh.revalue_at_assembly(false));
    EXPECT_TRUE(refresh.retry_now(solved(3, 0, false, true))); // lagged breakdown: retry
    EXPECT_FALSE(refresh.retry_now(solved(3, 1)));
    refresh.revalued_now();
    EXPECT_FALSE(refresh.retry_now(solved(3, 0, false, true)));
    EXPECT_TRUE(refresh.revalue_at_assembly(true)); // every assembly
    EXPECT_TRUE(refresh.revalue_at_assembly(true));
    EXPECT_DOUBLE_EQ(MultigridRefresh::iterations_per_decade(solved(2, 0.01)), 8.0); // >= 1/4

    // Lagged across steps (multigrid_lag 3): due every third step, or sooner when a solve slows.
    MultigridRefresh lag;
    EXPECT_TRUE(lag.revalue_at_assembly(false));
    lag.after_solve(solved(5, 1));
    for (int step = 1; step <= 2; ++step) {
        lag.new_step(3);
        EXPECT_FALSE(lag.revalue_at_assembly(false)) << step;
        lag.after_solve(solved(5, 1));
    }
    lag.new_step(3);
    EXPECT_TRUE(lag.revalue_at_assembly(false)); // the third step after the re-value
    lag.after_solve(solved(5, 1));
    lag.new_step(3);
    EXPECT_FALSE(lag.revalue_at_assembly(false));
    lag.after_solve(solved(13, 1)); // 13 > 2 * 5 + 2 per decade: due at the next assembly
    lag.new_step(3);
    EXPECT_TRUE(lag.revalue_at_assembly(false));
}

// Re-valuing once per step or at every Newton iteration changes the preconditioner only: the
// same trajectory to the tolerance, every solve converged, at most a few more CG iterations.
TEST(MultigridSimulation, LaggedHierarchyKeepsTheTrajectory) {
    const TetMesh mesh = test::make_box_mesh(3, 3, 9, 0.3, 0.3, 1.0);
    for (int order : {1, 2}) {
        SimulationSettings s;
        s.order = order;
        s.material = Material::NeoHookean;
        s.newton_tolerance = 1e-8;
        s.cg_forcing = false;
        s.pcg.relative_tolerance = 1e-9;
        s.preconditioner = Preconditioner::Multigrid;
        s.multigrid_every_iteration = true;
        Simulation every(mesh, s);
        s.multigrid_every_iteration = false;
        Simulation lagged(mesh, s);
        const std::vector<double> rest = every.positions();
        for (Index i = 0; i < every.num_nodes(); ++i)
            if (rest[3 * i + 2] < 1e-9) every.set_pinned(i, true), lagged.set_pinned(i, true);
        int cg_every = 0, cg_lagged = 0;
        for (int frame = 0; frame < 5; ++frame) {
            const StepResult a = every.step(), b = lagged.step();
            cg_every += a.cg_iterations;
            cg_lagged += b.cg_iterations;
            EXPECT_TRUE(b.converged) << order << " " << frame;
            EXPECT_EQ(b.pcg_breakdowns, 0);
            EXPECT_EQ(b.pcg_unconverged, 0);
            EXPECT_GT(b.newton_iterations, 1); // the lag is exercised
        }
        const std::vector<double> xa = every.positions(), xb = lagged.positions();
        const double diff = test::max_abs_diff(xa, xb);
        const double motion = test::max_abs_diff(xa, rest);
        EXPECT_GT(motion, 1e-4) << order;
        EXPECT_LT(diff, 1e-6 * motion) << order;
        EXPECT_LE(cg_lagged, 2 * cg_every) << order;
    }
}

} // namespace
} // namespace edn

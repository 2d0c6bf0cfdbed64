// The tentative prolongators re-computed at current positions (cpu::retentative_multigrid): at
// the build's positions the build's T bit for bit; after a rigid rotation every level spans the
// rotated rigid-body modes; a hierarchy re-valued at deformed positions equals one freshly built
// there (dropped columns included); the cycle stays symmetric positive definite; and on a rotated
// body the current modes solve in fewer iterations than the rest ones.
#include "sim/simulation.hpp"
#include "solver/multigrid.hpp"
#include "solver/two_level.hpp"
#include "support/compare.hpp"
#include "support/linear_system.hpp"
#include "support/mesh_fixtures.hpp"
#include "support/multigrid_checks.hpp"
#include "support/random.hpp"

#include <cmath>
#include <cstdio>
#include <gtest/gtest.h>

namespace edn {
namespace {

// A proper rotation (axis (1, 2, 3), 1.1 rad) and a shift: x -> R x + t.
struct Motion {
    double r[3][3];
    double t[3] = {0.3, -0.2, 0.5};
    explicit Motion(double angle = 1.1) {
        double k[3] = {1, 2, 3};
        const double len = std::sqrt(14.0);
        for (double& v : k) v /= len;
        const double c = std::cos(angle), s = std::sin(angle);
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) r[i][j] = (i == j ? c : 0) + (1 - c) * k[i] * k[j];
        r[0][1] -= s * k[2], r[0][2] += s * k[1];
        r[1][0] += s * k[2], r[1][2] -= s * k[0];
        r[2][0] -= s * k[1], r[2][1] += s * k[0];
    }
    std::vector<double> apply(const std::vector<double>& x) const {
        std::vector<double> y(x.size());
        for (std::size_t i = 0; i < x.size(); i += 3)
            for (int a = 0; a < 3; ++a)
                y[i + a] = r[a][0] * x[i] + r[a][1] * x[i + 1] + r[a][2] * x[i + 2] + t[a];
        return y;
    }
    TetMesh apply(const TetMesh& mesh) const {
        TetMesh out = mesh;
        for (Vec3& p : out.positions) {
            const std::vector<double> y = apply(std::vector<double>{p[0], p[1], p[2]});
            for (int a = 0; a < 3; ++a) p[a] = y[a];
        }
        return out;
    }
};

std::vector<double> flat(const TetMesh& mesh, std::size_t nodes) {
    std::vector<double> x;
    for (std::size_t v = 0; v < nodes; ++v)
        for (int a = 0; a < 3; ++a) x.push_back(mesh.positions[v][a]);
    return x;
}

// A p = 1 or p = 2 system with pinned foot, the P1 transfer at p = 2.
struct System {
    test::LinearSystem s;
    std::vector<std::uint8_t> fixed;
    std::optional<GivenTransfer> transfer;
    System(const TetMesh& mesh, int order, double shift)
        : s(mesh, order, shift), fixed(s.bottom_nodes()) {
        if (order > 1) {
            const CoarseSpace space = make_coarse_space(s.f->mesh, s.f->topology, s.f->layout);
            transfer = p1_transfer(space, s.f->mesh, fixed.data());
        }
    }
    // Positions of the first aggregated level's nodes (the vertices) of `mesh`.
    std::vector<double> positions(const TetMesh& mesh) const {
        return flat(mesh, mesh.positions.size());
    }
    MultigridHierarchy build(const std::vector<double>& x, int modes) const {
        MultigridSettings settings;
        settings.modes = modes;
        settings.coarsest_dofs = 20; // three or more levels on these meshes
        if (!transfer) return cpu::build_multigrid(s.f->pattern, x.data(), fixed.data(), settings);
        GivenTransfer t = *transfer;
        t.coarse_positions = x;
        return cpu::build_multigrid(s.f->pattern, nullptr, fixed.data(), settings, &t);
    }
};

TetMesh test_mesh() {
    return test::make_random_perturbed_box(6, 5, 5, 1.0, 0.8, 0.7, 0.15, 7);
}

class MultigridCurrentModes : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(MultigridCurrentModes, AtTheBuildPositionsTIsTheBuildsBitForBit) {
    const auto [order, modes] = GetParam();
    const TetMesh mesh = test_mesh();
    System sys(mesh, order, 0.02);
    const std::vector<double> x = sys.positions(mesh);
    MultigridHierarchy h = sys.build(x, modes);
    ASSERT_GE(h.levels.size(), 2u + (order > 1));
    std::vector<std::vector<double>> built;
    for (const MultigridLevel& level : h.levels) built.push_back(level.tentative);
    // elsewhere first, then back: every level is recomputed, not left alone
    cpu::retentative_multigrid(h, Motion().apply(x).data());
    if (modes == 6) {
        EXPECT_NE(h.levels.back().tentative, built.back());
    }
    cpu::retentative_multigrid(h, x.data());
    for (std::size_t l = 0; l < h.levels.size(); ++l)
        EXPECT_EQ(h.levels[l].tentative, built[l]) << "level " << l;
}

// Per level: the near-null vectors M (rows: this level's dofs, 6 columns) lie in T's range
// (T T^T M = M on the aggregated rows); T^T M are the next level's. Returns the worst relative
// error over the levels from `first`.
double worst_span_error(const MultigridHierarchy& h, std::size_t first, std::vector<double> m) {
    const int modes = h.settings.modes, cols = 6;
    double worst = 0;
    for (std::size_t l = first; l < h.levels.size(); ++l) {
        const MultigridLevel& level = h.levels[l];
        const int b = level.block;
        const std::size_t tb = static_cast<std::size_t>(b) * modes;
        std::vector<double> c(static_cast<std::size_t>(level.coarse_nodes) * modes * cols, 0.0);
        for (Index i = 0; i < level.num_nodes; ++i) {
            const Index agg = level.aggregate[i];
            if (agg < 0) continue;
            const double* t = level.tentative.data() + i * tb;
            for (int k = 0; k < modes; ++k)
                for (int j = 0; j < cols; ++j)
                    for (int r = 0; r < b; ++r)
                        c[(agg * modes + k) * cols + j] +=
                            t[r * modes + k] * m[(i * b + r) * cols + j];
        }
        double err = 0, scale = 0;
        for (Index i = 0; i < level.num_nodes; ++i) {
            const Index agg = level.aggregate[i];
            if (agg < 0) continue;
            const double* t = level.tentative.data() + i * tb;
            for (int r = 0; r < b; ++r)
                for (int j = 0; j < cols; ++j) {
                    double s = 0;
                    for (int k = 0; k < modes; ++k)
                        s += t[r * modes + k] * c[(agg * modes + k) * cols + j];
                    const double want = m[(i * b + r) * cols + j];
                    err = std::max(err, std::abs(s - want));
                    scale = std::max(scale, std::abs(want));
                }
        }
        worst = std::max(worst, err / scale);
        m.swap(c);
    }
    return worst;
}

TEST_P(MultigridCurrentModes, AfterARotationEveryLevelSpansTheRotatedRigidModes) {
    const auto [order, modes] = GetParam();
    if (modes != 6) GTEST_SKIP() << "translations do not rotate";
    const TetMesh mesh = test_mesh();
    System sys(mesh, order, 0.02);
    MultigridHierarchy h = sys.build(sys.positions(mesh), modes);
    const std::vector<double> y = Motion().apply(sys.positions(mesh));
    // the six rigid modes of the rotated body (about another center than the build's)
    const std::size_t nodes = y.size() / 3;
    std::vector<double> m(nodes * 18);
    const double center[3] = {0.1, 0.7, -0.3};
    for (std::size_t i = 0; i < nodes; ++i)
        rigid_body_modes(y.data() + 3 * i, center, 6, m.data() + 18 * i);
    const std::size_t first = order > 1 ? 1 : 0;
    // the rest T does not span them (so the check below can fail) ...
    EXPECT_GT(worst_span_error(h, first, m), 1e-2);
    // ... the current one does, on every level
    cpu::retentative_multigrid(h, y.data());
    EXPECT_LT(worst_span_error(h, first, m), 1e-12);
}

// Positions of a deformed body: rotated, jittered, and (collinear) squeezed onto a line, where
// the rotation about the line is dependent in every aggregate and is dropped.
std::vector<std::vector<double>> deformed_positions(const std::vector<double>& x) {
    std::vector<double> jittered = Motion().apply(x), line(x.size());
    const std::vector<double> noise = test::random_vector(x.size(), 17, -0.05, 0.05);
    for (std::size_t k = 0; k < x.size(); ++k) jittered[k] += noise[k];
    for (std::size_t i = 0; i < x.size(); i += 3)
        line[i] = x[i] + 2 * x[i + 1] + 3 * x[i + 2], line[i + 1] = line[i + 2] = 0;
    return {jittered, line};
}

TEST_P(MultigridCurrentModes, ReValuedAtDeformedPositionsEqualsAFreshBuild) {
    const auto [order, modes] = GetParam();
    const TetMesh mesh = test_mesh();
    System sys(mesh, order, 0.02);
    System rotated(Motion().apply(mesh), order, 0.02); // the deformed body's matrix
    BinBcsrMatrix<double> a = rotated.s.a;
    a.pattern = &sys.s.f->pattern; // the same topology: the same pattern
    MultigridHierarchy h = sys.build(sys.positions(mesh), modes);
    cpu::revalue_multigrid(h, sys.s.a.view());
    for (const std::vector<double>& y : deformed_positions(sys.positions(mesh))) {
        cpu::retentative_multigrid(h, y.data());
        cpu::revalue_multigrid(h, a.view());
        MultigridHierarchy fresh = sys.build(y, modes);
        cpu::revalue_multigrid(fresh, a.view());
        ASSERT_EQ(h.coarse.size(), fresh.coarse.size());
        for (std::size_t l = 0; l < h.coarse.size(); ++l) {
            EXPECT_EQ(h.levels[l].tentative, fresh.levels[l].tentative) << l;
            EXPECT_EQ(h.levels[l].prolongator.values, fresh.levels[l].prolongator.values) << l;
            EXPECT_EQ(h.coarse[l].values, fresh.coarse[l].values) << l;
            EXPECT_EQ(h.coarse[l].diag, fresh.coarse[l].diag) << l;
        }
        EXPECT_EQ(h.coarsest_factor, fresh.coarsest_factor);
        EXPECT_EQ(h.coarsest_inert, fresh.coarsest_inert);
    }
    if (modes == 6) { // on the line, a column is dropped on the first aggregated level
        const MultigridLevel& level = h.levels[order > 1 ? 1 : 0];
        double column = 0;
        for (Index i = 0; i < level.num_nodes; ++i)
            for (int r = 0; r < level.block; ++r)
                column += std::abs(level.tentative[(i * level.block + r) * modes + 3]);
        EXPECT_EQ(column, 0.0);
    }
}

TEST_P(MultigridCurrentModes, CycleAtDeformedPositionsIsSymmetricPositiveDefinite) {
    const auto [order, modes] = GetParam();
    const TetMesh mesh = test_mesh();
    System sys(mesh, order, 0.01);
    System rotated(Motion().apply(mesh), order, 0.01);
    BinBcsrMatrix<double> a = rotated.s.a;
    a.pattern = &sys.s.f->pattern;
    MultigridHierarchy h = sys.build(sys.positions(mesh), modes);
    for (const std::vector<double>& y : deformed_positions(sys.positions(mesh))) {
        cpu::retentative_multigrid(h, y.data());
        cpu::revalue_multigrid(h, a.view());
        test::expect_cycle_symmetric_positive(h, a.view(), sys.fixed);
    }
}

INSTANTIATE_TEST_SUITE_P(OrdersAndModes, MultigridCurrentModes,
                         ::testing::Combine(::testing::Values(1, 2), ::testing::Values(3, 6)),
                         [](const auto& info) {
                             return std::string(std::get<0>(info.param) == 1 ? "P1" : "P2") +
                                    (std::get<1>(info.param) == 6 ? "Rigid" : "Translations");
                         });

// A body turned a quarter turn (its stiffness rotated with it, the same pins): the rest modes
// no longer span its rotations, the current ones do, and CG needs fewer iterations with them.
TEST(MultigridCurrentModes, RotatedBodySolvesInFewerIterationsWithCurrentModes) {
    const TetMesh mesh = test::make_box_mesh(6, 6, 12, 0.5, 0.5, 1.0);
    System sys(mesh, 1, 1e-4);
    const Motion turn(std::acos(-1.0) / 2);
    System rotated(turn.apply(mesh), 1, 1e-4);
    BinBcsrMatrix<double> a = rotated.s.a;
    a.pattern = &sys.s.f->pattern;
    const Index n = sys.s.rows();
    std::vector<double> b(3 * n, 0.0);
    for (Index i = 0; i < n; ++i) b[3 * i + 2] = -1.0;
    auto iterations = [&](bool current) {
        MultigridSettings settings;
        MultigridHierarchy h = cpu::build_multigrid(sys.s.f->pattern, sys.positions(mesh).data(),
                                                    sys.fixed.data(), settings);
        if (current) cpu::retentative_multigrid(h, turn.apply(sys.positions(mesh)).data());
        cpu::revalue_multigrid(h, a.view());
        std::vector<double> x;
        const PcgResult r = test::solve_with_multigrid(h, a.view(), b, sys.fixed, 500, x);
        EXPECT_TRUE(r.converged);
        return r.iterations;
    };
    const int rest = iterations(false), current = iterations(true);
    std::printf("rotated box: %d CG iterations with the rest modes, %d with the current\n", rest,
                current);
    EXPECT_LT(current, rest);
}

// The CPU backend with the current modes (the default) and the rest ones: the same trajectory
// (the modes change the preconditioner only) of a column bending under sideways gravity, every
// solve converged, at p = 1 and p = 2 (the vertices' current positions). Fewer iterations are
// measured on larger bodies (the rotated box above; the bunny, README.md): on this small
// column both need the same.
TEST(MultigridCurrentModes, SimulationKeepsTheTrajectory) {
    const TetMesh mesh = test::make_box_mesh(3, 3, 12, 0.25, 0.25, 1.0);
    for (int order : {1, 2}) {
        SimulationSettings s = test::tight_solve_settings(order, 2000);
        s.young = 2e4;
        s.gravity = {9.81, 0, -9.81};
        s.max_newton_iterations = 4;
        s.preconditioner = Preconditioner::Multigrid;
        Simulation current(mesh, s);
        s.multigrid_rest_modes = true;
        Simulation rest_modes(mesh, s);
        const std::vector<double> rest = current.positions();
        current.pin_below(1e-9);
        rest_modes.pin_below(1e-9);
        for (int frame = 0; frame < 10; ++frame) {
            const StepResult a = current.step();
            rest_modes.step();
            EXPECT_EQ(a.pcg_breakdowns, 0);
            EXPECT_EQ(a.pcg_unconverged, 0);
        }
        const std::vector<double> xa = current.positions(), xb = rest_modes.positions();
        const double motion = test::max_abs_diff(xa, rest);
        EXPECT_GT(motion, 0.05) << order;
        EXPECT_LT(test::max_abs_diff(xa, xb), 1e-6 * motion) << order;
    }
}

} // namespace
} // namespace edn

// Block-Jacobi PCG on linear-elastic stiffness matrices (plus a mass-like diagonal shift). The
// PcgTwins suite checks the properties every twin has (b = 0, iteration cap, singular and
// indefinite matrices, pins untouched) on the CPU twin and on the CUDA twin with every
// implementation choice (skipped without a device); PcgTest checks the CPU twin's accuracy
// against a dense Cholesky solve, warm start, determinism and its float instance.
#include "solver/pcg.hpp"
#include "sparse/spmv.hpp"
#include "support/backend.hpp"
#include "support/compare.hpp"
#include "support/linear_system.hpp"
#include "support/pcg_twins.hpp"
#include "support/random.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <gtest/gtest.h>

namespace edn {
namespace {

using System = test::LinearSystem;
using test::all_finite;
using test::norm;
using test::random_vector;
using test::relative_error;

/// Dense row-major copy of the matrix (scalar dofs), straight from its COO entries.
std::vector<double> dense(const BinBcsrMatrix<double>& a) {
    const std::size_t n = 3 * static_cast<std::size_t>(a.pattern->num_rows);
    std::vector<double> m(n * n, 0.0);
    for (const CooEntry<double>& e : to_coo(a)) m[e.row * n + e.col] += e.value;
    return m;
}

/// y = M x for a dense n x n matrix (independent of the Bin-BCSR* SpMV).
std::vector<double> dense_multiply(const std::vector<double>& m, const std::vector<double>& x) {
    const std::size_t n = x.size();
    std::vector<double> y(n, 0.0);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) y[i] += m[i * n + j] * x[j];
    return y;
}

/// Solves the SPD system M x = b by a dense Cholesky factorisation (M = L L^T).
std::vector<double> cholesky_solve(std::vector<double> m, std::vector<double> b) {
    const std::size_t n = b.size();
    for (std::size_t j = 0; j < n; ++j) {
        double d = m[j * n + j];
        for (std::size_t k = 0; k < j; ++k) d -= m[j * n + k] * m[j * n + k];
        EXPECT_GT(d, 0.0) << "matrix not SPD at column " << j;
        const double l = std::sqrt(d);
        m[j * n + j] = l;
        for (std::size_t i = j + 1; i < n; ++i) {
            double s = m[i * n + j];
            for (std::size_t k = 0; k < j; ++k) s -= m[i * n + k] * m[j * n + k];
            m[i * n + j] = s / l;
        }
    }
    for (std::size_t i = 0; i < n; ++i) { // L y = b
        for (std::size_t k = 0; k < i; ++k) b[i] -= m[i * n + k] * b[k];
        b[i] /= m[i * n + i];
    }
    for (std::size_t i = n; i-- > 0;) { // L^T x = y
        for (std::size_t k = i + 1; k < n; ++k) b[i] -= m[k * n + i] * b[k];
        b[i] /= m[i * n + i];
    }
    return b;
}

class PcgTest : public ::testing::TestWithParam<int> {};

TEST_P(PcgTest, ConvergesAndMatchesDenseCholesky) {
    const int order = GetParam();
    for (const TetMesh& mesh :
         {test::make_random_perturbed_box(2, 2, 2, 1, 1, 1, 0.1, 7),
          test::shuffle_mesh(test::make_random_perturbed_box(3, 2, 2, 2, 1, 1, 0.12, 8), 5)}) {
        System s(mesh, order, 0.05);
        const std::vector<double> m = dense(s.a);
        const std::vector<double> b = random_vector(s.dofs(), 1);
        const std::vector<double> exact = cholesky_solve(m, b);

        PcgSettings settings;
        settings.relative_tolerance = 1e-9;
        settings.max_iterations = 2000;
        settings.warm_start = false;
        std::vector<double> x = random_vector(s.dofs(), 2); // ignored: cold start
        PcgWorkspace<double> ws;
        const PcgResult r = cpu::pcg(s.a.view(), b.data(), x.data(), settings, ws);
        EXPECT_TRUE(r.converged);
        EXPECT_FALSE(r.breakdown);
        EXPECT_GT(r.iterations, 0);
        EXPECT_LT(r.iterations, 2000);
        EXPECT_NEAR(r.reference_norm, norm(b), 1e-12 * norm(b));
        EXPECT_LE(r.final_residual, 1e-9 * norm(b));

        // True residual with the dense matrix (not the solver's SpMV or recurrence).
        std::vector<double> res = dense_multiply(m, x);
        for (std::size_t i = 0; i < res.size(); ++i) res[i] -= b[i];
        EXPECT_LE(norm(res), 1e-8 * norm(b));
        EXPECT_LT(relative_error(x, exact), 1e-7);

        // Warm start from the exact solution: nothing to do.
        std::vector<double> warm = exact;
        settings.warm_start = true;
        const PcgResult w = cpu::pcg(s.a.view(), b.data(), warm.data(), settings, ws);
        EXPECT_TRUE(w.converged);
        EXPECT_EQ(w.iterations, 0);
        EXPECT_EQ(warm, exact);

        // Same solve in float reaches a float tolerance and agrees with the double solution.
        const std::vector<float> bf(b.begin(), b.end());
        std::vector<float> xf(s.dofs(), 0.f);
        PcgWorkspace<float> wsf;
        PcgSettings fs;
        fs.relative_tolerance = 1e-5;
        fs.max_iterations = 2000;
        const PcgResult rf = cpu::pcg(s.af.view(), bf.data(), xf.data(), fs, wsf);
        EXPECT_TRUE(rf.converged);
        EXPECT_LT(relative_error(std::vector<double>(xf.begin(), xf.end()), exact), 1e-3);
    }
}

TEST_P(PcgTest, LargerShuffledMeshResidualAndDeterminism) {
    const int order = GetParam();
    System s(test::shuffle_mesh(test::make_random_perturbed_box(7, 6, 5, 1.4, 1.2, 1, 0.12, 9), 4),
             order, 0.02);
    const std::vector<double> b = random_vector(s.dofs(), 3);
    PcgSettings settings;
    settings.relative_tolerance = 1e-6;
    settings.max_iterations = 1000;
    settings.warm_start = false;
    std::vector<double> x(s.dofs()), x2(s.dofs(), 5.0);
    PcgWorkspace<double> ws;
    const PcgResult r = cpu::pcg(s.a.view(), b.data(), x.data(), settings, ws);
    ASSERT_TRUE(r.converged);
    // True residual through the COO entries.
    std::vector<double> res(b.size());
    for (std::size_t i = 0; i < b.size(); ++i) res[i] = -b[i];
    for (const CooEntry<double>& e : to_coo(s.a)) res[e.row] += e.value * x[e.col];
    EXPECT_LE(norm(res), 1.01e-6 * norm(b));
    // Same input, fresh workspace: bitwise the same result.
    PcgWorkspace<double> ws2;
    const PcgResult r2 = cpu::pcg(s.a.view(), b.data(), x2.data(), settings, ws2);
    EXPECT_EQ(r2.iterations, r.iterations);
    EXPECT_EQ(x2, x);
}

TEST_P(PcgTest, PinnedNodesStayAndFreeRowsAreSolved) {
    const int order = GetParam();
    // Pure K: the pins remove the rigid modes, so the free block is SPD.
    System s(test::make_random_perturbed_box(3, 2, 2, 1.5, 1, 1, 0.1, 10), order, 0.0);
    const std::vector<std::uint8_t> fixed = s.bottom_nodes();
    ASSERT_GT(std::count(fixed.begin(), fixed.end(), 1), 3);

    const std::vector<double> b = random_vector(s.dofs(), 5);
    std::vector<double> x = random_vector(s.dofs(), 6); // fixed values: prescribed displacements
    const std::vector<double> x0 = x;
    PcgSettings settings;
    settings.relative_tolerance = 1e-9;
    settings.max_iterations = 3000;
    settings.warm_start = false;
    PcgWorkspace<double> ws;
    const PcgResult r = cpu::pcg(s.a.view(), b.data(), x.data(), settings, ws, fixed.data());
    ASSERT_TRUE(r.converged);

    // Reference: A_ff x_f = b_f - A_fc x_c by dense Cholesky.
    const std::vector<double> m = dense(s.a);
    std::vector<std::size_t> free_dofs;
    for (std::size_t i = 0; i < s.dofs(); ++i)
        if (!fixed[i / 3]) free_dofs.push_back(i);
    const std::size_t nf = free_dofs.size(), nd = s.dofs();
    std::vector<double> mff(nf * nf), rhs(nf);
    double pb2 = 0;
    for (std::size_t a = 0; a < nf; ++a) {
        const std::size_t i = free_dofs[a];
        rhs[a] = b[i];
        pb2 += b[i] * b[i];
        for (std::size_t j = 0; j < nd; ++j)
            if (fixed[j / 3]) rhs[a] -= m[i * nd + j] * x0[j];
        for (std::size_t c = 0; c < nf; ++c) mff[a * nf + c] = m[i * nd + free_dofs[c]];
    }
    const std::vector<double> xf = cholesky_solve(mff, rhs);
    EXPECT_NEAR(r.reference_norm, std::sqrt(pb2), 1e-12 * std::sqrt(pb2));

    const std::vector<double> ax = dense_multiply(m, x);
    double res2 = 0, err2 = 0, ref2 = 0;
    for (std::size_t a = 0; a < nf; ++a) {
        const std::size_t i = free_dofs[a];
        res2 += (ax[i] - b[i]) * (ax[i] - b[i]);
        err2 += (x[i] - xf[a]) * (x[i] - xf[a]);
        ref2 += xf[a] * xf[a];
    }
    EXPECT_LE(std::sqrt(res2), 1e-8 * std::sqrt(pb2));
    EXPECT_LT(std::sqrt(err2 / ref2), 1e-6);
    for (std::size_t i = 0; i < nd; ++i) {
        if (fixed[i / 3]) {
            ASSERT_EQ(x[i], x0[i]) << "fixed dof " << i << " moved";
        }
    }
}

TEST_P(PcgTest, FloatTwinMatchesDoubleWithPins) {
    // The accuracy the CUDA (float) twin is held to: float PCG on pinned pure K and on K + cI.
    const int order = GetParam();
    for (double shift : {0.0, 0.05}) {
        System s(test::make_random_perturbed_box(5, 4, 3, 1.5, 1, 1, 0.1, 24), order, shift);
        const std::vector<std::uint8_t> fixed = s.bottom_nodes();
        const std::vector<double> b = random_vector(s.dofs(), 32);
        std::vector<double> x = random_vector(s.dofs(), 33);
        std::vector<float> xf(x.begin(), x.end());
        PcgSettings settings;
        settings.relative_tolerance = 1e-10;
        settings.max_iterations = 5000;
        settings.warm_start = false;
        PcgWorkspace<double> ws;
        ASSERT_TRUE(cpu::pcg(s.a.view(), b.data(), x.data(), settings, ws, fixed.data()).converged);
        const std::vector<float> bf(b.begin(), b.end());
        settings.relative_tolerance = 1e-6;
        PcgWorkspace<float> wsf;
        const PcgResult r =
            cpu::pcg(s.af.view(), bf.data(), xf.data(), settings, wsf, fixed.data());
        EXPECT_TRUE(r.converged);
        const double err = relative_error(std::vector<double>(xf.begin(), xf.end()), x);
        std::printf("shift %.2f order %d: float iterations %d, relative error %.2e\n", shift, order,
                    r.iterations, err);
        EXPECT_LT(err, 1e-3);
    }
}

INSTANTIATE_TEST_SUITE_P(Orders, PcgTest, ::testing::Values(1, 2));

/// The properties of every PCG twin, per backend and order: the CPU twin in double, the CUDA twin
/// in float for every implementation choice.
class PcgTwins : public test::BackendOrderTest {};

TEST_P(PcgTwins, ZeroRightHandSideGivesZero) {
    System s(test::make_random_perturbed_box(3, 3, 2, 1, 1, 1), order(), 0.05);
    const std::vector<double> b(s.dofs(), 0.0);
    for (const auto& twin : test::pcg_twins(backend())) {
        SCOPED_TRACE(twin->name());
        std::vector<double> x = random_vector(s.dofs(), 4);
        const PcgResult r = twin->solve(s, b, x, PcgSettings{});
        EXPECT_TRUE(r.converged);
        EXPECT_EQ(r.iterations, 0);
        EXPECT_EQ(x, std::vector<double>(s.dofs(), 0.0));
    }
}

TEST_P(PcgTwins, PinnedDofsKeepTheirValues) {
    // Pure K: the pins remove the rigid modes, so the free block is SPD.
    System s(test::make_random_perturbed_box(5, 4, 3, 1.5, 1, 1, 0.1, 24), order(), 0.0);
    const std::vector<std::uint8_t> fixed = s.bottom_nodes();
    const std::vector<double> b = random_vector(s.dofs(), 32);
    const std::vector<double> x0 = random_vector(s.dofs(), 33); // fixed values: prescribed
    PcgSettings settings;
    settings.relative_tolerance = 1e-6;
    settings.max_iterations = 3000;
    settings.warm_start = false;
    for (const auto& twin : test::pcg_twins(backend())) {
        SCOPED_TRACE(twin->name());
        std::vector<double> x = x0;
        const PcgResult r = twin->solve(s, b, x, settings, fixed);
        EXPECT_TRUE(r.converged);
        const std::vector<double> held = twin->held(x0);
        for (std::size_t i = 0; i < x.size(); ++i) {
            if (fixed[i / 3]) {
                ASSERT_EQ(x[i], held[i]) << "fixed dof " << i << " moved";
            }
        }
    }
}

TEST_P(PcgTwins, IterationCapReportsNotConvergedWithoutNan) {
    System s(test::make_random_perturbed_box(4, 3, 3, 1, 1, 1), order(), 0.01);
    const std::vector<double> b = random_vector(s.dofs(), 7);
    PcgSettings settings;
    settings.relative_tolerance = 1e-12;
    settings.max_iterations = 3;
    for (const auto& twin : test::pcg_twins(backend())) {
        SCOPED_TRACE(twin->name());
        std::vector<double> x(s.dofs(), 0.0);
        const PcgResult r = twin->solve(s, b, x, settings);
        EXPECT_FALSE(r.converged);
        EXPECT_FALSE(r.breakdown);
        EXPECT_EQ(r.iterations, 3);
        EXPECT_TRUE(all_finite(x));
        EXPECT_TRUE(std::isfinite(r.final_residual));
        EXPECT_LT(r.final_residual, r.initial_residual); // CG still made progress
    }
}

TEST_P(PcgTwins, SingularStiffnessTerminatesWithoutNan) {
    // Pure K, no pins: six rigid modes in the null space; b = K y lies in the range.
    System s(test::make_random_perturbed_box(3, 3, 2, 1, 1, 1), order(), 0.0);
    const std::vector<double> y = random_vector(s.dofs(), 8);
    std::vector<double> b(s.dofs());
    cpu::spmv(s.a.view(), y.data(), b.data());
    PcgSettings settings;
    settings.relative_tolerance = 1e-8;
    settings.max_iterations = 500;
    for (const auto& twin : test::pcg_twins(backend())) {
        SCOPED_TRACE(twin->name());
        std::vector<double> x(s.dofs(), 0.0);
        const PcgResult r = twin->solve(s, b, x, settings);
        EXPECT_TRUE(r.converged || r.breakdown || r.iterations == 500);
        EXPECT_TRUE(all_finite(x));
        EXPECT_TRUE(std::isfinite(r.final_residual));
    }
}

TEST_P(PcgTwins, IndefiniteMatrixBreaksDownAtOnce) {
    System s(test::make_random_perturbed_box(2, 2, 2, 1, 1, 1), order(), 0.05);
    s.negate(); // -(K + cI): p.Ap < 0 for every p
    const std::vector<double> b = random_vector(s.dofs(), 9);
    const std::vector<double> x0 = random_vector(s.dofs(), 10);
    for (const auto& twin : test::pcg_twins(backend())) {
        SCOPED_TRACE(twin->name());
        std::vector<double> x = x0;
        const PcgResult r = twin->solve(s, b, x, PcgSettings{});
        EXPECT_TRUE(r.breakdown);
        EXPECT_FALSE(r.converged);
        EXPECT_EQ(r.iterations, 0);
        EXPECT_EQ(x, twin->held(x0));
    }
}

INSTANTIATE_TEST_SUITE_P(Backends, PcgTwins,
                         ::testing::Combine(test::all_backends(), ::testing::Values(1, 2)),
                         test::backend_order_name);

} // namespace
} // namespace edn

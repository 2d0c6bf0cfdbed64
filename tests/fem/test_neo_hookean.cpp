#include "fem/hyperelastic_element.hpp"
#include "fem/neo_hookean.hpp"
#include "support/finite_differences.hpp"
#include "support/random.hpp"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <random>
#include <vector>

namespace edn {
namespace {

using test::random_matrix;
using test::random_rotation;
using test::with_singular_values;

constexpr LameParameters<double> kLame = lame_from_young_poisson(1.0e4, 0.35);
const NeoHookean<double> kMaterial{kLame};

// Deformation gradients of every regime: moderate, near-inverted (J ~ 1e-2), inside the
// extension (0 < J < J0), singular, inverted.
std::vector<Mat3<double>> regime_samples(std::mt19937& rng) {
    std::vector<Mat3<double>> out;
    for (int k = 0; k < 10; ++k) {
        Mat3<double> F = mat3_identity<double>() + random_matrix(rng, -0.4, 0.4);
        out.push_back(F);
        out.push_back(with_singular_values(rng, 1.3, 0.9, 1e-2));  // near-inverted
        out.push_back(with_singular_values(rng, 1.1, 0.8, 5e-4));  // 0 < J < J0
        out.push_back(with_singular_values(rng, 1.2, 0.7, -0.3));  // inverted
        out.push_back(with_singular_values(rng, 2.0, 1.5, -1.5));  // strongly inverted
        out.push_back(with_singular_values(rng, 0.9, 0.6, -2e-3)); // just inverted
    }
    return out;
}

TEST(NeoHookean, FiniteDifferencesInEveryRegime) {
    std::mt19937 rng(21);
    for (const Mat3<double>& F : regime_samples(rng))
        test::check_material_derivatives(kMaterial, F);
}

TEST(NeoHookean, ExactBonetWoodLawAboveThreshold) {
    std::mt19937 rng(3);
    for (int k = 0; k < 50; ++k) {
        Mat3<double> F = mat3_identity<double>() + random_matrix(rng, -0.5, 0.5);
        if (k % 5 == 0) F = with_singular_values(rng, 1.5, 0.7, 2e-3);
        const double J = det(F);
        if (J < kMaterial.extension_jacobian) continue;
        const double mu = kLame.mu, lambda = kLame.lambda;
        const double expected = 0.5 * mu * (trace(transpose(F) * F) - 3) - mu * std::log(J) +
                                0.5 * lambda * std::log(J) * std::log(J);
        EXPECT_NEAR(kMaterial.energy_density(F), expected, 1e-12 * std::max(1.0, expected));
        // Cecka Eq.: P = mu F + (lambda ln J - mu) F^{-T}.
        const Mat3<double> Pexp = mu * F + (lambda * std::log(J) - mu) * transpose(inverse(F));
        const Mat3<double> P = kMaterial.first_piola(F);
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j)
                EXPECT_NEAR(P.m[i][j], Pexp.m[i][j], 1e-9 * std::max(1.0, std::abs(Pexp.m[i][j])));
    }
}

TEST(NeoHookean, ContinuousAtExtensionThreshold) {
    std::mt19937 rng(8);
    const double J0 = kMaterial.extension_jacobian;
    for (int k = 0; k < 10; ++k) {
        const Mat3<double> Q1 = random_rotation(rng), Q2 = random_rotation(rng);
        auto at = [&](double J) {
            const Mat3<double> D{{{1.2, 0, 0}, {0, 0.9, 0}, {0, 0, J / (1.2 * 0.9)}}};
            return Q1 * D * Q2;
        };
        const Mat3<double> Fa = at(J0 * (1 + 1e-10)), Fb = at(J0 * (1 - 1e-10));
        ASSERT_GT(det(Fa), J0);
        ASSERT_LT(det(Fb), J0);
        const double ea = kMaterial.energy_density(Fa), eb = kMaterial.energy_density(Fb);
        EXPECT_NEAR(ea, eb, 1e-8 * std::abs(ea));
        const Mat3<double> Pa = kMaterial.first_piola(Fa), Pb = kMaterial.first_piola(Fb);
        double Da[9][9], Db[9][9];
        kMaterial.first_piola_derivative(Fa, Da);
        kMaterial.first_piola_derivative(Fb, Db);
        double pscale = 0, dscale = 0;
        for (int x = 0; x < 9; ++x) {
            pscale = std::max(pscale, std::abs(Pa.m[x / 3][x % 3]));
            for (int y = 0; y < 9; ++y) dscale = std::max(dscale, std::abs(Da[x][y]));
        }
        for (int x = 0; x < 9; ++x) {
            EXPECT_NEAR(Pa.m[x / 3][x % 3], Pb.m[x / 3][x % 3], 1e-7 * pscale);
            for (int y = 0; y < 9; ++y) EXPECT_NEAR(Da[x][y], Db[x][y], 1e-7 * dscale);
        }
    }
}

TEST(NeoHookean, RestStateAndLinearLimit) {
    const Mat3<double> I = mat3_identity<double>();
    EXPECT_NEAR(kMaterial.energy_density(I), 0.0, 1e-12);
    const Mat3<double> P = kMaterial.first_piola(I);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) EXPECT_NEAR(P.m[i][j], 0.0, 1e-9);
    double D[9][9], L[9][9];
    kMaterial.first_piola_derivative(I, D);
    LinearElastic<double>{kLame}.first_piola_derivative(I, L);
    for (int x = 0; x < 9; ++x)
        for (int y = 0; y < 9; ++y) EXPECT_NEAR(D[x][y], L[x][y], 1e-9 * kLame.lambda);
    // Tiny strain |H| ~ 1e-6: stress ~ lambda |H| agrees with linear elasticity up to terms of
    // order lambda |H|^2 (relative difference ~1e-6 of the stress).
    std::mt19937 rng(4);
    const Mat3<double> H = random_matrix(rng, -1e-6, 1e-6);
    const Mat3<double> Pn = kMaterial.first_piola(I + H);
    const Mat3<double> Pl = linear_elastic_stress(H, kLame);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) EXPECT_NEAR(Pn.m[i][j], Pl.m[i][j], 100 * kLame.lambda * 1e-12);
}

TEST(NeoHookean, RotationInvarianceAndSymmetricTangent) {
    std::mt19937 rng(5);
    for (const Mat3<double>& F : regime_samples(rng)) {
        const Mat3<double> Q = random_rotation(rng);
        const double e = kMaterial.energy_density(F);
        EXPECT_NEAR(kMaterial.energy_density(Q * F), e, 1e-10 * std::max(1.0, std::abs(e)));
        const Mat3<double> P = kMaterial.first_piola(F), QP = kMaterial.first_piola(Q * F);
        const Mat3<double> diff = QP - Q * P;
        EXPECT_LT(std::sqrt(ddot(diff, diff)), 1e-9 * std::max(1.0, std::sqrt(ddot(P, P))));
        double D[9][9], dscale = 0;
        kMaterial.first_piola_derivative(F, D);
        for (int x = 0; x < 9; ++x)
            for (int y = 0; y < 9; ++y) dscale = std::max(dscale, std::abs(D[x][y]));
        for (int x = 0; x < 9; ++x)
            for (int y = 0; y < 9; ++y) EXPECT_NEAR(D[x][y], D[y][x], 1e-13 * dscale);
    }
}

TEST(NeoHookean, ExtensionResistsInversion) {
    // Along F = diag(1, 1, t), the energy decreases as t grows from inverted to J0.
    double previous = 1e300;
    for (double t = -2.0; t < kMaterial.extension_jacobian; t += 1e-3) {
        const Mat3<double> F{{{1, 0, 0}, {0, 1, 0}, {0, 0, t}}};
        const double e = kMaterial.energy_density(F);
        EXPECT_LT(e, previous) << "t = " << t;
        previous = e;
    }
}

TEST(NeoHookean, EvaluateMatchesSeparateCallsAndProjectionIsPsd) {
    std::mt19937 rng(6);
    for (const Mat3<double>& F : regime_samples(rng)) {
        double psi = 0, D[9][9], Dref[9][9], Dp[9][9];
        Mat3<double> P{};
        kMaterial.evaluate(F, psi, P, D, false);
        kMaterial.first_piola_derivative(F, Dref);
        EXPECT_EQ(psi, kMaterial.energy_density(F));
        const Mat3<double> Pref = kMaterial.first_piola(F);
        for (int x = 0; x < 9; ++x) {
            EXPECT_EQ(P.m[x / 3][x % 3], Pref.m[x / 3][x % 3]);
            for (int y = 0; y < 9; ++y) EXPECT_EQ(D[x][y], Dref[x][y]);
        }
        kMaterial.evaluate(F, psi, P, Dp, true);
        double work[9][9], V[9][9], ev[9];
        std::copy(&Dp[0][0], &Dp[0][0] + 81, &work[0][0]);
        symmetric_eigen_jacobi<9>(work, ev, V);
        double scale = 0;
        for (double e : ev) scale = std::max(scale, std::abs(e));
        for (double e : ev) EXPECT_GE(e, -1e-10 * scale);
    }
    // Where the tangent is already positive definite (stretched states; in compressed states the
    // rotational directions have negative curvature), projection changes nothing.
    int definite = 0;
    for (int k = 0; k < 20; ++k) {
        const double s0 = 1.0 + 0.05 * (k % 4), s1 = 1.02 + 0.01 * (k % 3), s2 = 1.1;
        const Mat3<double> F = with_singular_values(rng, s0, s1, s2);
        double D[9][9], Dp[9][9], work[9][9], V[9][9], ev[9], psi;
        Mat3<double> P{};
        kMaterial.evaluate(F, psi, P, D, false);
        kMaterial.evaluate(F, psi, P, Dp, true);
        std::copy(&D[0][0], &D[0][0] + 81, &work[0][0]);
        symmetric_eigen_jacobi<9>(work, ev, V);
        if (*std::min_element(ev, ev + 9) <= 1e-8 * kLame.lambda) continue;
        ++definite;
        // The projection is computed from the analytic eigensystem, so "unchanged" holds to
        // round-off rather than bit for bit.
        double scale = 0;
        for (int x = 0; x < 9; ++x)
            for (int y = 0; y < 9; ++y) scale = std::max(scale, std::abs(D[x][y]));
        for (int x = 0; x < 9; ++x)
            for (int y = 0; y < 9; ++y) EXPECT_NEAR(D[x][y], Dp[x][y], 1e-10 * scale);
    }
    EXPECT_GT(definite, 10);
}

TEST(NeoHookean, NeverNonFinite) {
    std::mt19937 rng(9);
    std::vector<Mat3<double>> samples = regime_samples(rng);
    samples.push_back(mat3_zero<double>());
    samples.push_back(Mat3<double>{{{1, 2, 3}, {2, 4, 6}, {1, 1, 1}}}); // singular
    samples.push_back(Mat3<double>{{{-1, 0, 0}, {0, -1, 0}, {0, 0, -1}}});
    samples.push_back(with_singular_values(rng, 50, 20, -30)); // J = -3e4
    for (int k = 0; k < 200; ++k) samples.push_back(random_matrix(rng, -3, 3));
    for (const Mat3<double>& F : samples) {
        double psi = 0, D[9][9];
        Mat3<double> P{};
        for (int project = 0; project < 2; ++project) {
            kMaterial.evaluate(F, psi, P, D, project == 1);
            EXPECT_TRUE(std::isfinite(psi));
            for (int x = 0; x < 9; ++x) {
                EXPECT_TRUE(std::isfinite(P.m[x / 3][x % 3]));
                for (int y = 0; y < 9; ++y) EXPECT_TRUE(std::isfinite(D[x][y]));
            }
        }
        // Float too (the GPU type).
        const NeoHookean<float> mf{LameParameters<float>{float(kLame.lambda), float(kLame.mu)}};
        Mat3<float> Ff{};
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) Ff.m[i][j] = float(F.m[i][j]);
        float psif = 0, Df[9][9];
        Mat3<float> Pf{};
        mf.evaluate(Ff, psif, Pf, Df, true);
        EXPECT_TRUE(std::isfinite(psif));
        for (int x = 0; x < 9; ++x) {
            EXPECT_TRUE(std::isfinite(Pf.m[x / 3][x % 3]));
            for (int y = 0; y < 9; ++y) EXPECT_TRUE(std::isfinite(Df[x][y]));
        }
    }
}

} // namespace
} // namespace edn

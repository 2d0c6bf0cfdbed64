#include "fem/corotational.hpp"
#include "fem/hyperelastic_element.hpp"
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
const Corotational<double> kMaterial{kLame};

// Moderate, near-inverted (J ~ 1e-2), inverted and strongly inverted F, away from the set
// sigma_i + sigma_j = 0 where R is not differentiable.
std::vector<Mat3<double>> regime_samples(std::mt19937& rng) {
    std::vector<Mat3<double>> out;
    for (int k = 0; k < 10; ++k) {
        out.push_back(mat3_identity<double>() + random_matrix(rng, -0.4, 0.4));
        out.push_back(random_rotation(rng) *
                      (mat3_identity<double>() + random_matrix(rng, -0.3, 0.3)));
        out.push_back(with_singular_values(rng, 1.3, 0.9, 1e-2));
        out.push_back(with_singular_values(rng, 1.2, 0.7, -0.3));
        out.push_back(with_singular_values(rng, 2.0, 1.5, -1.0));
        out.push_back(with_singular_values(rng, 1.0, 0.5, -1e-2));
        out.push_back(with_singular_values(rng, 1.4, 1.4, 0.8)); // repeated singular values
    }
    return out;
}

TEST(Corotational, FiniteDifferencesOfExactTangentInEveryRegime) {
    std::mt19937 rng(31);
    for (const Mat3<double>& F : regime_samples(rng))
        test::check_material_derivatives(kMaterial, F);
}

TEST(Corotational, EnergyAndStressMatchPolarDecompositionFormulas) {
    std::mt19937 rng(32);
    for (const Mat3<double>& F : regime_samples(rng)) {
        const PolarDecomposition<double> pd = polar_decomposition(F);
        const Mat3<double> FR = F - pd.R;
        const double tr = trace(transpose(pd.R) * F) - 3;
        const double expected = kLame.mu * ddot(FR, FR) + 0.5 * kLame.lambda * tr * tr;
        EXPECT_NEAR(kMaterial.energy_density(F), expected, 1e-9 * std::max(1.0, expected));
        const Mat3<double> Pexp = (2 * kLame.mu) * FR + (kLame.lambda * tr) * pd.R;
        const Mat3<double> P = kMaterial.first_piola(F);
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j)
                EXPECT_NEAR(P.m[i][j], Pexp.m[i][j], 1e-8 * std::max(1.0, std::abs(Pexp.m[i][j])));
    }
}

TEST(Corotational, RestStateAndLinearLimit) {
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
    // Any rigid rotation is stress free and has zero energy.
    std::mt19937 rng(1);
    for (int k = 0; k < 10; ++k) {
        const Mat3<double> Q = random_rotation(rng);
        EXPECT_NEAR(kMaterial.energy_density(Q), 0.0, 1e-12 * kLame.lambda);
        const Mat3<double> PQ = kMaterial.first_piola(Q);
        EXPECT_LT(std::sqrt(ddot(PQ, PQ)), 1e-9 * kLame.lambda);
    }
}

TEST(Corotational, RotationInvarianceAndSymmetricTangent) {
    std::mt19937 rng(33);
    for (const Mat3<double>& F : regime_samples(rng)) {
        const Mat3<double> Q = random_rotation(rng);
        const double e = kMaterial.energy_density(F);
        EXPECT_NEAR(kMaterial.energy_density(Q * F), e, 1e-9 * std::max(1.0, e));
        const Mat3<double> diff = kMaterial.first_piola(Q * F) - Q * kMaterial.first_piola(F);
        EXPECT_LT(std::sqrt(ddot(diff, diff)), 1e-8 * kLame.lambda);
        double D[9][9];
        kMaterial.first_piola_derivative(F, D);
        for (int x = 0; x < 9; ++x)
            for (int y = 0; y < 9; ++y) EXPECT_NEAR(D[x][y], D[y][x], 1e-9 * kLame.lambda);
    }
}

TEST(Corotational, AnalyticProjectionEqualsJacobiProjection) {
    std::mt19937 rng(34);
    int indefinite = 0;
    for (const Mat3<double>& F : regime_samples(rng)) {
        double psi, D[9][9], Dp[9][9];
        Mat3<double> P{};
        kMaterial.evaluate(F, psi, P, D, false);
        kMaterial.evaluate(F, psi, P, Dp, true);
        indefinite += project_psd<9>(D) > 0;
        for (int x = 0; x < 9; ++x)
            for (int y = 0; y < 9; ++y) EXPECT_NEAR(Dp[x][y], D[x][y], 1e-8 * kLame.lambda);
    }
    EXPECT_GT(indefinite, 10); // the comparison exercised actual clamping
}

TEST(Corotational, FixedRotationTangentIsPsdAndNotTheExactOne) {
    std::mt19937 rng(35);
    Corotational<double> fixed{kLame};
    fixed.tangent = CorotationalTangent::fixed_rotation;
    for (const Mat3<double>& F : regime_samples(rng)) {
        double D[9][9], E[9][9];
        fixed.first_piola_derivative(F, D);
        const Mat3<double> R = polar_decomposition(F).R;
        for (int x = 0; x < 9; ++x)
            for (int y = 0; y < 9; ++y) {
                const double expected = kLame.lambda * R.m[x / 3][x % 3] * R.m[y / 3][y % 3] +
                                        (x == y ? 2 * kLame.mu : 0.0);
                EXPECT_NEAR(D[x][y], expected, 1e-9 * kLame.lambda);
            }
        EXPECT_EQ(project_psd<9>(D), 0);
        // Stress is the same for both variants; the exact tangent differs (it includes dR/dF).
        kMaterial.first_piola_derivative(F, E);
        double diff = 0;
        for (int x = 0; x < 9; ++x)
            for (int y = 0; y < 9; ++y) diff = std::max(diff, std::abs(E[x][y] - D[x][y]));
        EXPECT_GT(diff, 1e-3 * kLame.mu);
    }
}

TEST(Corotational, NeverNonFinite) {
    std::mt19937 rng(36);
    std::vector<Mat3<double>> samples = regime_samples(rng);
    samples.push_back(mat3_zero<double>());
    samples.push_back(Mat3<double>{{{1, 0, 0}, {0, 1, 0}, {0, 0, -1}}}); // sigma_1 + sigma_2 = 0
    samples.push_back(Mat3<double>{{{-1, 0, 0}, {0, -1, 0}, {0, 0, -1}}});
    samples.push_back(Mat3<double>{{{1, 2, 3}, {2, 4, 6}, {1, 1, 1}}}); // singular
    samples.push_back(Mat3<double>{{{1, 2, 3}, {2, 4, 6}, {3, 6, 9}}}); // rank 1
    samples.push_back(with_singular_values(rng, 50, 20, -30));
    for (int k = 0; k < 200; ++k) samples.push_back(random_matrix(rng, -3, 3));
    for (const Mat3<double>& F : samples)
        for (int variant = 0; variant < 2; ++variant)
            for (int project = 0; project < 2; ++project) {
                Corotational<double> mat{kLame};
                mat.tangent =
                    variant == 0 ? CorotationalTangent::exact : CorotationalTangent::fixed_rotation;
                double psi = 0, D[9][9];
                Mat3<double> P{};
                mat.evaluate(F, psi, P, D, project == 1);
                EXPECT_TRUE(std::isfinite(psi));
                for (int x = 0; x < 9; ++x) {
                    EXPECT_TRUE(std::isfinite(P.m[x / 3][x % 3]));
                    for (int y = 0; y < 9; ++y) EXPECT_TRUE(std::isfinite(D[x][y]));
                }
                const Corotational<float> mf{
                    LameParameters<float>{float(kLame.lambda), float(kLame.mu)}, mat.tangent};
                Mat3<float> Ff{};
                for (int i = 0; i < 3; ++i)
                    for (int j = 0; j < 3; ++j) Ff.m[i][j] = float(F.m[i][j]);
                float psif = 0, Df[9][9];
                Mat3<float> Pf{};
                mf.evaluate(Ff, psif, Pf, Df, project == 1);
                EXPECT_TRUE(std::isfinite(psif));
                for (int x = 0; x < 9; ++x) {
                    EXPECT_TRUE(std::isfinite(Pf.m[x / 3][x % 3]));
                    for (int y = 0; y < 9; ++y) EXPECT_TRUE(std::isfinite(Df[x][y]));
                }
            }
}

} // namespace
} // namespace edn

#include "fem/polar_decomposition.hpp"
#include "support/random.hpp"

#include <cmath>
#include <cstring>
#include <gtest/gtest.h>
#include <random>
#include <vector>

namespace edn {
namespace {

using test::random_rotation;

template <class T> T frobenius(const Mat3<T>& a) {
    return std::sqrt(ddot(a, a));
}

Mat3<double> diag(double a, double b, double c) {
    return Mat3<double>{{{a, 0, 0}, {0, b, 0}, {0, 0, c}}};
}

// Random F of many kinds: generic, near-singular, inverted, rank-deficient, repeated singular
// values, zero. Built as Q1 diag(s) Q2 so the kind is controlled exactly.
std::vector<Mat3<double>> test_matrices() {
    std::mt19937 rng(1234);
    std::uniform_real_distribution<double> u(-2.0, 2.0);
    std::vector<Mat3<double>> out;
    for (int k = 0; k < 200; ++k) {
        Mat3<double> F{};
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) F.m[i][j] = u(rng);
        out.push_back(F);
    }
    const double spectra[][3] = {
        {2, 1, 1e-9},     {2, 1, -1e-9},  {1, 1e-7, 1e-8},  {3, 2, 0},          {3, 0, 0},
        {0, 0, 0},        {1, 1, 1},      {1, 1, -1},       {2, 2, 1},          {2, 1, 1},
        {2, 1, -1},       {1, 0.5, -0.5}, {5, 1e-3, -1e-3}, {1e-6, 1e-6, 1e-6}, {1e3, 1, -1e-3},
        {1.5, 0.7, -0.2}, {4, 4, -4},     {1, -1, -1},      {-1, -1, -1},       {0.1, 0.1, -3}};
    for (const auto& s : spectra)
        for (int k = 0; k < 10; ++k)
            out.push_back(random_rotation(rng) * diag(s[0], s[1], s[2]) * random_rotation(rng));
    out.push_back(diag(1, 1, 1));
    out.push_back(diag(1, 1, -1));
    out.push_back(diag(0, 0, 0));
    out.push_back(diag(-2, 1, 1));
    return out;
}

// Orthogonal polar factor of an invertible F by Newton's iteration Q <- (Q + Q^{-T}) / 2, an
// independent reference (it converges to the orthogonal factor, det Q = sign det F).
Mat3<double> newton_polar(Mat3<double> Q) {
    for (int it = 0; it < 100; ++it) Q = 0.5 * (Q + transpose(inverse(Q)));
    return Q;
}

TEST(PolarDecomposition, RotationOrthonormalStretchSymmetricAndProductIsF) {
    for (const Mat3<double>& F : test_matrices()) {
        const PolarDecomposition<double> pd = polar_decomposition(F);
        const double scale = std::max(frobenius(F), 1e-300);
        EXPECT_LT(frobenius(transpose(pd.R) * pd.R - mat3_identity<double>()), 1e-12);
        EXPECT_NEAR(det(pd.R), 1.0, 1e-12);
        EXPECT_LE(frobenius(pd.S - transpose(pd.S)), 1e-12 * scale);
        EXPECT_LE(frobenius(pd.R * pd.S - F), 1e-12 * scale);
    }
}

TEST(PolarDecomposition, SvdIsRotationVariant) {
    for (const Mat3<double>& F : test_matrices()) {
        const Svd3<double> svd = svd3_rotation_variant(F);
        const double scale = std::max(frobenius(F), 1e-300);
        EXPECT_NEAR(det(svd.U), 1.0, 1e-12);
        EXPECT_NEAR(det(svd.V), 1.0, 1e-12);
        EXPECT_LT(frobenius(transpose(svd.U) * svd.U - mat3_identity<double>()), 1e-12);
        EXPECT_LT(frobenius(transpose(svd.V) * svd.V - mat3_identity<double>()), 1e-12);
        const Mat3<double> D = diag(svd.sigma[0], svd.sigma[1], svd.sigma[2]);
        EXPECT_LE(frobenius(svd.U * D * transpose(svd.V) - F), 1e-12 * scale);
        EXPECT_GE(svd.sigma[0], svd.sigma[1] - 1e-12 * scale);
        EXPECT_GE(svd.sigma[1], std::abs(svd.sigma[2]) - 1e-12 * scale);
        EXPECT_GE(svd.sigma[1], 0.0);
        const double J = det(F);
        // The sign of the smallest singular value carries the orientation of F.
        if (std::abs(J) > 1e-9 * scale * scale * scale) {
            EXPECT_EQ(svd.sigma[2] < 0, J < 0);
        }
    }
}

TEST(PolarDecomposition, MatchesNewtonPolarForPositiveDeterminant) {
    for (const Mat3<double>& F : test_matrices()) {
        const double scale = frobenius(F);
        const double J = det(F);
        if (!(J > 1e-3 * scale * scale * scale)) continue; // well-conditioned, non-inverted only
        const Mat3<double> Q = newton_polar(F);
        EXPECT_LT(frobenius(polar_decomposition(F).R - Q), 1e-10);
    }
}

// For every F (inverted included), R = U V^T of the rotation-variant SVD is the rotation closest
// to F in the Frobenius norm: no nearby rotation does better.
TEST(PolarDecomposition, RotationIsClosestRotationAlsoWhenInverted) {
    std::mt19937 rng(99);
    std::normal_distribution<double> n(0.0, 1.0);
    for (const Mat3<double>& F : test_matrices()) {
        const Mat3<double> R = polar_decomposition(F).R;
        const double best = frobenius(F - R);
        for (int k = 0; k < 20; ++k) {
            // Small rotation exp([w]x) to first order, re-orthonormalised by Newton.
            const double w[3] = {1e-3 * n(rng), 1e-3 * n(rng), 1e-3 * n(rng)};
            const Mat3<double> W{{{1, -w[2], w[1]}, {w[2], 1, -w[0]}, {-w[1], w[0], 1}}};
            const Mat3<double> Rp = newton_polar(W) * R;
            EXPECT_GE(frobenius(F - Rp), best - 1e-12 * std::max(1.0, frobenius(F)));
        }
    }
}

TEST(PolarDecomposition, RotationAndStretchOfRotatedF) {
    std::mt19937 rng(5);
    for (const Mat3<double>& F : test_matrices()) {
        const Mat3<double> Q = random_rotation(rng);
        const PolarDecomposition<double> a = polar_decomposition(F);
        const PolarDecomposition<double> b = polar_decomposition(Q * F);
        const double scale = std::max(frobenius(F), 1e-300);
        // S is unique where R is (distinct sigma_i + sigma_j != 0): compare S, not R.
        const Svd3<double> svd = svd3_rotation_variant(F);
        const double gap = std::min({svd.sigma[0] + svd.sigma[1], svd.sigma[0] + svd.sigma[2],
                                     svd.sigma[1] + svd.sigma[2]});
        if (gap < 1e-6 * scale) continue;
        EXPECT_LE(frobenius(a.S - b.S), 1e-10 * scale);
        EXPECT_LE(frobenius(Q * a.R - b.R), 1e-9);
    }
}

TEST(PolarDecomposition, FloatIsAccurateToSinglePrecision) {
    for (const Mat3<double>& Fd : test_matrices()) {
        Mat3<float> F{};
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) F.m[i][j] = float(Fd.m[i][j]);
        const PolarDecomposition<float> pd = polar_decomposition(F);
        const float scale = std::max(frobenius(F), 1e-30f);
        EXPECT_LT(frobenius(transpose(pd.R) * pd.R - mat3_identity<float>()), 1e-5f);
        EXPECT_NEAR(det(pd.R), 1.0f, 1e-5f);
        EXPECT_LE(frobenius(pd.R * pd.S - F), 1e-5f * scale);
        EXPECT_LE(frobenius(pd.S - transpose(pd.S)), 1e-5f * scale);
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) {
                EXPECT_TRUE(std::isfinite(pd.R.m[i][j]));
                EXPECT_TRUE(std::isfinite(pd.S.m[i][j]));
            }
    }
}

// The batched SVD runs the matrices' iterations side by side; each must still be exactly the
// one-at-a-time SVD (bit for bit: the CPU's element pass batches, and its results must not
// depend on which elements share a batch), whatever the neighbours need (kinds mixed, so a
// batch holds matrices that converge after different sweeps).
TEST(PolarDecomposition, BatchedSvdEqualsOneAtATimeBitForBit) {
    const std::vector<Mat3<double>> all = test_matrices();
    auto same = [](const Svd3<double>& a, const Svd3<double>& b) {
        return std::memcmp(&a.U, &b.U, sizeof(a.U)) == 0 &&
               std::memcmp(&a.V, &b.V, sizeof(a.V)) == 0 &&
               std::memcmp(&a.sigma, &b.sigma, sizeof(a.sigma)) == 0;
    };
    constexpr int N = 4;
    for (std::size_t start = 0; start + N <= all.size(); start += 3) {
        Mat3<double> F[N];
        for (int l = 0; l < N; ++l) F[l] = all[(start + 37 * l) % all.size()];
        Svd3<double> batch[N];
        svd3_rotation_variant_batch<N>(F, batch);
        for (int l = 0; l < N; ++l) EXPECT_TRUE(same(batch[l], svd3_rotation_variant(F[l])));
    }
    Svd3<double> one[1];
    svd3_rotation_variant_batch<1>(&all[5], one);
    EXPECT_TRUE(same(one[0], svd3_rotation_variant(all[5])));
}

} // namespace
} // namespace edn

#include "fem/psd_projection.hpp"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <random>

namespace edn {
namespace {

constexpr int N = 9;

// A random orthogonal N x N matrix: Gram-Schmidt on a Gaussian matrix.
void random_orthogonal(std::mt19937& rng, double Q[N][N]) {
    std::normal_distribution<double> n(0.0, 1.0);
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j) Q[i][j] = n(rng);
    for (int c = 0; c < N; ++c)
        for (int pass = 0; pass < 2; ++pass) {
            for (int p = 0; p < c; ++p) {
                double d = 0;
                for (int r = 0; r < N; ++r) d += Q[r][c] * Q[r][p];
                for (int r = 0; r < N; ++r) Q[r][c] -= d * Q[r][p];
            }
            double s = 0;
            for (int r = 0; r < N; ++r) s += Q[r][c] * Q[r][c];
            for (int r = 0; r < N; ++r) Q[r][c] /= std::sqrt(s);
        }
}

// A = Q diag(lambda) Q^T.
void compose(const double Q[N][N], const double lambda[N], double A[N][N]) {
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j) {
            double s = 0;
            for (int k = 0; k < N; ++k) s += Q[i][k] * lambda[k] * Q[j][k];
            A[i][j] = s;
        }
}

double max_abs_diff(const double A[N][N], const double B[N][N]) {
    double m = 0;
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j) m = std::max(m, std::abs(A[i][j] - B[i][j]));
    return m;
}

TEST(PsdProjection, JacobiEigenDecompositionReconstructsMatrix) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> u(-5.0, 5.0);
    for (int trial = 0; trial < 50; ++trial) {
        double Q[N][N], lambda[N], A[N][N], work[N][N], V[N][N], ev[N];
        random_orthogonal(rng, Q);
        for (double& l : lambda) l = u(rng);
        if (trial % 3 == 0) lambda[1] = lambda[2] = lambda[3] = lambda[0]; // repeated
        compose(Q, lambda, A);
        std::copy(&A[0][0], &A[0][0] + N * N, &work[0][0]);
        symmetric_eigen_jacobi<N>(work, ev, V);
        // V orthonormal, A V = V diag(ev), and the eigenvalues are the ones put in.
        for (int i = 0; i < N; ++i)
            for (int j = 0; j < N; ++j) {
                double vtv = 0, av = 0;
                for (int k = 0; k < N; ++k) {
                    vtv += V[k][i] * V[k][j];
                    av += A[i][k] * V[k][j];
                }
                EXPECT_NEAR(vtv, i == j ? 1.0 : 0.0, 1e-12);
                EXPECT_NEAR(av, V[i][j] * ev[j], 1e-11);
            }
        std::sort(ev, ev + N);
        std::sort(lambda, lambda + N);
        for (int k = 0; k < N; ++k) EXPECT_NEAR(ev[k], lambda[k], 1e-11);
    }
}

TEST(PsdProjection, ClampsExactlyTheNegativeEigenvalues) {
    std::mt19937 rng(11);
    std::uniform_real_distribution<double> u(-3.0, 3.0);
    for (int trial = 0; trial < 50; ++trial) {
        double Q[N][N], lambda[N], clamped[N], A[N][N], expected[N][N];
        random_orthogonal(rng, Q);
        int negatives = 0;
        for (int k = 0; k < N; ++k) {
            lambda[k] = u(rng);
            if (trial % 5 == 0 && k < 4) lambda[k] = -1.5; // a repeated negative eigenvalue
            clamped[k] = std::max(lambda[k], 0.0);
            negatives += lambda[k] < 0;
        }
        compose(Q, lambda, A);
        for (int i = 0; i < N; ++i)
            for (int j = 0; j < i; ++j) A[i][j] = A[j][i]; // exactly symmetric input
        compose(Q, clamped, expected);
        EXPECT_EQ(project_psd<N>(A), negatives);
        EXPECT_LT(max_abs_diff(A, expected), 1e-11);
        for (int i = 0; i < N; ++i)
            for (int j = 0; j < N; ++j) EXPECT_EQ(A[i][j], A[j][i]);
        // Idempotent: a second projection finds nothing below -rounding and changes ~nothing.
        double again[N][N];
        std::copy(&A[0][0], &A[0][0] + N * N, &again[0][0]);
        project_psd<N>(again);
        EXPECT_LT(max_abs_diff(A, again), 1e-12);
    }
}

TEST(PsdProjection, PositiveDefiniteMatrixIsReturnedBitIdentical) {
    std::mt19937 rng(13);
    std::uniform_real_distribution<double> u(0.1, 4.0);
    for (int trial = 0; trial < 20; ++trial) {
        double Q[N][N], lambda[N], A[N][N], before[N][N];
        random_orthogonal(rng, Q);
        for (double& l : lambda) l = u(rng);
        compose(Q, lambda, A);
        for (int i = 0; i < N; ++i)
            for (int j = 0; j < i; ++j) A[i][j] = A[j][i]; // exactly symmetric input
        std::copy(&A[0][0], &A[0][0] + N * N, &before[0][0]);
        EXPECT_EQ(project_psd<N>(A), 0);
        EXPECT_EQ(max_abs_diff(A, before), 0.0);
    }
}

TEST(PsdProjection, ZeroDiagonalAndThreeByThree) {
    double Z[N][N] = {};
    EXPECT_EQ(project_psd<N>(Z), 0);
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j) EXPECT_EQ(Z[i][j], 0.0);
    double D[3][3] = {{2, 0, 0}, {0, -1, 0}, {0, 0, 0}};
    EXPECT_EQ(project_psd<3>(D), 1);
    EXPECT_NEAR(D[0][0], 2.0, 1e-15);
    EXPECT_NEAR(D[1][1], 0.0, 1e-15);
    // [[0, 1], [1, 0]] has eigenvalues +-1: projection gives [[1/2, 1/2], [1/2, 1/2]].
    double S[3][3] = {{0, 1, 0}, {1, 0, 0}, {0, 0, 1}};
    EXPECT_EQ(project_psd<3>(S), 1);
    EXPECT_NEAR(S[0][0], 0.5, 1e-15);
    EXPECT_NEAR(S[0][1], 0.5, 1e-15);
    EXPECT_NEAR(S[1][1], 0.5, 1e-15);
    EXPECT_NEAR(S[2][2], 1.0, 1e-15);
}

TEST(PsdProjection, FloatProjectionIsPsd) {
    std::mt19937 rng(17);
    std::uniform_real_distribution<double> u(-3.0, 3.0);
    for (int trial = 0; trial < 20; ++trial) {
        double Q[N][N], lambda[N], A[N][N];
        random_orthogonal(rng, Q);
        for (double& l : lambda) l = u(rng);
        compose(Q, lambda, A);
        float Af[N][N];
        for (int i = 0; i < N; ++i)
            for (int j = 0; j < N; ++j) Af[i][j] = float(A[i][j]);
        project_psd<N>(Af);
        // Eigenvalues of the float result, in double.
        double B[N][N], V[N][N], ev[N];
        for (int i = 0; i < N; ++i)
            for (int j = 0; j < N; ++j) B[i][j] = Af[i][j];
        symmetric_eigen_jacobi<N>(B, ev, V);
        for (double e : ev) EXPECT_GE(e, -1e-5);
    }
}

} // namespace
} // namespace edn

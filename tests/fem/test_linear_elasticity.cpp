#include "fem/linear_elasticity.hpp"
#include "support/random.hpp"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <memory>
#include <random>
#include <vector>

namespace edn {
namespace {

/// A random, reasonably shaped, positively oriented tet anywhere in [-3, 3]^3.
void random_tet(std::mt19937& rng, double X[4][3]) {
    test::random_tet(rng, X, {.scale = 0.8, .noise = 0.2, .translation = 3.0, .axis_offset = 0});
}

constexpr LameParameters<double> kLame = lame_from_young_poisson(2.5e3, 0.32);

// Element matrices are large for p = 3 (20 x 20 x 9 doubles): keep them on the heap.
template <int P> struct Element {
    static constexpr int m = lagrange_tet_num_nodes(P);
    double X[4][3];
    double K[m][m][3][3];
    double nodes[m][3];
};

template <int P> std::unique_ptr<Element<P>> make_element(unsigned seed) {
    auto e = std::make_unique<Element<P>>();
    std::mt19937 rng(seed);
    random_tet(rng, e->X);
    linear_elastic_stiffness<P>(
        e->X, kLame, quadrature_for_degree<double>(stiffness_quadrature_degree(P)), e->K);
    element_node_positions<P>(e->X, e->nodes);
    return e;
}

// Dense 3m x 3m copy of block storage, dof 3a + r.
template <int M> std::vector<double> dense(const double K[M][M][3][3]) {
    const int n = 3 * M;
    std::vector<double> A(n * n);
    for (int a = 0; a < M; ++a)
        for (int b = 0; b < M; ++b)
            for (int r = 0; r < 3; ++r)
                for (int c = 0; c < 3; ++c) A[(3 * a + r) * n + 3 * b + c] = K[a][b][r][c];
    return A;
}

// Eigenvalues of a symmetric n x n matrix by cyclic Jacobi rotations.
std::vector<double> symmetric_eigenvalues(std::vector<double> A, int n) {
    for (int sweep = 0; sweep < 100; ++sweep) {
        double off = 0, total = 0;
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) {
                total += A[i * n + j] * A[i * n + j];
                if (i != j) off += A[i * n + j] * A[i * n + j];
            }
        if (off <= 1e-30 * total) break;
        for (int p = 0; p < n; ++p)
            for (int q = p + 1; q < n; ++q) {
                const double apq = A[p * n + q];
                if (apq == 0) continue;
                const double theta = (A[q * n + q] - A[p * n + p]) / (2 * apq);
                const double t =
                    (theta >= 0 ? 1.0 : -1.0) / (std::abs(theta) + std::sqrt(theta * theta + 1));
                const double c = 1 / std::sqrt(t * t + 1), s = t * c;
                for (int k = 0; k < n; ++k) { // columns p, q
                    const double akp = A[k * n + p], akq = A[k * n + q];
                    A[k * n + p] = c * akp - s * akq;
                    A[k * n + q] = s * akp + c * akq;
                }
                for (int k = 0; k < n; ++k) { // rows p, q
                    const double apk = A[p * n + k], aqk = A[q * n + k];
                    A[p * n + k] = c * apk - s * aqk;
                    A[q * n + k] = s * apk + c * aqk;
                }
            }
    }
    std::vector<double> ev(n);
    for (int i = 0; i < n; ++i) ev[i] = A[i * n + i];
    std::sort(ev.begin(), ev.end());
    return ev;
}

TEST(FemLinearElasticity, JacobiEigenSolverSelfCheck) {
    // diag(1, 2, 3) rotated: eigenvalues must come back.
    const double c = std::cos(0.3), s = std::sin(0.3);
    const double R[3][3] = {{c, -s, 0}, {s, c, 0}, {0, 0, 1}};
    const double d[3] = {3, 1, 2};
    std::vector<double> A(9, 0.0);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            for (int k = 0; k < 3; ++k) A[i * 3 + j] += R[i][k] * d[k] * R[j][k];
    const std::vector<double> ev = symmetric_eigenvalues(A, 3);
    EXPECT_NEAR(ev[0], 1, 1e-12);
    EXPECT_NEAR(ev[1], 2, 1e-12);
    EXPECT_NEAR(ev[2], 3, 1e-12);
}

TEST(FemLinearElasticity, LameParameters) {
    const double E = 1000, nu = 0.3;
    const LameParameters<double> l = lame_from_young_poisson(E, nu);
    // Inverse relations: E = mu (3 lambda + 2 mu) / (lambda + mu), nu = lambda / (2 (lambda + mu)).
    EXPECT_NEAR(l.mu * (3 * l.lambda + 2 * l.mu) / (l.lambda + l.mu), E, 1e-9);
    EXPECT_NEAR(l.lambda / (2 * (l.lambda + l.mu)), nu, 1e-14);
}

template <int P> void check_symmetry_and_spectrum() {
    SCOPED_TRACE(testing::Message() << "order " << P);
    constexpr int m = lagrange_tet_num_nodes(P);
    auto e = make_element<P>(100 + P);
    double kmax = 0;
    for (int a = 0; a < m; ++a)
        for (int b = 0; b < m; ++b)
            for (int r = 0; r < 3; ++r)
                for (int c = 0; c < 3; ++c) kmax = std::max(kmax, std::abs(e->K[a][b][r][c]));
    for (int a = 0; a < m; ++a)
        for (int b = 0; b < m; ++b)
            for (int r = 0; r < 3; ++r)
                for (int c = 0; c < 3; ++c)
                    EXPECT_NEAR(e->K[a][b][r][c], e->K[b][a][c][r], 1e-13 * kmax);
    const std::vector<double> ev = symmetric_eigenvalues(dense<m>(e->K), 3 * m);
    const double lmax = ev.back();
    ASSERT_GT(lmax, 0);
    int zero = 0;
    for (double l : ev) {
        EXPECT_GT(l, -1e-10 * lmax) << "negative eigenvalue";
        if (std::abs(l) < 1e-10 * lmax) ++zero;
    }
    EXPECT_EQ(zero, 6) << "rigid modes only in the null space";
    EXPECT_GT(ev[6], 1e-6 * lmax);
}

TEST(FemLinearElasticity, StiffnessSymmetricPsdWithSixZeroModes) {
    check_symmetry_and_spectrum<1>();
    check_symmetry_and_spectrum<2>();
    check_symmetry_and_spectrum<3>();
}

template <int P> void check_rigid_modes() {
    SCOPED_TRACE(testing::Message() << "order " << P);
    constexpr int m = lagrange_tet_num_nodes(P);
    auto e = make_element<P>(200 + P);
    double kmax = 0;
    for (int a = 0; a < m; ++a)
        for (int b = 0; b < m; ++b)
            for (int r = 0; r < 3; ++r)
                for (int c = 0; c < 3; ++c) kmax = std::max(kmax, std::abs(e->K[a][b][r][c]));
    for (int mode = 0; mode < 6; ++mode) {
        // Translations e_k, linearized rotations u = w x X with w = e_k.
        double u[m][3], f[m][3];
        double unorm = 0;
        for (int a = 0; a < m; ++a) {
            Vec3T<double> v = vec3_zero<double>();
            if (mode < 3) {
                v[mode] = 1;
            } else {
                Vec3T<double> w = vec3_zero<double>();
                w[mode - 3] = 1;
                v = cross(w, load_vec3(e->nodes[a]));
            }
            for (int r = 0; r < 3; ++r) {
                u[a][r] = v[r];
                unorm = std::max(unorm, std::abs(v[r]));
            }
        }
        element_block_matvec<m>(e->K, u, f);
        for (int a = 0; a < m; ++a)
            for (int r = 0; r < 3; ++r)
                EXPECT_NEAR(f[a][r], 0.0, 1e-10 * kmax * unorm * 3 * m) << "mode " << mode;
    }
}

TEST(FemLinearElasticity, RigidModesInNullSpace) {
    check_rigid_modes<1>();
    check_rigid_modes<2>();
    check_rigid_modes<3>();
}

template <int P> void check_energy_and_gradient() {
    SCOPED_TRACE(testing::Message() << "order " << P);
    constexpr int m = lagrange_tet_num_nodes(P);
    auto e = make_element<P>(300 + P);
    const QuadratureTet<double> rule =
        quadrature_for_degree<double>(stiffness_quadrature_degree(P));
    std::mt19937 rng(301 + P);
    std::uniform_real_distribution<double> dist(-0.1, 0.1);
    double u[m][3], f[m][3], Ku[m][3];
    for (int a = 0; a < m; ++a)
        for (int r = 0; r < 3; ++r) u[a][r] = dist(rng);
    const double W = linear_elastic_energy<P>(e->X, kLame, rule, u);
    linear_elastic_energy_gradient<P>(e->X, kLame, rule, u, f);
    element_block_matvec<m>(e->K, u, Ku);
    // W = 1/2 u^T K u, f = K u (three independent code paths).
    double uKu = 0, fscale = 0;
    for (int a = 0; a < m; ++a)
        for (int r = 0; r < 3; ++r) {
            uKu += u[a][r] * Ku[a][r];
            fscale = std::max(fscale, std::abs(Ku[a][r]));
        }
    EXPECT_GT(W, 0);
    EXPECT_NEAR(W, 0.5 * uKu, 1e-12 * W);
    for (int a = 0; a < m; ++a)
        for (int r = 0; r < 3; ++r) EXPECT_NEAR(f[a][r], Ku[a][r], 1e-11 * fscale);
    // f = dW/du by central differences (exact up to rounding for a quadratic W).
    const double h = 1e-5;
    for (int a = 0; a < m; ++a)
        for (int r = 0; r < 3; ++r) {
            const double keep = u[a][r];
            u[a][r] = keep + h;
            const double Wp = linear_elastic_energy<P>(e->X, kLame, rule, u);
            u[a][r] = keep - h;
            const double Wm = linear_elastic_energy<P>(e->X, kLame, rule, u);
            u[a][r] = keep;
            EXPECT_NEAR(f[a][r], (Wp - Wm) / (2 * h), 1e-6 * fscale)
                << "node " << a << " dir " << r;
        }
}

TEST(FemLinearElasticity, EnergyGradientAndStiffnessAgree) {
    check_energy_and_gradient<1>();
    check_energy_and_gradient<2>();
    check_energy_and_gradient<3>();
}

template <int P> void check_stiffness_fd_of_force() {
    // K[a][b][r][c] = d f_a[r] / d u_b[c]: checks the block index convention directly.
    SCOPED_TRACE(testing::Message() << "order " << P);
    constexpr int m = lagrange_tet_num_nodes(P);
    auto e = make_element<P>(400 + P);
    const QuadratureTet<double> rule =
        quadrature_for_degree<double>(stiffness_quadrature_degree(P));
    double u[m][3] = {}, fp[m][3], fm[m][3];
    double kmax = 0;
    for (int a = 0; a < m; ++a)
        for (int b = 0; b < m; ++b)
            for (int r = 0; r < 3; ++r)
                for (int c = 0; c < 3; ++c) kmax = std::max(kmax, std::abs(e->K[a][b][r][c]));
    const double h = 1e-4;
    for (int b = 0; b < m; ++b)
        for (int c = 0; c < 3; ++c) {
            u[b][c] = h;
            linear_elastic_energy_gradient<P>(e->X, kLame, rule, u, fp);
            u[b][c] = -h;
            linear_elastic_energy_gradient<P>(e->X, kLame, rule, u, fm);
            u[b][c] = 0;
            for (int a = 0; a < m; ++a)
                for (int r = 0; r < 3; ++r)
                    EXPECT_NEAR(e->K[a][b][r][c], (fp[a][r] - fm[a][r]) / (2 * h), 1e-9 * kmax);
        }
}

TEST(FemLinearElasticity, StiffnessIsForceDerivative) {
    check_stiffness_fd_of_force<1>();
    check_stiffness_fd_of_force<2>();
    check_stiffness_fd_of_force<3>();
}

template <int P> void check_patch_test() {
    SCOPED_TRACE(testing::Message() << "order " << P);
    constexpr int m = lagrange_tet_num_nodes(P);
    auto e = make_element<P>(500 + P);
    std::mt19937 rng(501 + P);
    std::uniform_real_distribution<double> dist(-0.05, 0.05);
    Mat3<double> A{};
    double bvec[3];
    for (int r = 0; r < 3; ++r) {
        bvec[r] = dist(rng);
        for (int c = 0; c < 3; ++c) A.m[r][c] = dist(rng);
    }
    double u[m][3];
    for (int a = 0; a < m; ++a)
        for (int r = 0; r < 3; ++r)
            u[a][r] = A.m[r][0] * e->nodes[a][0] + A.m[r][1] * e->nodes[a][1] +
                      A.m[r][2] * e->nodes[a][2] + bvec[r];
    // Analytic stress of u = A X + b: 2 mu sym(A) + lambda tr(A) I.
    double sigma_exact[3][3];
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c)
            sigma_exact[r][c] = kLame.mu * (A.m[r][c] + A.m[c][r]) +
                                (r == c ? kLame.lambda * (A.m[0][0] + A.m[1][1] + A.m[2][2]) : 0.0);
    const double smax = 2 * kLame.mu * 0.05 * 3 + kLame.lambda * 0.15;
    const TetGeometry<double> g = tet_geometry(e->X);
    const QuadratureTet<double> rule = quadrature_for_degree<double>(6);
    for (int q = 0; q < rule.num_points; ++q) {
        double grad[m][3];
        shape_gradients<P>(g, rule.bary[q], grad);
        const Mat3<double> H = displacement_gradient<m>(grad, u);
        const Mat3<double> sigma = linear_elastic_stress(H, kLame);
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c) {
                EXPECT_NEAR(H.m[r][c], A.m[r][c], 1e-12);
                EXPECT_NEAR(sigma.m[r][c], sigma_exact[r][c], 1e-12 * smax);
            }
        // The displacement is interpolated exactly, not only its gradient.
        double N[m], x[3];
        LagrangeTet<P, double>::eval(rule.bary[q], N);
        barycentric_to_physical(e->X, rule.bary[q], x);
        for (int r = 0; r < 3; ++r) {
            double uh = 0;
            for (int a = 0; a < m; ++a) uh += N[a] * u[a][r];
            EXPECT_NEAR(uh, A.m[r][0] * x[0] + A.m[r][1] * x[1] + A.m[r][2] * x[2] + bvec[r],
                        1e-13);
        }
    }
    // Energy of a constant-strain field: V psi(A).
    const double W = linear_elastic_energy<P>(
        e->X, kLame, quadrature_for_degree<double>(stiffness_quadrature_degree(P)), u);
    EXPECT_NEAR(W, tet_signed_volume(e->X) * linear_elastic_energy_density(A, kLame), 1e-12 * W);
}

TEST(FemLinearElasticity, PatchTestLinearField) {
    check_patch_test<1>();
    check_patch_test<2>();
    check_patch_test<3>();
}

TEST(FemLinearElasticity, ClosedFormTet4MatchesQuadrature) {
    for (unsigned seed = 0; seed < 5; ++seed) {
        auto e = make_element<1>(600 + seed);
        double K4[4][4][3][3];
        linear_elastic_stiffness_tet4(e->X, kLame, K4);
        double kmax = 0;
        for (int a = 0; a < 4; ++a)
            for (int b = 0; b < 4; ++b)
                for (int r = 0; r < 3; ++r)
                    for (int c = 0; c < 3; ++c) kmax = std::max(kmax, std::abs(K4[a][b][r][c]));
        for (int a = 0; a < 4; ++a)
            for (int b = 0; b < 4; ++b)
                for (int r = 0; r < 3; ++r)
                    for (int c = 0; c < 3; ++c)
                        EXPECT_NEAR(K4[a][b][r][c], e->K[a][b][r][c], 1e-13 * kmax);
    }
}

template <int P> void check_quadrature_degree_suffices() {
    // A richer rule must not change K or M: the chosen degrees integrate them exactly.
    SCOPED_TRACE(testing::Message() << "order " << P);
    constexpr int m = lagrange_tet_num_nodes(P);
    auto e = make_element<P>(700 + P);
    auto rich = std::make_unique<Element<P>>();
    linear_elastic_stiffness<P>(e->X, kLame, quadrature_for_degree<double>(9), rich->K);
    double kmax = 0;
    for (int a = 0; a < m; ++a)
        for (int b = 0; b < m; ++b)
            for (int r = 0; r < 3; ++r)
                for (int c = 0; c < 3; ++c) kmax = std::max(kmax, std::abs(e->K[a][b][r][c]));
    for (int a = 0; a < m; ++a)
        for (int b = 0; b < m; ++b)
            for (int r = 0; r < 3; ++r)
                for (int c = 0; c < 3; ++c)
                    EXPECT_NEAR(e->K[a][b][r][c], rich->K[a][b][r][c], 1e-12 * kmax);
    double M[m][m], Mrich[m][m];
    consistent_mass<P>(e->X, 1.0, quadrature_for_degree<double>(mass_quadrature_degree(P)), M);
    consistent_mass<P>(e->X, 1.0, quadrature_for_degree<double>(9), Mrich);
    for (int a = 0; a < m; ++a)
        for (int b = 0; b < m; ++b) EXPECT_NEAR(M[a][b], Mrich[a][b], 1e-14);
}

TEST(FemLinearElasticity, QuadratureDegreesAreExact) {
    check_quadrature_degree_suffices<1>();
    check_quadrature_degree_suffices<2>();
    check_quadrature_degree_suffices<3>();
}

template <int P> void check_mass() {
    SCOPED_TRACE(testing::Message() << "order " << P);
    constexpr int m = lagrange_tet_num_nodes(P);
    auto e = make_element<P>(800 + P);
    const double rho = 1.3e3;
    const double V = tet_signed_volume(e->X);
    double M[m][m];
    consistent_mass<P>(e->X, rho, quadrature_for_degree<double>(mass_quadrature_degree(P)), M);
    double total = 0;
    for (int a = 0; a < m; ++a)
        for (int b = 0; b < m; ++b) {
            total += M[a][b];
            EXPECT_NEAR(M[a][b], M[b][a], 1e-15 * rho * V);
        }
    EXPECT_NEAR(total, rho * V, 1e-12 * rho * V);
    // The mass matrix is positive definite (Gram matrix of independent functions).
    std::vector<double> dense_m(m * m);
    for (int a = 0; a < m; ++a)
        for (int b = 0; b < m; ++b) dense_m[a * m + b] = M[a][b];
    EXPECT_GT(symmetric_eigenvalues(dense_m, m).front(), 0.0);
    // Interpolated linear field x: sum_ab M_ab x_b = rho integral N_a x.
    // Summed over a: rho integral x = rho V centroid.
    double first_moment = 0;
    for (int a = 0; a < m; ++a)
        for (int b = 0; b < m; ++b) first_moment += M[a][b] * e->nodes[b][0];
    const double centroid_x = (e->X[0][0] + e->X[1][0] + e->X[2][0] + e->X[3][0]) / 4;
    EXPECT_NEAR(first_moment, rho * V * centroid_x, 1e-11 * rho * V * (1 + std::abs(centroid_x)));
}

TEST(FemLinearElasticity, ConsistentMass) {
    check_mass<1>();
    check_mass<2>();
    check_mass<3>();
    auto e = make_element<1>(900);
    const double rho = 7.0;
    const double V = tet_signed_volume(e->X);
    double M4[4][4], Mq[4][4];
    consistent_mass_tet4(e->X, rho, M4);
    consistent_mass<1>(e->X, rho, quadrature_for_degree<double>(2), Mq);
    for (int a = 0; a < 4; ++a)
        for (int b = 0; b < 4; ++b) {
            EXPECT_NEAR(M4[a][b], rho * V * (a == b ? 2.0 : 1.0) / 20.0, 1e-14 * rho * V);
            EXPECT_NEAR(Mq[a][b], M4[a][b], 1e-14 * rho * V);
        }
}

TEST(FemLinearElasticity, InvertedTetUsesAbsoluteVolume) {
    // Swapping two vertices flips det J; energy and stiffness magnitude must not change sign.
    auto e = make_element<1>(1000);
    double Xs[4][3];
    for (int v = 0; v < 4; ++v)
        for (int r = 0; r < 3; ++r) Xs[v][r] = e->X[v == 1 ? 2 : (v == 2 ? 1 : v)][r];
    double Ks[4][4][3][3];
    linear_elastic_stiffness_tet4(Xs, kLame, Ks);
    const int perm[4] = {0, 2, 1, 3};
    for (int a = 0; a < 4; ++a)
        for (int b = 0; b < 4; ++b)
            for (int r = 0; r < 3; ++r)
                for (int c = 0; c < 3; ++c)
                    EXPECT_NEAR(Ks[a][b][r][c], e->K[perm[a]][perm[b]][r][c],
                                1e-12 * std::abs(e->K[0][0][0][0]));
}

TEST(FemLinearElasticity, FloatMatchesDouble) {
    // The GPU instantiation (float) agrees with the double reference to float precision.
    auto e = make_element<2>(1100);
    float Xf[4][3];
    for (int v = 0; v < 4; ++v)
        for (int r = 0; r < 3; ++r) Xf[v][r] = float(e->X[v][r]);
    const LameParameters<float> lf{float(kLame.lambda), float(kLame.mu)};
    auto Kf = std::make_unique<float[]>(10 * 10 * 9);
    auto* K = reinterpret_cast<float(*)[10][3][3]>(Kf.get());
    linear_elastic_stiffness<2>(Xf, lf, quadrature_for_degree<float>(2), K);
    double kmax = 0;
    for (int a = 0; a < 10; ++a)
        for (int b = 0; b < 10; ++b)
            for (int r = 0; r < 3; ++r)
                for (int c = 0; c < 3; ++c) kmax = std::max(kmax, std::abs(e->K[a][b][r][c]));
    for (int a = 0; a < 10; ++a)
        for (int b = 0; b < 10; ++b)
            for (int r = 0; r < 3; ++r)
                for (int c = 0; c < 3; ++c)
                    EXPECT_NEAR(K[a][b][r][c], e->K[a][b][r][c], 1e-4 * kmax);
}

} // namespace
} // namespace edn

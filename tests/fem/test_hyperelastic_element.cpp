#include "fem/corotational.hpp"
#include "fem/hyperelastic_element.hpp"
#include "fem/neo_hookean.hpp"
#include "support/random.hpp"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace edn {
namespace {

using test::random_rotation;

/// The random tetrahedra of these tests: small noise, moved off the axes.
void random_tet(std::mt19937& rng, double X[4][3]) {
    test::random_tet(rng, X, {.scale = 0.7, .noise = 0.15, .translation = 0, .axis_offset = 0.3});
}

constexpr LameParameters<double> kLame = lame_from_young_poisson(1.0e4, 0.3);

// How the current positions are made from the rest nodes: x = A X + t + noise on all nodes.
enum class Regime { moderate, near_inverted, inverted };

template <int P> struct Element {
    static constexpr int m = lagrange_tet_num_nodes(P);
    double X[4][3];
    double nodes[m][3]; // rest node positions
    double x[m][3];     // current node positions
    TetGeometry<double> rest;
    QuadratureTet<double> rule;
};

template <int P> std::unique_ptr<Element<P>> make_element(unsigned seed, Regime regime) {
    auto e = std::make_unique<Element<P>>();
    std::mt19937 rng(seed);
    random_tet(rng, e->X);
    element_node_positions<P>(e->X, e->nodes);
    e->rest = tet_geometry(e->X);
    e->rule = hyperelastic_quadrature<double>(P);
    double s2 = 0.9;
    if (regime == Regime::near_inverted) s2 = 1e-2;
    if (regime == Regime::inverted) s2 = -0.4;
    const Mat3<double> D{{{1.2, 0, 0}, {0, 0.8, 0}, {0, 0, s2}}};
    const Mat3<double> A = random_rotation(rng) * D * random_rotation(rng);
    // Node noise makes F vary over the element for p >= 2 (and is small enough to keep the
    // near-inverted and inverted states in their regime).
    const double amp = regime == Regime::near_inverted ? 1e-4 : 0.03;
    std::uniform_real_distribution<double> noise(-amp, amp);
    for (int a = 0; a < Element<P>::m; ++a) {
        const Vec3T<double> y = A * load_vec3(e->nodes[a]);
        for (int r = 0; r < 3; ++r) e->x[a][r] = y[r] + 0.5 * r + noise(rng);
    }
    return e;
}

template <int M> using Blocks = double[M][M][3][3];
// Element matrices are large for p = 3 (20 x 20 x 9 doubles): keep them on the heap.
template <int M> struct BlockMatrix { Blocks<M> k; };

template <int P, class Material>
void check_element_derivatives(const Material& mat, const Element<P>& e, const char* what) {
    constexpr int m = Element<P>::m;
    auto K = std::make_unique<BlockMatrix<m>>();
    double f[m][3];
    hyperelastic_energy_gradient<P>(mat, e.rest, e.rule, e.x, f);
    hyperelastic_energy_hessian<P>(mat, e.rest, e.rule, e.x, false, K->k);
    double fscale = 0, kscale = 0;
    for (int a = 0; a < m; ++a)
        for (int r = 0; r < 3; ++r) {
            fscale = std::max(fscale, std::abs(f[a][r]));
            for (int b = 0; b < m; ++b)
                for (int c = 0; c < 3; ++c) kscale = std::max(kscale, std::abs(K->k[a][b][r][c]));
        }
    const double h = 1e-6;
    for (int b = 0; b < m; ++b)
        for (int c = 0; c < 3; ++c) {
            double xp[m][3], xm[m][3];
            std::copy(&e.x[0][0], &e.x[0][0] + 3 * m, &xp[0][0]);
            std::copy(&e.x[0][0], &e.x[0][0] + 3 * m, &xm[0][0]);
            xp[b][c] += h;
            xm[b][c] -= h;
            const double dW = (hyperelastic_energy<P>(mat, e.rest, e.rule, xp) -
                               hyperelastic_energy<P>(mat, e.rest, e.rule, xm)) /
                              (2 * h);
            EXPECT_NEAR(dW, f[b][c], 1e-6 * std::max(fscale, 1.0)) << what << " node " << b;
            double fp[m][3], fm[m][3];
            hyperelastic_energy_gradient<P>(mat, e.rest, e.rule, xp, fp);
            hyperelastic_energy_gradient<P>(mat, e.rest, e.rule, xm, fm);
            for (int a = 0; a < m; ++a)
                for (int r = 0; r < 3; ++r)
                    EXPECT_NEAR((fp[a][r] - fm[a][r]) / (2 * h), K->k[a][b][r][c],
                                1e-6 * std::max(kscale, 1.0))
                        << what << " K[" << a << "][" << b << "][" << r << "][" << c << "]";
        }
}

template <int P> void check_all_materials(unsigned seed) {
    for (Regime regime : {Regime::moderate, Regime::near_inverted, Regime::inverted}) {
        const auto e = make_element<P>(seed, regime);
        check_element_derivatives<P>(NeoHookean<double>{kLame}, *e, "neo-Hookean");
        check_element_derivatives<P>(Corotational<double>{kLame}, *e, "co-rotational");
        check_element_derivatives<P>(LinearElastic<double>{kLame}, *e, "linear");
    }
}

TEST(HyperelasticElement, FiniteDifferencesP1) {
    check_all_materials<1>(1);
}
TEST(HyperelasticElement, FiniteDifferencesP2) {
    check_all_materials<2>(2);
}
TEST(HyperelasticElement, FiniteDifferencesP3) {
    check_all_materials<3>(3);
}

// Rest (x = X) and rigid motions of it: zero energy and zero force for the rotation-invariant
// materials; the Hessian at rest equals the linear-elastic stiffness with the same rule.
template <int P> void check_rest_and_rigid(unsigned seed) {
    constexpr int m = lagrange_tet_num_nodes(P);
    auto e = make_element<P>(seed, Regime::moderate);
    std::mt19937 rng(seed);
    const Mat3<double> Q = random_rotation(rng);
    double rigid[m][3];
    for (int a = 0; a < m; ++a) {
        const Vec3T<double> y = Q * load_vec3(e->nodes[a]);
        for (int r = 0; r < 3; ++r) rigid[a][r] = y[r] + 1.5 - r;
    }
    auto Klin = std::make_unique<BlockMatrix<m>>();
    linear_elastic_stiffness<P>(e->X, kLame, e->rule, Klin->k);
    auto check = [&](const auto& mat, bool rotation_invariant, const char* what) {
        auto K = std::make_unique<BlockMatrix<m>>();
        double f[m][3], W = 1;
        hyperelastic_element<P>(mat, e->rest, e->rule, e->nodes, false, &W, f, K->k);
        EXPECT_NEAR(W, 0.0, 1e-12 * kLame.lambda) << what;
        for (int a = 0; a < m; ++a)
            for (int r = 0; r < 3; ++r) {
                EXPECT_NEAR(f[a][r], 0.0, 1e-10 * kLame.lambda) << what;
                for (int b = 0; b < m; ++b)
                    for (int c = 0; c < 3; ++c)
                        EXPECT_NEAR(K->k[a][b][r][c], Klin->k[a][b][r][c], 1e-9 * kLame.lambda)
                            << what;
            }
        if (!rotation_invariant) return;
        hyperelastic_element<P>(mat, e->rest, e->rule, rigid, false, &W, f, K->k);
        EXPECT_NEAR(W, 0.0, 1e-12 * kLame.lambda) << what;
        for (int a = 0; a < m; ++a)
            for (int r = 0; r < 3; ++r) EXPECT_NEAR(f[a][r], 0.0, 1e-9 * kLame.lambda) << what;
        // Rotation invariance of the energy of a deformed state.
        double moved[m][3];
        for (int a = 0; a < m; ++a) {
            const Vec3T<double> y = Q * load_vec3(e->x[a]);
            for (int r = 0; r < 3; ++r) moved[a][r] = y[r] - 2.0;
        }
        const double W0 = hyperelastic_energy<P>(mat, e->rest, e->rule, e->x);
        const double W1 = hyperelastic_energy<P>(mat, e->rest, e->rule, moved);
        EXPECT_NEAR(W0, W1, 1e-10 * std::abs(W0)) << what;
    };
    check(NeoHookean<double>{kLame}, true, "neo-Hookean");
    check(Corotational<double>{kLame}, true, "co-rotational");
    check(LinearElastic<double>{kLame}, false, "linear");
}

TEST(HyperelasticElement, RestRigidMotionAndLinearLimitP1) {
    check_rest_and_rigid<1>(11);
}
TEST(HyperelasticElement, RestRigidMotionAndLinearLimitP2) {
    check_rest_and_rigid<2>(12);
}
TEST(HyperelasticElement, RestRigidMotionAndLinearLimitP3) {
    check_rest_and_rigid<3>(13);
}

// The linear material through the generic element equals linear_elasticity.hpp on u = x - X.
template <int P> void check_linear_matches_reference(unsigned seed) {
    constexpr int m = lagrange_tet_num_nodes(P);
    auto e = make_element<P>(seed, Regime::moderate);
    double u[m][3];
    for (int a = 0; a < m; ++a)
        for (int r = 0; r < 3; ++r) u[a][r] = e->x[a][r] - e->nodes[a][r];
    const LinearElastic<double> mat{kLame};
    const double W = hyperelastic_energy<P>(mat, e->rest, e->rule, e->x);
    EXPECT_NEAR(W, linear_elastic_energy<P>(e->X, kLame, e->rule, u), 1e-10 * std::abs(W));
    double f[m][3], fref[m][3];
    hyperelastic_energy_gradient<P>(mat, e->rest, e->rule, e->x, f);
    linear_elastic_energy_gradient<P>(e->X, kLame, e->rule, u, fref);
    for (int a = 0; a < m; ++a)
        for (int r = 0; r < 3; ++r) EXPECT_NEAR(f[a][r], fref[a][r], 1e-9 * kLame.lambda);
}

TEST(HyperelasticElement, LinearMaterialMatchesLinearElasticity) {
    check_linear_matches_reference<1>(21);
    check_linear_matches_reference<2>(22);
    check_linear_matches_reference<3>(23);
}

// Smallest and largest eigenvalue of the dense 3m x 3m element matrix.
template <int M> void extreme_eigenvalues(const Blocks<M>& K, double& lo, double& hi) {
    constexpr int n = 3 * M;
    auto A = std::make_unique<double[][n]>(n);
    auto V = std::make_unique<double[][n]>(n);
    double ev[n];
    for (int a = 0; a < M; ++a)
        for (int b = 0; b < M; ++b)
            for (int r = 0; r < 3; ++r)
                for (int c = 0; c < 3; ++c) A[3 * a + r][3 * b + c] = K[a][b][r][c];
    symmetric_eigen_jacobi<n>(A.get(), ev, V.get(), 100);
    lo = *std::min_element(ev, ev + n);
    hi = *std::max_element(ev, ev + n);
}

template <int P, class Material>
void check_symmetry_and_projection(const Material& mat, unsigned seed, const char* what) {
    constexpr int m = lagrange_tet_num_nodes(P);
    int indefinite = 0;
    for (Regime regime : {Regime::moderate, Regime::near_inverted, Regime::inverted}) {
        auto e = make_element<P>(seed, regime);
        auto K = std::make_unique<BlockMatrix<m>>();
        auto Kp = std::make_unique<BlockMatrix<m>>();
        hyperelastic_energy_hessian<P>(mat, e->rest, e->rule, e->x, false, K->k);
        hyperelastic_energy_hessian<P>(mat, e->rest, e->rule, e->x, true, Kp->k);
        double lo, hi, plo, phi;
        extreme_eigenvalues<m>(K->k, lo, hi);
        extreme_eigenvalues<m>(Kp->k, plo, phi);
        for (int a = 0; a < m; ++a)
            for (int b = 0; b < m; ++b)
                for (int r = 0; r < 3; ++r)
                    for (int c = 0; c < 3; ++c) {
                        EXPECT_NEAR(K->k[a][b][r][c], K->k[b][a][c][r], 1e-12 * hi) << what;
                        EXPECT_NEAR(Kp->k[a][b][r][c], Kp->k[b][a][c][r], 1e-12 * phi) << what;
                    }
        EXPECT_GE(plo, -1e-10 * phi) << what;
        indefinite += lo < -1e-8 * hi;
    }
    // The rest state (PSD tangent at every point) is left as it is by the projection.
    auto e = make_element<P>(seed, Regime::moderate);
    auto K = std::make_unique<BlockMatrix<m>>();
    auto Kp = std::make_unique<BlockMatrix<m>>();
    hyperelastic_energy_hessian<P>(mat, e->rest, e->rule, e->nodes, false, K->k);
    hyperelastic_energy_hessian<P>(mat, e->rest, e->rule, e->nodes, true, Kp->k);
    for (int a = 0; a < m; ++a)
        for (int b = 0; b < m; ++b)
            for (int r = 0; r < 3; ++r)
                for (int c = 0; c < 3; ++c)
                    EXPECT_NEAR(K->k[a][b][r][c], Kp->k[a][b][r][c], 1e-9 * kLame.lambda) << what;
    if (std::string(what) != "linear") {
        EXPECT_GT(indefinite, 0) << what; // the projection had something to do
    }
}

template <int P> void check_projection_all(unsigned seed) {
    check_symmetry_and_projection<P>(NeoHookean<double>{kLame}, seed, "neo-Hookean");
    check_symmetry_and_projection<P>(Corotational<double>{kLame}, seed, "co-rotational");
    check_symmetry_and_projection<P>(LinearElastic<double>{kLame}, seed, "linear");
}

TEST(HyperelasticElement, SymmetricHessianAndPsdProjectionP1) {
    check_projection_all<1>(31);
}
TEST(HyperelasticElement, SymmetricHessianAndPsdProjectionP2) {
    check_projection_all<2>(32);
}
TEST(HyperelasticElement, SymmetricHessianAndPsdProjectionP3) {
    check_projection_all<3>(33);
}

TEST(HyperelasticElement, CollapsedAndInvertedElementsStayFinite) {
    constexpr int m = lagrange_tet_num_nodes(2);
    auto e = make_element<2>(41, Regime::moderate);
    std::mt19937 rng(41);
    std::uniform_real_distribution<double> u(-2, 2);
    for (int trial = 0; trial < 20; ++trial) {
        double x[m][3];
        for (int a = 0; a < m; ++a)
            for (int r = 0; r < 3; ++r)
                x[a][r] = trial == 0 ? 0.0 : (trial == 1 ? e->nodes[a][0] : u(rng));
        auto K = std::make_unique<BlockMatrix<m>>();
        double f[m][3], W = 0;
        for (int project = 0; project < 2; ++project) {
            hyperelastic_element<2>(NeoHookean<double>{kLame}, e->rest, e->rule, x, project == 1,
                                    &W, f, K->k);
            EXPECT_TRUE(std::isfinite(W));
            hyperelastic_element<2>(Corotational<double>{kLame}, e->rest, e->rule, x, project == 1,
                                    &W, f, K->k);
            EXPECT_TRUE(std::isfinite(W));
            for (int a = 0; a < m; ++a)
                for (int r = 0; r < 3; ++r) {
                    EXPECT_TRUE(std::isfinite(f[a][r]));
                    for (int b = 0; b < m; ++b)
                        for (int c = 0; c < 3; ++c) EXPECT_TRUE(std::isfinite(K->k[a][b][r][c]));
                }
        }
    }
}

// Exact integral of L0^a0 L1^a1 L2^a2 L3^a3 over the reference tet (volume 1/6).
double monomial_integral(const int alpha[4]) {
    auto fact = [](int n) {
        double r = 1;
        for (int i = 2; i <= n; ++i) r *= i;
        return r;
    };
    return fact(alpha[0]) * fact(alpha[1]) * fact(alpha[2]) * fact(alpha[3]) /
           fact(alpha[0] + alpha[1] + alpha[2] + alpha[3] + 3);
}

TEST(HyperelasticElement, QuadratureRulesArePositiveAndExact) {
    for (int order = 1; order <= 3; ++order) {
        const QuadratureTet<double> rule = hyperelastic_quadrature<double>(order);
        ASSERT_GT(rule.num_points, 0);
        EXPECT_GE(rule.degree, 2 * (order - 1));
        EXPECT_EQ(rule.degree >= hyperelastic_quadrature_degree(order), true);
        double sum = 0;
        for (int q = 0; q < rule.num_points; ++q) {
            EXPECT_GT(rule.weight[q], 0.0);
            sum += rule.weight[q];
            double bsum = 0;
            for (int i = 0; i < 4; ++i) {
                EXPECT_GT(rule.bary[q][i], 0.0);
                bsum += rule.bary[q][i];
            }
            EXPECT_NEAR(bsum, 1.0, 1e-15);
        }
        EXPECT_NEAR(sum, 1.0 / 6.0, 1e-15);
        // Every monomial in the barycentric coordinates up to the rule's degree.
        for (int a0 = 0; a0 <= rule.degree; ++a0)
            for (int a1 = 0; a0 + a1 <= rule.degree; ++a1)
                for (int a2 = 0; a0 + a1 + a2 <= rule.degree; ++a2)
                    for (int a3 = 0; a0 + a1 + a2 + a3 <= rule.degree; ++a3) {
                        const int alpha[4] = {a0, a1, a2, a3};
                        double s = 0;
                        for (int q = 0; q < rule.num_points; ++q) {
                            double v = rule.weight[q];
                            for (int i = 0; i < 4; ++i) v *= std::pow(rule.bary[q][i], alpha[i]);
                            s += v;
                        }
                        EXPECT_NEAR(s, monomial_integral(alpha), 1e-15)
                            << "order " << order << " monomial " << a0 << a1 << a2 << a3;
                    }
    }
    const QuadratureTet<double> r5 = tet_quadrature_degree5_positive<double>();
    EXPECT_EQ(r5.num_points, 14);
    EXPECT_EQ(r5.degree, 5);
}

} // namespace
} // namespace edn

// Element-level finite-difference checks (double) of energy -> gradient -> Hessian for every
// material and order, including inverted elements; projected Hessians are PSD.
#include "sim/element_kernels.hpp"
#include "support/element_fixture.hpp"

#include <cmath>
#include <gtest/gtest.h>
#include <random>

namespace edn {
namespace {

template <int P> struct Element {
    static constexpr int m = lagrange_tet_num_nodes(P);
    RestElement<double> rest{};
    double x[m][3];
    QuadratureTet<double> rule = quadrature_for_degree<double>(element_quadrature_degree(P));

    explicit Element(std::uint32_t seed, double distortion) {
        std::mt19937 rng(seed);
        std::uniform_real_distribution<double> u(-1, 1);
        double X[4][3];
        test::perturbed_unit_tet(rng, 0.15, X);
        rest = test::rest_element(X);
        double nodes[m][3];
        element_node_positions<P>(X, nodes);
        for (int a = 0; a < m; ++a)
            for (int d = 0; d < 3; ++d) x[a][d] = nodes[a][d] + distortion * u(rng);
    }
};

template <int P, class Material>
void check_derivatives(const Material& material, double distortion, std::uint32_t seed) {
    using E = Element<P>;
    constexpr int m = E::m;
    E e(seed, distortion);
    double energy, grad[m][3];
    std::vector<double> hess(m * m * 9);
    evaluate_element<P>(material, e.rest, e.rule, e.x, kEnergy | kGradient | kHessian, false,
                        energy, grad, hess.data());
    ASSERT_TRUE(std::isfinite(energy));
    const double h = 1e-6;
    double gscale = 1e-12, hscale = 1e-12;
    for (int a = 0; a < m; ++a)
        for (int r = 0; r < 3; ++r) gscale = std::max(gscale, std::abs(grad[a][r]));
    for (double v : hess) hscale = std::max(hscale, std::abs(v));
    for (int a = 0; a < m; ++a)
        for (int r = 0; r < 3; ++r) {
            E plus = e, minus = e;
            plus.x[a][r] += h;
            minus.x[a][r] -= h;
            double ep, em, gp[m][3], gm[m][3];
            std::vector<double> dummy(m * m * 9);
            evaluate_element<P>(material, plus.rest, plus.rule, plus.x, kEnergy | kGradient, false,
                                ep, gp, dummy.data());
            evaluate_element<P>(material, minus.rest, minus.rule, minus.x, kEnergy | kGradient,
                                false, em, gm, dummy.data());
            EXPECT_NEAR((ep - em) / (2 * h), grad[a][r], 1e-6 * gscale)
                << "dW/dx a=" << a << " r=" << r;
            for (int b = 0; b < m; ++b)
                for (int c = 0; c < 3; ++c)
                    EXPECT_NEAR((gp[b][c] - gm[b][c]) / (2 * h), hess[(b * m + a) * 9 + 3 * c + r],
                                1e-5 * hscale)
                        << "d2W a=" << a << " r=" << r << " b=" << b << " c=" << c;
        }
    // Symmetry.
    for (int a = 0; a < m; ++a)
        for (int b = 0; b < m; ++b)
            for (int r = 0; r < 3; ++r)
                for (int c = 0; c < 3; ++c)
                    EXPECT_NEAR(hess[(a * m + b) * 9 + 3 * r + c],
                                hess[(b * m + a) * 9 + 3 * c + r], 1e-9 * hscale);
}

/// Smallest eigenvalue of a symmetric matrix by shifted power iteration (enough for a sign check).
double min_eigenvalue(const std::vector<double>& A, int n) {
    double norm = 0;
    for (double v : A) norm = std::max(norm, std::abs(v));
    const double shift = 2 * n * norm;
    std::vector<double> v(n, 1.0), w(n);
    double lambda = 0;
    for (int it = 0; it < 3000; ++it) {
        for (int i = 0; i < n; ++i) {
            w[i] = shift * v[i];
            for (int j = 0; j < n; ++j) w[i] -= A[i * n + j] * v[j];
        }
        double nn = 0;
        for (double x : w) nn += x * x;
        nn = std::sqrt(nn);
        for (int i = 0; i < n; ++i) v[i] = w[i] / nn;
        lambda = shift - nn;
    }
    return lambda;
}

template <int P, class Material>
void check_projected_psd(const Material& material, std::uint32_t seed) {
    using E = Element<P>;
    constexpr int m = E::m;
    E e(seed, 0.6); // strongly distorted, often inverted
    double energy, grad[m][3];
    std::vector<double> hess(m * m * 9);
    evaluate_element<P>(material, e.rest, e.rule, e.x, kEnergy | kGradient | kHessian, true, energy,
                        grad, hess.data());
    const int n = 3 * m;
    std::vector<double> A(n * n);
    double scale = 0;
    for (int a = 0; a < m; ++a)
        for (int b = 0; b < m; ++b)
            for (int r = 0; r < 3; ++r)
                for (int c = 0; c < 3; ++c) {
                    A[(3 * a + r) * n + 3 * b + c] = hess[(a * m + b) * 9 + 3 * r + c];
                    scale = std::max(scale, std::abs(hess[(a * m + b) * 9 + 3 * r + c]));
                }
    EXPECT_GE(min_eigenvalue(A, n), -1e-8 * scale);
}

const LameParameters<double> kLame = lame_from_young_poisson(1000.0, 0.35);

TEST(ElementKernels, FiniteDifferencesAllMaterialsAndOrders) {
    for (double distortion : {0.05, 0.3}) {
        for (std::uint32_t seed : {1u, 2u}) {
            check_derivatives<1>(LinearMaterial<double>{kLame}, distortion, seed);
            check_derivatives<2>(LinearMaterial<double>{kLame}, distortion, seed);
            check_derivatives<3>(LinearMaterial<double>{kLame}, distortion, seed);
            check_derivatives<1>(NeoHookean<double>{kLame}, distortion, seed);
            check_derivatives<2>(NeoHookean<double>{kLame}, distortion, seed);
            check_derivatives<3>(NeoHookean<double>{kLame}, distortion, seed);
            check_derivatives<1>(Corotational<double>{kLame}, distortion, seed);
            check_derivatives<2>(Corotational<double>{kLame}, distortion, seed);
        }
    }
}

TEST(ElementKernels, InvertedElementsStayFiniteAndDifferentiable) {
    // Mirror the element through a plane: every quadrature point has J < 0.
    Element<1> e(3, 0.0);
    for (auto& v : e.x) v[2] = -v[2];
    double energy, grad[4][3];
    std::vector<double> hess(16 * 9);
    evaluate_element<1>(NeoHookean<double>{kLame}, e.rest, e.rule, e.x,
                        kEnergy | kGradient | kHessian, true, energy, grad, hess.data());
    EXPECT_TRUE(std::isfinite(energy));
    for (double v : hess) EXPECT_TRUE(std::isfinite(v));
    evaluate_element<1>(Corotational<double>{kLame}, e.rest, e.rule, e.x,
                        kEnergy | kGradient | kHessian, true, energy, grad, hess.data());
    EXPECT_TRUE(std::isfinite(energy));
    for (double v : hess) EXPECT_TRUE(std::isfinite(v));
}

TEST(ElementKernels, ProjectedHessiansArePsd) {
    for (std::uint32_t seed = 10; seed < 16; ++seed) {
        check_projected_psd<1>(NeoHookean<double>{kLame}, seed);
        check_projected_psd<2>(NeoHookean<double>{kLame}, seed);
        check_projected_psd<1>(Corotational<double>{kLame}, seed);
        check_projected_psd<2>(Corotational<double>{kLame}, seed);
    }
}

/// The SVD-frame Hessian of a material's evaluate_element equals the generic 9x9 dP/dF path
/// (projected and exact), energies and gradients included.
template <int P, class Material>
void check_frame_equals_generic(const Material& material, double distortion, std::uint32_t seed) {
    using E = Element<P>;
    constexpr int m = E::m;
    E e(seed, distortion);
    for (bool project : {false, true}) {
        double ef = 0, eg = 0, gf[m][3], gg[m][3];
        std::vector<double> hf(m * m * 9), hg(m * m * 9);
        const int all = kEnergy | kGradient | kHessian;
        evaluate_element<P>(material, e.rest, e.rule, e.x, all, project, ef, gf, hf.data());
        evaluate_element_generic<P>(material, e.rest, e.rule, e.x, all, project, eg, gg, hg.data(),
                                    false);
        EXPECT_NEAR(ef, eg, 1e-12 * std::abs(eg));
        double gscale = 1e-12, hscale = 1e-12;
        for (int a = 0; a < m; ++a)
            for (int r = 0; r < 3; ++r) gscale = std::max(gscale, std::abs(gg[a][r]));
        for (double v : hg) hscale = std::max(hscale, std::abs(v));
        for (int a = 0; a < m; ++a)
            for (int r = 0; r < 3; ++r) EXPECT_NEAR(gf[a][r], gg[a][r], 1e-10 * gscale);
        for (std::size_t i = 0; i < hf.size(); ++i)
            ASSERT_NEAR(hf[i], hg[i], 1e-10 * hscale)
                << "entry " << i << " project " << project << " seed " << seed;
    }
}

TEST(ElementKernels, SvdFrameHessiansEqualTheGenericPath) {
    for (std::uint32_t seed = 20; seed < 26; ++seed)
        for (double distortion : {0.05, 0.6}) { // mild, and strongly distorted (often inverted)
            check_frame_equals_generic<1>(NeoHookean<double>{kLame}, distortion, seed);
            check_frame_equals_generic<2>(NeoHookean<double>{kLame}, distortion, seed);
            check_frame_equals_generic<3>(NeoHookean<double>{kLame}, distortion, seed);
            check_frame_equals_generic<1>(Corotational<double>{kLame}, distortion, seed);
            check_frame_equals_generic<2>(Corotational<double>{kLame}, distortion, seed);
        }
}

/// Every material's tangent_frame, assembled by put_frame_hessian and by the row operators of
/// the GPU's cooperative kernel (frame_row_operators), equals the generic 9x9 path's Hessian.
template <int P, class Material>
void check_tangent_frame(const Material& material, double distortion, std::uint32_t seed) {
    using E = Element<P>;
    constexpr int m = E::m;
    E e(seed, distortion);
    for (bool project : {false, true}) {
        double eg = 0, gg[m][3];
        std::vector<double> hg(m * m * 9), hf(m * m * 9), hr(m * m * 9, 0.0);
        evaluate_element_generic<P>(material, e.rest, e.rule, e.x, kHessian, project, eg, gg,
                                    hg.data(), false);
        for (int q = 0; q < e.rule.num_points; ++q) {
            double g[m][3], h[m][3];
            element_shape_gradients<P>(e.rest, e.rule.bary[q], g);
            const Mat3<double> F = element_deformation_gradient<m>(e.x, g, false);
            const double w = e.rule.weight[q] * e.rest.abs_det;
            TangentFrame<double> fr;
            material.tangent_frame(F, project, fr);
            frame_gradients<m>(fr, g, h);
            put_frame_hessian<m>(fr, h, w, q == 0, hf.data());
            for (int a = 0; a < m; ++a) {
                double C[3][9];
                frame_row_operators(fr, h[a], w, C);
                for (int b = 0; b < m; ++b)
                    for (int k = 0; k < 9; ++k)
                        hr[(a * m + b) * 9 + k] +=
                            h[b][0] * C[0][k] + h[b][1] * C[1][k] + h[b][2] * C[2][k];
            }
        }
        double scale = 1e-12;
        for (double v : hg) scale = std::max(scale, std::abs(v));
        for (std::size_t i = 0; i < hg.size(); ++i) {
            ASSERT_NEAR(hf[i], hg[i], 1e-10 * scale) << "entry " << i << " project " << project;
            ASSERT_NEAR(hr[i], hg[i], 1e-10 * scale) << "entry " << i << " project " << project;
        }
    }
}

TEST(ElementKernels, EveryMaterialsTangentFrameEqualsItsTangent) {
    Corotational<double> fixed{kLame};
    fixed.tangent = CorotationalTangent::fixed_rotation;
    for (std::uint32_t seed = 30; seed < 34; ++seed)
        for (double distortion : {0.05, 0.6}) {
            check_tangent_frame<1>(LinearMaterial<double>{kLame}, distortion, seed);
            check_tangent_frame<2>(LinearMaterial<double>{kLame}, distortion, seed);
            check_tangent_frame<2>(NeoHookean<double>{kLame}, distortion, seed);
            check_tangent_frame<3>(NeoHookean<double>{kLame}, distortion, seed);
            check_tangent_frame<2>(Corotational<double>{kLame}, distortion, seed);
            check_tangent_frame<1>(fixed, distortion, seed);
            check_tangent_frame<2>(fixed, distortion, seed);
        }
}

TEST(ElementKernels, RestStateHasZeroEnergyAndForce) {
    Element<2> e(4, 0.0);
    double energy, grad[10][3];
    std::vector<double> hess(100 * 9);
    for (int mat = 0; mat < 3; ++mat) {
        if (mat == 0)
            evaluate_element<2>(LinearMaterial<double>{kLame}, e.rest, e.rule, e.x,
                                kEnergy | kGradient, false, energy, grad, hess.data());
        if (mat == 1)
            evaluate_element<2>(NeoHookean<double>{kLame}, e.rest, e.rule, e.x, kEnergy | kGradient,
                                false, energy, grad, hess.data());
        if (mat == 2)
            evaluate_element<2>(Corotational<double>{kLame}, e.rest, e.rule, e.x,
                                kEnergy | kGradient, false, energy, grad, hess.data());
        EXPECT_NEAR(energy, 0.0, 1e-12);
        for (auto& g : grad)
            for (double v : g) EXPECT_NEAR(v, 0.0, 1e-10);
    }
}

} // namespace
} // namespace edn

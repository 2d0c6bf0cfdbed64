// The element Hessian as an action (sim/reference_tangent.hpp, the CPU reference of the CUDA
// matrix-free product): the 45 reference values per point times x equal the element Hessian of
// the generic 9x9 dP/dF path (FD-checked in test_element_kernels.cpp) times x, for every material
// at p = 2 and 3, projected and not, on distorted and inverted elements.
#include "mesh/node_layout.hpp"
#include "sim/reference_tangent.hpp"
#include "support/element_fixture.hpp"

#include <cmath>
#include <gtest/gtest.h>
#include <random>
#include <vector>

namespace edn {
namespace {

const LameParameters<double> kLame = lame_from_young_poisson(1000.0, 0.35);

/// The element's points' 45 values (reference_tangent) at positions x.
template <int P, class Material>
std::vector<double> point_values(const Material& material, const RestElement<double>& rest,
                                 const QuadratureTet<double>& rule, const double (*x)[3],
                                 bool project) {
    std::vector<double> d(static_cast<std::size_t>(rule.num_points) * kReferenceTangentValues);
    for (int q = 0; q < rule.num_points; ++q) {
        const auto pt = element_point<P>(rest, rule, q, x, false);
        TangentFrame<double> frame;
        material.tangent_frame(pt.F, project, frame);
        reference_tangent(frame, rest.inverse_jacobian, pt.w,
                          d.data() + q * kReferenceTangentValues);
    }
    return d;
}

template <int P, class Material>
void check_product(const Material& material, double distortion, bool project, bool invert,
                   std::uint32_t seed) {
    constexpr int m = lagrange_tet_num_nodes(P);
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(-1, 1);
    double nodes[m][3], x[m][3], v[m][3];
    const RestElement<double> rest = test::random_order_p_element<P>(rng, nodes);
    for (int a = 0; a < m; ++a)
        for (int d = 0; d < 3; ++d) {
            x[a][d] = nodes[a][d] + distortion * u(rng);
            if (invert && d == 2) x[a][d] = -x[a][d];
            v[a][d] = u(rng);
        }
    const QuadratureTet<double> rule = quadrature_for_degree<double>(element_quadrature_degree(P));
    double energy, grad[m][3];
    std::vector<double> hess(m * m * 9);
    evaluate_element_generic<P>(material, rest, rule, x, kHessian, project, energy, grad,
                                hess.data(), false);
    double want[m][3] = {}, scale = 0;
    for (int a = 0; a < m; ++a)
        for (int b = 0; b < m; ++b)
            for (int r = 0; r < 3; ++r)
                for (int c = 0; c < 3; ++c)
                    want[a][r] += hess[(a * m + b) * 9 + 3 * r + c] * v[b][c];
    for (int a = 0; a < m; ++a)
        for (int r = 0; r < 3; ++r) scale = std::max(scale, std::abs(want[a][r]));

    const std::vector<double> d = point_values<P>(material, rest, rule, x, project);
    const std::vector<double> dN = reference_gradient_table<P>(rule);
    double got[m][3];
    reference_tangent_product<P>(d.data(), rule.num_points, dN.data(), v, got);
    ASSERT_GT(scale, 0.0);
    for (int a = 0; a < m; ++a)
        for (int r = 0; r < 3; ++r)
            EXPECT_NEAR(got[a][r], want[a][r], 1e-10 * scale)
                << "p" << P << " node " << a << " component " << r << " project " << project
                << " invert " << invert;
}

template <int P>
void check_materials(double distortion, bool project, bool invert, std::uint32_t seed) {
    check_product<P>(LinearMaterial<double>{kLame}, distortion, project, invert, seed);
    check_product<P>(NeoHookean<double>{kLame}, distortion, project, invert, seed);
    check_product<P>(Corotational<double>{kLame}, distortion, project, invert, seed);
}

TEST(ReferenceTangent, ProductEqualsElementHessianTimesVector) {
    for (double distortion : {0.05, 0.3})
        for (bool project : {false, true})
            for (bool invert : {false, true})
                for (std::uint32_t seed : {1u, 7u}) {
                    check_materials<2>(distortion, project, invert, seed);
                    check_materials<3>(distortion, project, invert, seed);
                }
}

// A value in the wrong place of the 45 (or a transposed off-diagonal block) changes the product:
// the check above can fail.
TEST(ReferenceTangent, EveryValueMatters) {
    constexpr int P = 2, m = lagrange_tet_num_nodes(P);
    const QuadratureTet<double> rule = quadrature_for_degree<double>(element_quadrature_degree(P));
    const std::vector<double> dN = reference_gradient_table<P>(rule);
    std::mt19937 rng(3);
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<double> d(static_cast<std::size_t>(rule.num_points) * kReferenceTangentValues);
    for (double& value : d) value = u(rng);
    double v[m][3], base[m][3];
    for (auto& row : v)
        for (double& value : row) value = u(rng);
    reference_tangent_product<P>(d.data(), rule.num_points, dN.data(), v, base);
    for (int k = 0; k < kReferenceTangentValues; ++k) {
        std::vector<double> changed = d;
        changed[k] += 1.0;
        double y[m][3];
        reference_tangent_product<P>(changed.data(), rule.num_points, dN.data(), v, y);
        double diff = 0;
        for (int a = 0; a < m; ++a)
            for (int r = 0; r < 3; ++r) diff = std::max(diff, std::abs(y[a][r] - base[a][r]));
        EXPECT_GT(diff, 1e-6) << "value " << k;
    }
}

/// A random order-P element moved by up to 0.2 per coordinate: its rule, its element Hessian
/// (the generic 9x9 path, projected with `project`) and its points' 45 values.
template <int P> struct DeformedElement {
    static constexpr int m = lagrange_tet_num_nodes(P);
    QuadratureTet<double> rule = quadrature_for_degree<double>(element_quadrature_degree(P));
    std::vector<double> hess = std::vector<double>(m * m * 9), d;
    template <class Material>
    DeformedElement(const Material& material, std::uint32_t seed, bool project) {
        std::mt19937 rng(seed);
        std::uniform_real_distribution<double> u(-1, 1);
        double nodes[m][3], x[m][3];
        const RestElement<double> rest = test::random_order_p_element<P>(rng, nodes);
        for (int a = 0; a < m; ++a)
            for (int k = 0; k < 3; ++k) x[a][k] = nodes[a][k] + 0.2 * u(rng);
        double energy, grad[m][3];
        evaluate_element_generic<P>(material, rest, rule, x, kHessian, project, energy, grad,
                                    hess.data(), false);
        d = point_values<P>(material, rest, rule, x, project);
    }
};

// The order-p level's re-value shares from the points' values (reference_galerkin_parts: the
// CPU reference of the CUDA matrix-free re-value) equal the element Hessian times the element's
// transfer, K_e P_e, and its diagonal blocks K_aa, with a pinned node (its transfer row zero)
// and a pinned vertex (its column zero), for every material at p = 2, 3.
template <int P, class Material>
void check_galerkin_parts(const Material& material, std::uint32_t seed) {
    constexpr int m = lagrange_tet_num_nodes(P);
    const DeformedElement<P> el(material, seed, true);
    const std::vector<double>& hess = el.hess;
    const std::vector<double>& d = el.d;
    const QuadratureTet<double>& rule = el.rule;
    const std::vector<double> dN = reference_gradient_table<P>(rule);
    std::vector<double> w(4 * m);
    for (int b = 0; b < m; ++b)
        for (int c = 0; c < 4; ++c)
            w[4 * b + c] = (b == m - 1 || c == 2) ? 0.0 : local_node_barycentric(P, b)[c];
    std::vector<double> parts(m * 36), diag(m * 9);
    reference_galerkin_parts<P>(d.data(), rule.num_points, dN.data(), w.data(), parts.data(),
                                diag.data());
    double scale = 0;
    for (int a = 0; a < m; ++a)
        for (int c = 0; c < 4; ++c)
            for (int r = 0; r < 3; ++r)
                for (int k = 0; k < 3; ++k) {
                    double want = 0; // sum_b K_ab w_bc
                    for (int b = 0; b < m; ++b)
                        want += hess[(a * m + b) * 9 + 3 * r + k] * w[4 * b + c];
                    scale = std::max(scale, std::abs(want));
                    EXPECT_NEAR(parts[(a * 4 + c) * 9 + 3 * r + k], want,
                                1e-9 * (1 + std::abs(want)))
                        << "p" << P << " node " << a << " vertex " << c;
                }
    for (int a = 0; a < m; ++a)
        for (int i = 0; i < 9; ++i)
            EXPECT_NEAR(diag[9 * a + i], hess[(a * m + a) * 9 + i],
                        1e-9 * (1 + std::abs(hess[(a * m + a) * 9 + i])))
                << "p" << P << " node " << a;
    EXPECT_GT(scale, 0.0);
}

TEST(ReferenceTangent, GalerkinPartsEqualTheElementHessianTimesItsTransfer) {
    for (std::uint32_t seed : {3u, 11u}) {
        check_galerkin_parts<2>(NeoHookean<double>{kLame}, seed);
        check_galerkin_parts<3>(NeoHookean<double>{kLame}, seed);
        check_galerkin_parts<2>(Corotational<double>{kLame}, seed);
        check_galerkin_parts<3>(Corotational<double>{kLame}, seed);
        check_galerkin_parts<3>(LinearMaterial<double>{kLame}, seed);
    }
}

// The element blocks formed from the points' values (reference_tangent_blocks: the CPU reference
// of the CUDA blocks kernel of the assembled p >= 2 paths) equal the generic element Hessian,
// every block (a, b) in its place, for every material at p = 2, 3, projected or not.
template <int P, class Material> void check_blocks(const Material& material, std::uint32_t seed) {
    constexpr int m = lagrange_tet_num_nodes(P);
    for (bool project : {false, true}) {
        const DeformedElement<P> el(material, seed, project);
        const std::vector<double> dN = reference_gradient_table<P>(el.rule);
        std::vector<double> K(m * m * 9);
        reference_tangent_blocks<P>(el.d.data(), el.rule.num_points, dN.data(), K.data());
        double scale = 0;
        for (double h : el.hess) scale = std::max(scale, std::abs(h));
        ASSERT_GT(scale, 0.0);
        for (int i = 0; i < m * m * 9; ++i)
            ASSERT_NEAR(K[i], el.hess[i], 1e-10 * scale)
                << "p" << P << " block (" << i / 9 / m << ", " << i / 9 % m << ") entry " << i % 9
                << " project " << project;
    }
}

TEST(ReferenceTangent, BlocksEqualTheElementHessian) {
    for (std::uint32_t seed : {5u, 13u}) {
        check_blocks<2>(NeoHookean<double>{kLame}, seed);
        check_blocks<3>(NeoHookean<double>{kLame}, seed);
        check_blocks<2>(Corotational<double>{kLame}, seed);
        check_blocks<3>(Corotational<double>{kLame}, seed);
        check_blocks<3>(LinearMaterial<double>{kLame}, seed);
    }
}

} // namespace
} // namespace edn

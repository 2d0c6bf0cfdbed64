// The co-rotational element fast path (evaluate_element's Corotational overload: blocks built in
// the SVD frame, no 9x9 dP/dF) against the generic path through the material's dP/dF, for every
// order, projected or not, displacement form, and inverted elements.
#include "sim/element_kernels.hpp"
#include "support/element_fixture.hpp"

#include <cmath>
#include <gtest/gtest.h>
#include <random>
#include <vector>

namespace edn {
namespace {

template <int P>
void compare_paths(std::uint32_t seed, double distortion, bool project, bool displacement_form) {
    constexpr int m = lagrange_tet_num_nodes(P);
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(-1, 1);
    double nodes[m][3], x[m][3];
    const RestElement<double> rest = test::random_order_p_element<P>(rng, nodes);
    // A random rotation of the whole element plus a distortion (large: inverted points).
    const double angle = 3 * u(rng);
    const double c = std::cos(angle), s = std::sin(angle);
    for (int a = 0; a < m; ++a) {
        const double p0 = c * nodes[a][0] - s * nodes[a][1], p1 = s * nodes[a][0] + c * nodes[a][1];
        const double p[3] = {p0, p1, nodes[a][2]};
        for (int d = 0; d < 3; ++d)
            x[a][d] = p[d] + distortion * u(rng) - (displacement_form ? nodes[a][d] : 0.0);
    }
    const QuadratureTet<double> rule = quadrature_for_degree<double>(element_quadrature_degree(P));
    Corotational<double> material{lame_from_young_poisson(1e5, 0.3)};
    material.tangent = CorotationalTangent::exact;
    double e_fast = 0, e_ref = 0, g_fast[m][3], g_ref[m][3];
    std::vector<double> h_fast(m * m * 9), h_ref(m * m * 9);
    const int all = kEnergy | kGradient | kHessian;
    evaluate_element<P>(material, rest, rule, x, all, project, e_fast, g_fast, h_fast.data(),
                        displacement_form);
    evaluate_element_generic<P>(material, rest, rule, x, all, project, e_ref, g_ref, h_ref.data(),
                                displacement_form);
    EXPECT_NEAR(e_fast, e_ref, 1e-12 * std::abs(e_ref));
    double gs = 0, hs = 0;
    for (int a = 0; a < m; ++a)
        for (int r = 0; r < 3; ++r) gs = std::max(gs, std::abs(g_ref[a][r]));
    for (double v : h_ref) hs = std::max(hs, std::abs(v));
    ASSERT_GT(gs, 0);
    ASSERT_GT(hs, 0);
    for (int a = 0; a < m; ++a)
        for (int r = 0; r < 3; ++r) EXPECT_NEAR(g_fast[a][r], g_ref[a][r], 1e-11 * gs);
    for (int i = 0; i < m * m * 9; ++i) EXPECT_NEAR(h_fast[i], h_ref[i], 1e-11 * hs) << i;
    // Energy only and energy + gradient give the same numbers as the full evaluation.
    double e_only = 0, e_grad = 0, g_only[m][3];
    evaluate_element<P>(material, rest, rule, x, kEnergy, project, e_only, g_only,
                        static_cast<double*>(nullptr), displacement_form);
    evaluate_element<P>(material, rest, rule, x, kEnergy | kGradient, project, e_grad, g_only,
                        static_cast<double*>(nullptr), displacement_form);
    EXPECT_EQ(e_only, e_fast);
    EXPECT_EQ(e_grad, e_fast);
    for (int a = 0; a < m; ++a)
        for (int r = 0; r < 3; ++r) EXPECT_EQ(g_only[a][r], g_fast[a][r]);
}

TEST(CorotationalPerfPath, MatchesGenericPathAllOrders) {
    for (std::uint32_t seed = 1; seed <= 6; ++seed)
        for (bool project : {false, true})
            for (double distortion : {0.02, 0.6}) {
                compare_paths<1>(seed, distortion, project, false);
                compare_paths<2>(seed, distortion, project, false);
                compare_paths<3>(seed, distortion, project, false);
                compare_paths<2>(seed, distortion, project, true);
            }
}

TEST(CorotationalPerfPath, FixedRotationTangentUsesTheGenericPath) {
    std::mt19937 rng(5);
    double X[4][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    const RestElement<double> rest = test::rest_element(X);
    double x[4][3];
    for (int a = 0; a < 4; ++a)
        for (int d = 0; d < 3; ++d) x[a][d] = X[a][d] + 0.1 * std::sin(3.0 * a + d);
    const QuadratureTet<double> rule = quadrature_for_degree<double>(1);
    Corotational<double> material{lame_from_young_poisson(1e5, 0.3)};
    material.tangent = CorotationalTangent::fixed_rotation;
    double e1, e2, g1[4][3], g2[4][3], h1[144], h2[144];
    evaluate_element<1>(material, rest, rule, x, kEnergy | kGradient | kHessian, true, e1, g1, h1);
    evaluate_element_generic<1>(material, rest, rule, x, kEnergy | kGradient | kHessian, true, e2,
                                g2, h2, false);
    for (int i = 0; i < 144; ++i) EXPECT_EQ(h1[i], h2[i]);
}

} // namespace
} // namespace edn

// engine/fem/reference_integrals.hpp (written by the CUDA assembly helper) precomputes reference
// gradient integrals; its stiffness blocks must equal the quadrature stiffness of this module.
#include "fem/linear_elasticity.hpp"
#include "fem/reference_integrals.hpp"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <memory>
#include <random>

namespace edn {
namespace {

template <int P> void check_reference_integral_blocks() {
    SCOPED_TRACE(testing::Message() << "order " << P);
    constexpr int m = lagrange_tet_num_nodes(P);
    std::mt19937 rng(1200 + P);
    std::uniform_real_distribution<double> noise(-0.2, 0.2);
    const double base[4][3] = {{0, 0, 0}, {1, 0, 0}, {0.5, 0.9, 0}, {0.5, 0.3, 0.8}};
    double X[4][3];
    for (int v = 0; v < 4; ++v)
        for (int r = 0; r < 3; ++r) X[v][r] = base[v][r] + noise(rng);
    const LameParameters<double> lame = lame_from_young_poisson(1.0e3, 0.28);
    auto K = std::make_unique<double[][m][3][3]>(m);
    auto S = std::make_unique<double[][m][3][3]>(m);
    linear_elastic_stiffness<P>(X, lame, quadrature_for_degree<double>(2 * (P - 1)), K.get());
    reference_gradient_integrals<P, double>(S.get());
    const TetGeometry<double> g = tet_geometry(X);
    double kmax = 0;
    for (int a = 0; a < m; ++a)
        for (int b = 0; b < m; ++b)
            for (int r = 0; r < 3; ++r)
                for (int c = 0; c < 3; ++c) kmax = std::max(kmax, std::abs(K[a][b][r][c]));
    for (int a = 0; a < m; ++a)
        for (int b = 0; b < m; ++b) {
            double out[9];
            linear_elastic_block_from_integrals<double>(S[a][b], g.inverse_jacobian.m,
                                                        std::abs(g.det_jacobian), lame, out);
            for (int r = 0; r < 3; ++r)
                for (int c = 0; c < 3; ++c)
                    EXPECT_NEAR(out[3 * r + c], K[a][b][r][c], 1e-12 * kmax)
                        << "block " << a << "," << b;
        }
}

TEST(FemReferenceIntegrals, BlocksMatchQuadratureStiffness) {
    check_reference_integral_blocks<1>();
    check_reference_integral_blocks<2>();
    check_reference_integral_blocks<3>();
}

} // namespace
} // namespace edn

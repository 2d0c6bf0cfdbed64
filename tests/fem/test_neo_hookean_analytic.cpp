// The analytic (SVD-frame) neo-Hookean tangent equals the cofactor formula, and its projection
// equals the 9x9 Jacobi projection, for ordinary, near-singular and inverted F.
#include "fem/neo_hookean.hpp"

#include <cmath>
#include <gtest/gtest.h>
#include <random>

namespace edn {
namespace {

double max_abs(const double A[9][9]) {
    double m = 0;
    for (int x = 0; x < 9; ++x)
        for (int y = 0; y < 9; ++y) m = std::max(m, std::abs(A[x][y]));
    return m;
}

TEST(NeoHookeanAnalytic, EigensystemTangentEqualsCofactorTangentAndItsProjection) {
    const NeoHookean<double> material{lame_from_young_poisson(1000.0, 0.4)};
    std::mt19937 rng(3);
    std::uniform_real_distribution<double> u(-1, 1);
    int inverted = 0, extension = 0;
    for (int trial = 0; trial < 300; ++trial) {
        Mat3<double> F;
        const double spread = trial < 100 ? 0.3 : trial < 200 ? 1.0 : 2.0;
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) F.m[i][j] = (i == j ? 1.0 : 0.0) + spread * u(rng);
        if (trial % 7 == 0) F.m[2][0] = F.m[2][1] = F.m[2][2] = 0.0, F.m[2][2] = 1e-4; // J ~ 1e-4
        const double J = det(F);
        inverted += J < 0;
        extension += J < material.extension_jacobian;
        double exact[9][9], analytic[9][9];
        material.first_piola_derivative(F, exact);
        material.projected_tangent(F, analytic, false);
        const double scale = max_abs(exact);
        for (int x = 0; x < 9; ++x)
            for (int y = 0; y < 9; ++y)
                ASSERT_NEAR(analytic[x][y], exact[x][y], 1e-7 * scale)
                    << "trial " << trial << " J " << J;
        project_psd<9>(exact);
        material.projected_tangent(F, analytic, true);
        for (int x = 0; x < 9; ++x)
            for (int y = 0; y < 9; ++y)
                ASSERT_NEAR(analytic[x][y], exact[x][y], 1e-7 * scale)
                    << "projected, trial " << trial;
    }
    EXPECT_GT(inverted, 10);
    EXPECT_GT(extension, 10);
}

} // namespace
} // namespace edn

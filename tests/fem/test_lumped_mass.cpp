#include "fem/lumped_mass.hpp"
#include "support/random.hpp"

#include <cmath>
#include <gtest/gtest.h>
#include <random>

namespace edn {
namespace {

/// The random tetrahedra of these tests: enlarged and moved off the axes.
void random_tet(std::mt19937& rng, double X[4][3]) {
    test::random_tet(rng, X, {.scale = 1.3, .noise = 0.2, .translation = 0, .axis_offset = -1});
}

template <int P> void check_lumped_mass(unsigned seed) {
    constexpr int m = lagrange_tet_num_nodes(P);
    std::mt19937 rng(seed);
    for (int trial = 0; trial < 10; ++trial) {
        double X[4][3];
        random_tet(rng, X);
        const double rho = 1000.0 + 100.0 * trial;
        const double volume = std::abs(tet_signed_volume(X));
        double mass[m];
        lumped_mass<P>(X, rho, mass);
        double total = 0;
        for (int a = 0; a < m; ++a) {
            EXPECT_GT(mass[a], 0.0) << "p = " << P << " node " << a;
            total += mass[a];
        }
        EXPECT_NEAR(total, rho * volume, 1e-12 * rho * volume);
        // HRZ: proportional to the diagonal of the consistent mass (brute-force reference).
        double M[m][m];
        consistent_mass<P>(X, rho, quadrature_for_degree<double>(mass_quadrature_degree(P)), M);
        double diag_total = 0;
        for (int a = 0; a < m; ++a) diag_total += M[a][a];
        for (int a = 0; a < m; ++a) {
            const double expected = P == 1 ? rho * volume / 4 : rho * volume * M[a][a] / diag_total;
            EXPECT_NEAR(mass[a], expected, 1e-12 * rho * volume);
        }
        // Symmetry of the construction: masses depend only on the node kind.
        for (int a = 1; a < 4; ++a) EXPECT_NEAR(mass[a], mass[0], 1e-12 * rho * volume);
    }
}

TEST(LumpedMass, P1RowSumPositiveTotalRhoV) {
    check_lumped_mass<1>(1);
}
TEST(LumpedMass, P2HrzPositiveTotalRhoV) {
    check_lumped_mass<2>(2);
}
TEST(LumpedMass, P3HrzPositiveTotalRhoV) {
    check_lumped_mass<3>(3);
}

// Why HRZ: row-sum lumping of the consistent P2 mass gives negative vertex masses (-rho V / 20).
TEST(LumpedMass, RowSumOfP2ConsistentMassIsNegativeAtVertices) {
    const double X[4][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    constexpr int m = lagrange_tet_num_nodes(2);
    double M[m][m];
    consistent_mass<2>(X, 1.0, quadrature_for_degree<double>(mass_quadrature_degree(2)), M);
    const double volume = 1.0 / 6.0;
    for (int a = 0; a < m; ++a) {
        double row = 0;
        for (int b = 0; b < m; ++b) row += M[a][b];
        EXPECT_NEAR(row, a < 4 ? -volume / 20 : volume / 5, 1e-14);
    }
}

} // namespace
} // namespace edn

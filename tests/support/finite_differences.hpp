#pragma once
// Finite-difference checks of the material laws: psi -> P and P -> dP/dF by central differences.

#include "fem/small_matrix.hpp"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>

namespace edn::test {

/// Central differences (step h = 1e-6) of the energy density against P, and of P against dP/dF,
/// at `F`, each within 1e-6 of the largest entry (at least 1) of P or dP/dF.
/// @tparam Material  energy_density(F), first_piola(F), first_piola_derivative(F, D[9][9])
template <class Material>
void check_material_derivatives(const Material& mat, const Mat3<double>& F) {
    const double h = 1e-6;
    const Mat3<double> P = mat.first_piola(F);
    double D[9][9];
    mat.first_piola_derivative(F, D);
    double pscale = 0, dscale = 0;
    for (int x = 0; x < 9; ++x) {
        pscale = std::max(pscale, std::abs(P.m[x / 3][x % 3]));
        for (int y = 0; y < 9; ++y) dscale = std::max(dscale, std::abs(D[x][y]));
    }
    for (int y = 0; y < 9; ++y) {
        Mat3<double> Fp = F, Fm = F;
        Fp.m[y / 3][y % 3] += h;
        Fm.m[y / 3][y % 3] -= h;
        const double dpsi = (mat.energy_density(Fp) - mat.energy_density(Fm)) / (2 * h);
        EXPECT_NEAR(dpsi, P.m[y / 3][y % 3], 1e-6 * std::max(pscale, 1.0)) << "entry " << y;
        const Mat3<double> Pp = mat.first_piola(Fp), Pm = mat.first_piola(Fm);
        for (int x = 0; x < 9; ++x)
            EXPECT_NEAR((Pp.m[x / 3][x % 3] - Pm.m[x / 3][x % 3]) / (2 * h), D[x][y],
                        1e-6 * std::max(dscale, 1.0))
                << "dP" << x << "/dF" << y << " J = " << det(F);
    }
}

} // namespace edn::test

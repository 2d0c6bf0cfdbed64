#pragma once
// One term of a Simulation's incremental potential alone (damping, a drag, ...): the simulation
// with the term minus an otherwise equal one without it, for finite-difference checks.

#include "sim/simulation.hpp"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <vector>

namespace edn::test {

/// E, g and H v of a term alone.
struct TermParts {
    double energy = 0;
    std::vector<double> gradient, hessian_v;
};

/// The term's energy, gradient and Hessian product with v at y: `with` minus `without`.
inline TermParts term_difference(Simulation& with, Simulation& without,
                                 const std::vector<double>& y, const std::vector<double>& v) {
    TermParts t;
    std::vector<double> g1, g0;
    t.energy = with.incremental_potential(y, &g1) - without.incremental_potential(y, &g0);
    const std::vector<double> h1 = with.hessian_product(y, v), h0 = without.hessian_product(y, v);
    t.gradient.resize(y.size());
    t.hessian_v.resize(y.size());
    for (std::size_t k = 0; k < y.size(); ++k) {
        t.gradient[k] = g1[k] - g0[k];
        t.hessian_v[k] = h1[k] - h0[k];
    }
    return t;
}

/// Central differences (step 1e-6 along dir) of the term at y: the energy's against the gradient
/// (within 1e-6 of |g.dir| plus `energy_slack`), the gradient's against H dir (within 1e-6 of the
/// largest entry of H dir). Returns the term at y for further checks.
inline TermParts expect_term_derivatives(Simulation& with, Simulation& without,
                                         const std::vector<double>& y,
                                         const std::vector<double>& dir, double energy_slack = 0) {
    const TermParts t = term_difference(with, without, y, dir);
    const double h = 1e-6;
    std::vector<double> yp = y, ym = y;
    for (std::size_t k = 0; k < y.size(); ++k) yp[k] += h * dir[k], ym[k] -= h * dir[k];
    const TermParts p = term_difference(with, without, yp, dir);
    const TermParts m = term_difference(with, without, ym, dir);
    double g_dot = 0, scale = 0;
    for (std::size_t k = 0; k < y.size(); ++k) g_dot += t.gradient[k] * dir[k];
    EXPECT_NEAR((p.energy - m.energy) / (2 * h), g_dot, 1e-6 * std::abs(g_dot) + energy_slack);
    for (double v : t.hessian_v) scale = std::max(scale, std::abs(v));
    EXPECT_GT(scale, 0);
    for (std::size_t k = 0; k < y.size(); ++k)
        EXPECT_NEAR((p.gradient[k] - m.gradient[k]) / (2 * h), t.hessian_v[k], 1e-6 * scale)
            << "dof " << k;
    return t;
}

} // namespace edn::test

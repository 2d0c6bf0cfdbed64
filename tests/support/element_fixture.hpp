#pragma once
// One random element for the element-kernel tests: a perturbed unit tetrahedron and its rest data.

#include "sim/element_kernels.hpp"

#include <cmath>
#include <random>

namespace edn::test {

/// The unit right tetrahedron with every coordinate moved by amplitude * U(-1, 1) (12 draws on
/// `rng`, vertex by vertex).
/// @param[out] X  4 x 3 vertex positions
inline void perturbed_unit_tet(std::mt19937& rng, double amplitude, double X[4][3]) {
    std::uniform_real_distribution<double> u(-1, 1);
    const double unit[4][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    for (int v = 0; v < 4; ++v)
        for (int r = 0; r < 3; ++r) X[v][r] = unit[v][r] + amplitude * u(rng);
}

/// The rest data (inverse Jacobian, |det J|) the element kernels take for vertices `X`.
inline RestElement<double> rest_element(const double X[4][3]) {
    const TetGeometry<double> g = tet_geometry(X);
    RestElement<double> rest{};
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) rest.inverse_jacobian[i][j] = g.inverse_jacobian.m[i][j];
    rest.abs_det = std::abs(g.det_jacobian);
    return rest;
}

/// A perturbed unit tetrahedron (amplitude 0.15, perturbed_unit_tet) of order P: its rest data and
/// the rest positions of its m nodes.
template <int P>
RestElement<double> random_order_p_element(std::mt19937& rng,
                                           double (*nodes)[3] /* m x 3 */) {
    double X[4][3];
    perturbed_unit_tet(rng, 0.15, X);
    element_node_positions<P>(X, nodes);
    return rest_element(X);
}

} // namespace edn::test

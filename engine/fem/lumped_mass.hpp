#pragma once
/// Lumped (diagonal) mass of order-p tetrahedra, for host and device.
///
/// p = 1: row-sum lumping, rho V / 4 per vertex (the row sums of the consistent mass).
/// p >= 2: HRZ lumping (Hinton, Rock and Zienkiewicz 1976): take the diagonal of the consistent
/// mass, d_a = rho integral N_a^2 > 0, and scale it so the element total is rho V:
/// m_a = rho V d_a / sum_b d_b. Row-sum lumping is not used there because the row sums of the
/// consistent mass are rho integral N_a, which is negative for P2 vertices (-rho V / 20); for P3
/// they happen to be positive (V/40 at vertices) but HRZ is used for every p >= 2 for uniformity
/// (it also weights nodes closer to their consistent-mass share). HRZ masses are always positive,
/// so the lumped mass is a positive diagonal (block diagonal m_a I) usable as a preconditioner and
/// for explicit steps. The 3x3 block of node a is m_a times the identity.

#include "core/types.hpp"
#include "fem/element_geometry.hpp"
#include "fem/lagrange_tet.hpp"
#include "fem/linear_elasticity.hpp"
#include "fem/quadrature_tet.hpp"

namespace edn {

/// Lumped nodal masses of an order-P tet with vertex positions X[4][3] and density rho: row sum
/// for P = 1, HRZ for P >= 2. Every mass is > 0 for a non-degenerate tet and they sum to rho V.
/// @param[in]  X     4 by 3 rest vertex positions
/// @param[in]  rho   density
/// @param[out] mass  m nodal masses in canonical local order
template <int P, class T>
EDN_HOST_DEVICE constexpr void lumped_mass(const T X[4][3], T rho,
                                           T mass[lagrange_tet_num_nodes(P)]) {
    constexpr int m = lagrange_tet_num_nodes(P);
    const T volume = fem_abs(det(tet_jacobian(X))) / T(6);
    if constexpr (P == 1) {
        for (int a = 0; a < 4; ++a) mass[a] = rho * volume / T(4);
    } else {
        // Diagonal of the consistent mass on the reference tet (integral N_a^2, exact rule); the
        // common factor rho |det J| cancels in the HRZ scaling.
        const QuadratureTet<T> rule = quadrature_for_degree<T>(mass_quadrature_degree(P));
        T diag[m] = {};
        for (int q = 0; q < rule.num_points; ++q) {
            T N[m] = {};
            LagrangeTet<P, T>::eval(rule.bary[q], N);
            for (int a = 0; a < m; ++a) diag[a] += rule.weight[q] * N[a] * N[a];
        }
        T total = T(0);
        for (int a = 0; a < m; ++a) total += diag[a];
        for (int a = 0; a < m; ++a) mass[a] = rho * volume * diag[a] / total;
    }
}

} // namespace edn

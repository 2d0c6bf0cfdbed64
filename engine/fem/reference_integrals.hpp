#pragma once
/// Reference-element integrals that turn straight-sided linear-elastic element stiffness into a
/// few 3x3 products per block (no quadrature at run time):
///   S_ab[i][j] = integral over the reference tet of dN_a/dxi_i dN_b/dxi_j.
/// With J^{-1} constant per element, g_a = J^{-T} dN_a, and M_ab = J^{-T} S_ab J^{-1}:
///   integral g_a[r] g_b[c] = M_ab[r][c],  integral g_a . g_b = tr M_ab, hence
///   K_ab = |det J| ( mu tr(M_ab) I + mu M_ab^T + lambda M_ab )   (see linear_elasticity.hpp).

#include "fem/lagrange_tet.hpp"
#include "fem/linear_elasticity.hpp"
#include "fem/quadrature_tet.hpp"

namespace edn {

/// S[a][b][i][j] for order P, integrated exactly (degree 2(P-1)).
template <int P, class T>
EDN_HOST_DEVICE constexpr void
reference_gradient_integrals(T S[lagrange_tet_num_nodes(P)][lagrange_tet_num_nodes(P)][3][3]) {
    constexpr int m = lagrange_tet_num_nodes(P);
    const QuadratureTet<double> rule = quadrature_for_degree<double>(2 * (P - 1));
    for (int a = 0; a < m; ++a)
        for (int b = 0; b < m; ++b)
            for (int i = 0; i < 3; ++i)
                for (int j = 0; j < 3; ++j) S[a][b][i][j] = T(0);
    for (int q = 0; q < rule.num_points; ++q) {
        double dN[m][3] = {};
        LagrangeTet<P, double>::grad(rule.bary[q], dN);
        for (int a = 0; a < m; ++a)
            for (int b = 0; b < m; ++b)
                for (int i = 0; i < 3; ++i)
                    for (int j = 0; j < 3; ++j)
                        S[a][b][i][j] += static_cast<T>(rule.weight[q] * dN[a][i] * dN[b][j]);
    }
}

/// K_ab (row-major 3x3 into out[9]) from S_ab, the inverse Jacobian and |det J|.
template <class T>
EDN_HOST_DEVICE inline void
linear_elastic_block_from_integrals(const T S[3][3], const T Ji[3][3], T abs_det,
                                    const LameParameters<T>& lame, T out[9]) {
    // M = Ji^T S Ji: M[r][c] = sum_ij Ji[i][r] S[i][j] Ji[j][c]
    T SJ[3][3];
    for (int i = 0; i < 3; ++i)
        for (int c = 0; c < 3; ++c)
            SJ[i][c] = S[i][0] * Ji[0][c] + S[i][1] * Ji[1][c] + S[i][2] * Ji[2][c];
    T M[3][3];
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c)
            M[r][c] = Ji[0][r] * SJ[0][c] + Ji[1][r] * SJ[1][c] + Ji[2][r] * SJ[2][c];
    const T trace = M[0][0] + M[1][1] + M[2][2];
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c)
            out[3 * r + c] = abs_det * (lame.mu * M[c][r] + lame.lambda * M[r][c] +
                                        (r == c ? lame.mu * trace : T(0)));
}

} // namespace edn

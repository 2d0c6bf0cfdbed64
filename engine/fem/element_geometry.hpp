#pragma once
/// Geometry of straight-sided tetrahedra: the affine map from the reference tet, its Jacobian,
/// physical shape-function gradients and node positions of order-p elements.
///
/// The map is x(xi) = x0 + J xi with J = [x1 - x0, x2 - x0, x3 - x0] (columns), xi the reference
/// coordinates (x, y, z) = (L1, L2, L3). Higher-order elements are straight-sided here: their
/// edge and face nodes sit at the affine images of the reference nodes, so J is constant over
/// the element for every order. With d xi_k / d x_i = Jinv[k][i], the chain rule gives physical
/// gradients dN/dx_i = sum_k Jinv[k][i] dN/dxi_k, i.e. grad_x N = J^{-T} grad_xi N.

#include "core/types.hpp"
#include "fem/lagrange_tet.hpp"
#include "fem/small_matrix.hpp"

namespace edn {

/// The affine map of one tetrahedron: Jacobian, its inverse and determinant.
template <class T> struct TetGeometry {
    Mat3<T> jacobian;         ///< J = [x1 - x0, x2 - x0, x3 - x0] (columns)
    Mat3<T> inverse_jacobian; ///< J^{-1}; meaningless when det_jacobian == 0
    T det_jacobian;           ///< det J = 6 * signed volume; > 0 for a positively oriented tet
};

/// Jacobian of the map from the reference tet to the tet with vertex positions X[4][3].
template <class T> EDN_HOST_DEVICE constexpr Mat3<T> tet_jacobian(const T X[4][3]) {
    Mat3<T> J{};
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) J.m[r][c] = X[c + 1][r] - X[0][r];
    return J;
}

/// Jacobian, determinant and inverse of the tet X[4][3]. No check: callers reject det <= 0
/// (inverted or degenerate elements) before using inverse_jacobian.
template <class T> EDN_HOST_DEVICE constexpr TetGeometry<T> tet_geometry(const T X[4][3]) {
    TetGeometry<T> g{};
    g.jacobian = tet_jacobian(X);
    g.det_jacobian = det(g.jacobian);
    g.inverse_jacobian = inverse(g.jacobian, g.det_jacobian);
    return g;
}

/// Signed volume det(J) / 6 of the tet X[4][3] (positive for positive orientation).
template <class T> EDN_HOST_DEVICE constexpr T tet_signed_volume(const T X[4][3]) {
    return det(tet_jacobian(X)) / T(6);
}

/// Physical gradients g[a] = J^{-T} ref_grad[a] of num_nodes shape functions.
/// @param[in]  geometry  the element's affine map
/// @param[in]  ref_grad  num_nodes by 3 gradients w.r.t. reference coordinates
/// @param[out] grad      num_nodes by 3 gradients w.r.t. physical coordinates
template <int NumNodes, class T>
EDN_HOST_DEVICE constexpr void physical_gradients(const TetGeometry<T>& geometry,
                                                  const T ref_grad[NumNodes][3],
                                                  T grad[NumNodes][3]) {
    const Mat3<T>& Ji = geometry.inverse_jacobian;
    for (int a = 0; a < NumNodes; ++a)
        for (int i = 0; i < 3; ++i)
            grad[a][i] = Ji.m[0][i] * ref_grad[a][0] + Ji.m[1][i] * ref_grad[a][1] +
                         Ji.m[2][i] * ref_grad[a][2];
}

/// Physical gradients of the order-P basis at barycentric point L of the tet with map geometry.
template <int P, class T>
EDN_HOST_DEVICE constexpr void shape_gradients(const TetGeometry<T>& geometry, const T L[4],
                                               T grad[LagrangeTet<P, T>::num_nodes][3]) {
    constexpr int m = LagrangeTet<P, T>::num_nodes;
    T ref[m][3] = {};
    LagrangeTet<P, T>::grad(L, ref);
    physical_gradients<m>(geometry, ref, grad);
}

/// Physical point sum_i L[i] X[i] of barycentric point L in the tet X[4][3].
template <class T>
EDN_HOST_DEVICE constexpr void barycentric_to_physical(const T X[4][3], const T L[4], T x[3]) {
    for (int r = 0; r < 3; ++r)
        x[r] = L[0] * X[0][r] + L[1] * X[1][r] + L[2] * X[2][r] + L[3] * X[3][r];
}

/// Positions of the num_nodes nodes of a straight-sided order-P tet with vertices X[4][3], in
/// the canonical local node order.
template <int P, class T>
EDN_HOST_DEVICE constexpr void element_node_positions(const T X[4][3],
                                                      T nodes[LagrangeTet<P, T>::num_nodes][3]) {
    for (int a = 0; a < LagrangeTet<P, T>::num_nodes; ++a) {
        T L[4] = {};
        local_node_barycentric(P, a, L);
        barycentric_to_physical(X, L, nodes[a]);
    }
}

} // namespace edn

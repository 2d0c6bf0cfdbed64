#pragma once
/// Lagrange shape functions of order p = 1, 2, 3 on the reference tetrahedron, in the project's
/// canonical local node order (the same order as engine/mesh/node_layout.hpp):
///   0..3   the cell's vertices;
///   then for each local edge (0,1),(0,2),(0,3),(1,2),(1,3),(2,3) its p-1 edge nodes, ordered
///          from the edge's first local vertex to its second (node m at v_i + (m+1)/p (v_j - v_i));
///   then (p = 3 only) one node per face, face i = the face opposite local vertex i (barycentric
///          1/3 on the other three vertices).
///
/// Reference tetrahedron: vertices (0,0,0), (1,0,0), (0,1,0), (0,0,1); barycentric coordinates
/// L0 = 1 - x - y - z, L1 = x, L2 = y, L3 = z. The bases are written in L:
///   p = 1: vertex i  N = Li
///   p = 2: vertex i  N = Li (2 Li - 1);             edge (i,j)  N = 4 Li Lj
///   p = 3: vertex i  N = 1/2 Li (3 Li - 1)(3 Li - 2); edge (i,j) node near i  N = 9/2 Li Lj (3 Li
///   - 1),
///          node near j  N = 9/2 Li Lj (3 Lj - 1);    face opposite l  N = 27 Li Lj Lk
/// Gradients with respect to the reference coordinates follow from dL0/dx = -1, dLk/dx_(k-1) = 1:
/// dN/dx_k = dN/dL_(k+1) - dN/dL_0.

#include "core/types.hpp"

namespace edn {

/// Number of Lagrange nodes of an order-p tetrahedron, (p+1)(p+2)(p+3)/6: 4, 10, 20 for p=1,2,3.
EDN_HOST_DEVICE constexpr int lagrange_tet_num_nodes(int order) {
    return (order + 1) * (order + 2) * (order + 3) / 6;
}

/// First (which = 0) or second (which = 1) local vertex of local edge e in the canonical edge
/// order (0,1),(0,2),(0,3),(1,2),(1,3),(2,3).
EDN_HOST_DEVICE constexpr int tet_edge_vertex(int edge, int which) {
    // A switch-free form: constexpr arrays at namespace scope are not readable from device code.
    const int first = edge < 3 ? 0 : (edge < 5 ? 1 : 2);
    const int second = edge < 3 ? edge + 1 : (edge < 5 ? edge - 1 : 3);
    return which == 0 ? first : second;
}

/// Integer barycentric multi-index alpha (sum = order; node position L = alpha / order) of local
/// node `local` of an order-p tet. Returns false (alpha untouched) when order or local is out of
/// range, since kernels cannot throw.
EDN_HOST_DEVICE constexpr bool local_node_multi_index(int order, int local, int alpha[4]) {
    if (order < 1 || order > 3 || local < 0 || local >= lagrange_tet_num_nodes(order)) return false;
    for (int i = 0; i < 4; ++i) alpha[i] = 0;
    if (local < 4) {
        alpha[local] = order;
        return true;
    }
    const int per_edge = order - 1;
    const int first_face = 4 + 6 * per_edge;
    if (local < first_face) {
        const int edge = (local - 4) / per_edge;
        const int m = (local - 4) % per_edge;
        alpha[tet_edge_vertex(edge, 0)] = order - (m + 1);
        alpha[tet_edge_vertex(edge, 1)] = m + 1;
        return true;
    }
    // order == 3: one node per face; face f is opposite local vertex f.
    const int face = local - first_face;
    for (int i = 0; i < 4; ++i) alpha[i] = (i == face) ? 0 : 1;
    return true;
}

/// Barycentric coordinates (weights of local vertices 0..3) of local node `local` of an order-p
/// tet, in the canonical local order. Returns false (out untouched) when out of range.
template <class T>
EDN_HOST_DEVICE constexpr bool local_node_barycentric(int order, int local, T out[4]) {
    int alpha[4] = {0, 0, 0, 0};
    if (!local_node_multi_index(order, local, alpha)) return false;
    for (int i = 0; i < 4; ++i) out[i] = T(alpha[i]) / T(order);
    return true;
}

/// Barycentric coordinates (L0, L1, L2, L3) of the reference point (x, y, z).
template <class T>
EDN_HOST_DEVICE constexpr void reference_to_barycentric(const T xi[3], T bary[4]) {
    bary[0] = T(1) - xi[0] - xi[1] - xi[2];
    bary[1] = xi[0];
    bary[2] = xi[1];
    bary[3] = xi[2];
}

/// Lagrange basis of order P on the reference tetrahedron, scalar type T.
template <int P, class T> struct LagrangeTet {
    static_assert(P >= 1 && P <= 3, "LagrangeTet: order must be 1, 2 or 3");

    /// Number of nodes (4, 10, 20).
    static constexpr int num_nodes = (P + 1) * (P + 2) * (P + 3) / 6;
    /// Polynomial order.
    static constexpr int order = P;

    /// Values N[a] at barycentric point L (L0+L1+L2+L3 = 1 is assumed, not checked).
    EDN_HOST_DEVICE static constexpr void eval(const T L[4], T N[num_nodes]) {
        if constexpr (P == 1) {
            for (int i = 0; i < 4; ++i) N[i] = L[i];
        } else if constexpr (P == 2) {
            for (int i = 0; i < 4; ++i) N[i] = L[i] * (T(2) * L[i] - T(1));
            for (int e = 0; e < 6; ++e)
                N[4 + e] = T(4) * L[tet_edge_vertex(e, 0)] * L[tet_edge_vertex(e, 1)];
        } else {
            for (int i = 0; i < 4; ++i)
                N[i] = T(0.5) * L[i] * (T(3) * L[i] - T(1)) * (T(3) * L[i] - T(2));
            for (int e = 0; e < 6; ++e) {
                const T li = L[tet_edge_vertex(e, 0)];
                const T lj = L[tet_edge_vertex(e, 1)];
                N[4 + 2 * e] = T(4.5) * li * lj * (T(3) * li - T(1));
                N[4 + 2 * e + 1] = T(4.5) * li * lj * (T(3) * lj - T(1));
            }
            N[16] = T(27) * L[1] * L[2] * L[3];
            N[17] = T(27) * L[0] * L[2] * L[3];
            N[18] = T(27) * L[0] * L[1] * L[3];
            N[19] = T(27) * L[0] * L[1] * L[2];
        }
    }

    /// Partial derivatives dNdL[a][i] = dN_a / dL_i, treating L0..L3 as independent variables
    /// (the building block of reference and physical gradients).
    EDN_HOST_DEVICE static constexpr void grad_barycentric(const T L[4], T dNdL[num_nodes][4]) {
        for (int a = 0; a < num_nodes; ++a)
            for (int i = 0; i < 4; ++i) dNdL[a][i] = T(0);
        if constexpr (P == 1) {
            for (int i = 0; i < 4; ++i) dNdL[i][i] = T(1);
        } else if constexpr (P == 2) {
            for (int i = 0; i < 4; ++i) dNdL[i][i] = T(4) * L[i] - T(1);
            for (int e = 0; e < 6; ++e) {
                const int i = tet_edge_vertex(e, 0);
                const int j = tet_edge_vertex(e, 1);
                dNdL[4 + e][i] = T(4) * L[j];
                dNdL[4 + e][j] = T(4) * L[i];
            }
        } else {
            // d/dL [1/2 L (3L-1)(3L-2)] = 1/2 (27 L^2 - 18 L + 2)
            for (int i = 0; i < 4; ++i)
                dNdL[i][i] = T(0.5) * ((T(27) * L[i] - T(18)) * L[i] + T(2));
            for (int e = 0; e < 6; ++e) {
                const int i = tet_edge_vertex(e, 0);
                const int j = tet_edge_vertex(e, 1);
                const T li = L[i];
                const T lj = L[j];
                // 9/2 Li Lj (3 Li - 1): d/dLi = 9/2 Lj (6 Li - 1), d/dLj = 9/2 Li (3 Li - 1)
                dNdL[4 + 2 * e][i] = T(4.5) * lj * (T(6) * li - T(1));
                dNdL[4 + 2 * e][j] = T(4.5) * li * (T(3) * li - T(1));
                dNdL[4 + 2 * e + 1][j] = T(4.5) * li * (T(6) * lj - T(1));
                dNdL[4 + 2 * e + 1][i] = T(4.5) * lj * (T(3) * lj - T(1));
            }
            for (int f = 0; f < 4; ++f) {
                // 27 times the product of the three barycentrics other than f.
                for (int i = 0; i < 4; ++i) {
                    if (i == f) continue;
                    T prod = T(27);
                    for (int k = 0; k < 4; ++k)
                        if (k != f && k != i) prod *= L[k];
                    dNdL[16 + f][i] = prod;
                }
            }
        }
    }

    /// Gradients dN[a][k] = dN_a / dx_k with respect to the reference coordinates (x, y, z),
    /// evaluated at barycentric point L.
    EDN_HOST_DEVICE static constexpr void grad(const T L[4], T dN[num_nodes][3]) {
        T dNdL[num_nodes][4] = {};
        grad_barycentric(L, dNdL);
        for (int a = 0; a < num_nodes; ++a)
            for (int k = 0; k < 3; ++k) dN[a][k] = dNdL[a][k + 1] - dNdL[a][0];
    }
};

} // namespace edn

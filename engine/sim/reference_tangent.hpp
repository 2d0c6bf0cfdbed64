#pragma once
/// The element Hessian of order-p tets as an action, without its blocks (issue 14, p >= 2): at
/// each quadrature point the material tangent is kept in reference coordinates, 45 floats, and
///   K_ab = sum_q sum_{c,e} dN_a,c(q) dN_b,e(q) B_ce(q),   B_ce = w U Kf(h_c, h_e) U^T,
/// the frame block (frame_block) of two virtual nodes whose reference gradients are the unit
/// vectors: h_c = V^T J^-T e_c (since g_a = J^-T dN_a, h_a = sum_c dN_a,c h_c and frame_block is
/// bilinear in (h_a, h_b)); B_ec = B_ce^T. The element's product is then
///   s_c(q) = sum_e B_ce(q) gh_e(q),  gh_e(q) = sum_b dN_b,e(q) x_b,
///   (K x)_a = sum_q sum_c dN_a,c(q) s_c(q),
/// 2 x 9m + 81 multiply-adds per point against the 9 m^2 of the blocks (p = 3: 441 against
/// 3600), and 45 values per point to read against 9 m^2 / 2 per element (p = 3, 14 points: 630
/// floats against 1890). The 45 values: the diagonal blocks B_00, B_11, B_22 (symmetric, 6 each:
/// (0,0), (0,1), (0,2), (1,1), (1,2), (2,2)) at 0, 6, 12, then B_01, B_02, B_12 row-major at 18,
/// 27, 36.
#include "sim/element_kernels.hpp"

#include <vector>

namespace edn {

inline constexpr int kReferenceTangentValues = 45;

/// The 45 values of one point (layout above) from the tangent's SVD frame, the element's inverse
/// Jacobian and w = weight |det J|.
template <class T>
EDN_HOST_DEVICE inline void reference_tangent(const TangentFrame<T>& fr,
                                              const T (*inverse_jacobian)[3], T w, T d[45]) {
    const Mat3<T>& V = fr.svd.V;
    T h[3][3]; // h[c] = V^T (J^-T e_c): J^-T e_c is row c of J^-1
    for (int c = 0; c < 3; ++c)
        for (int k = 0; k < 3; ++k)
            h[c][k] = V.m[0][k] * inverse_jacobian[c][0] + V.m[1][k] * inverse_jacobian[c][1] +
                      V.m[2][k] * inverse_jacobian[c][2];
    for (int c = 0; c < 3; ++c) {
        T K[9];
        frame_block(fr, h[c], h[c], w, K);
        T* out = d + 6 * c;
        out[0] = K[0], out[1] = K[1], out[2] = K[2], out[3] = K[4], out[4] = K[5], out[5] = K[8];
    }
    frame_block(fr, h[0], h[1], w, d + 18);
    frame_block(fr, h[0], h[2], w, d + 27);
    frame_block(fr, h[1], h[2], w, d + 36);
}

/// s_c = sum_e B_ce gh_e for one point's values d (gh[e], s[c]: 3-vectors).
template <class T>
EDN_HOST_DEVICE inline void apply_reference_tangent(const T d[45], const T (*gh)[3], T (*s)[3]) {
    for (int c = 0; c < 3; ++c) {
        const T* D = d + 6 * c; // B_cc
        s[c][0] = D[0] * gh[c][0] + D[1] * gh[c][1] + D[2] * gh[c][2];
        s[c][1] = D[1] * gh[c][0] + D[3] * gh[c][1] + D[4] * gh[c][2];
        s[c][2] = D[2] * gh[c][0] + D[4] * gh[c][1] + D[5] * gh[c][2];
    }
    // Off-diagonal pairs (c, e), c < e: s_c += B_ce gh_e, s_e += B_ce^T gh_c.
    constexpr int pairs[3][3] = {{0, 1, 18}, {0, 2, 27}, {1, 2, 36}};
    for (const auto& pr : pairs) {
        const int c = pr[0], e = pr[1];
        const T* B = d + pr[2];
        for (int i = 0; i < 3; ++i) {
            s[c][i] += B[3 * i] * gh[e][0] + B[3 * i + 1] * gh[e][1] + B[3 * i + 2] * gh[e][2];
            s[e][i] += B[i] * gh[c][0] + B[3 + i] * gh[c][1] + B[6 + i] * gh[c][2];
        }
    }
}

/// (K x) of one element from its points' values (`d`, 45 per point), the reference shape
/// gradients dN ((q m + a) 3 + c, reference_gradient_table's layout) and its node values x
/// (m x 3): the CPU reference of the CUDA product (cuda/matrix_free.cu).
template <int P, class T>
inline void reference_tangent_product(const T* d, int num_points, const T* dN, const T (*x)[3],
                                      T (*y)[3]) {
    constexpr int m = lagrange_tet_num_nodes(P);
    for (int a = 0; a < m; ++a) y[a][0] = y[a][1] = y[a][2] = T(0);
    for (int q = 0; q < num_points; ++q) {
        const T* dq = dN + static_cast<std::size_t>(q) * m * 3;
        T gh[3][3] = {};
        for (int b = 0; b < m; ++b)
            for (int e = 0; e < 3; ++e)
                for (int k = 0; k < 3; ++k) gh[e][k] += dq[3 * b + e] * x[b][k];
        T s[3][3];
        apply_reference_tangent(d + static_cast<std::size_t>(q) * kReferenceTangentValues, gh, s);
        for (int a = 0; a < m; ++a)
            for (int c = 0; c < 3; ++c)
                for (int i = 0; i < 3; ++i) y[a][i] += dq[3 * a + c] * s[c][i];
    }
}

/// The full 3 x 3 block B_ce (row-major) of one point's values d (B_ec = B_ce^T).
template <class T>
EDN_HOST_DEVICE inline void reference_tangent_block(const T* d, int c, int e, T B[9]) {
    if (c == e) {
        const T* D = d + 6 * c;
        const T full[9] = {D[0], D[1], D[2], D[1], D[3], D[4], D[2], D[4], D[5]};
        for (int i = 0; i < 9; ++i) B[i] = full[i];
        return;
    }
    const int lo = c < e ? c : e, hi = c < e ? e : c;
    const T* S = d + (lo == 0 ? (hi == 1 ? 18 : 27) : 36);
    for (int r = 0; r < 3; ++r)
        for (int k = 0; k < 3; ++k) B[3 * r + k] = c < e ? S[3 * r + k] : S[3 * k + r];
}

/// M_c = sum_e g_e B_ce (three row-major 3 x 3 blocks) of one point's values d: with g the
/// reference gradient of a scalar field w, the element's tangent applied to w I before the test
/// gradients, (K_e (w I))_a = sum_q sum_c dN_a,c M_c.
template <class T>
EDN_HOST_DEVICE inline void reference_tangent_columns(const T* d, const T g[3], T (*M)[9]) {
    for (int c = 0; c < 3; ++c) {
        for (int i = 0; i < 9; ++i) M[c][i] = T(0);
        for (int e = 0; e < 3; ++e) {
            T B[9];
            reference_tangent_block(d, c, e, B);
            for (int i = 0; i < 9; ++i) M[c][i] += g[e] * B[i];
        }
    }
}

/// sum_ce a_c a_e B_ce (row-major 3 x 3) of one point's values d: with a = dN_a a node's
/// reference gradient, the point's share of the diagonal block K_aa.
template <class T>
EDN_HOST_DEVICE inline void reference_tangent_diagonal(const T* d, const T a[3], T k[9]) {
    T M[3][9];
    reference_tangent_columns(d, a, M);
    for (int i = 0; i < 9; ++i) k[i] = a[0] * M[0][i] + a[1] * M[1][i] + a[2] * M[2][i];
}

/// An element's blocks from its points' values (the CPU reference of the CUDA blocks kernel,
/// cuda/element_cooperative.cuh): K[(a m + b) 9] = K_ab (row-major 3 x 3), formed as the kernel
/// does: per point and node a the columns M_a = reference_tangent_columns(d, dN_a), then
/// K_ba += sum_c dN_b,c M_a[c] (27 multiply-adds a pair against the 81 of dN_a,c dN_b,e B_ce).
template <int P, class T>
inline void reference_tangent_blocks(const T* d, int num_points, const T* dN, T* K) {
    constexpr int m = lagrange_tet_num_nodes(P);
    for (int i = 0; i < m * m * 9; ++i) K[i] = T(0);
    for (int q = 0; q < num_points; ++q) {
        const T* dq = dN + static_cast<std::size_t>(q) * m * 3;
        const T* v = d + static_cast<std::size_t>(q) * kReferenceTangentValues;
        for (int a = 0; a < m; ++a) {
            T M[3][9];
            reference_tangent_columns(v, dq + 3 * a, M);
            for (int b = 0; b < m; ++b)
                for (int c = 0; c < 3; ++c)
                    for (int i = 0; i < 9; ++i) K[(b * m + a) * 9 + i] += dq[3 * b + c] * M[c][i];
        }
    }
}

/// An element's shares of p-multigrid's re-value without its blocks (the CPU reference of
/// cuda::MatrixFreeOperator::galerkin): parts[(a 4 + c) 9] = (K_e P_e)_ac (row-major 3 x 3),
/// P_e the element's transfer from its 4 vertices, node b taking w[4 b + c] I from vertex c
/// (zero rows and columns where pinned), and diag[9 a] = K_aa, from its points' values `d` and
/// the reference gradients dN (reference_tangent_product's layouts).
template <int P, class T>
inline void reference_galerkin_parts(const T* d, int num_points, const T* dN, const T* w, T* parts,
                                     T* diag) {
    constexpr int m = lagrange_tet_num_nodes(P);
    for (int i = 0; i < m * 36; ++i) parts[i] = T(0);
    for (int i = 0; i < m * 9; ++i) diag[i] = T(0);
    for (int q = 0; q < num_points; ++q) {
        const T* dq = dN + static_cast<std::size_t>(q) * m * 3;
        const T* v = d + static_cast<std::size_t>(q) * kReferenceTangentValues;
        for (int c = 0; c < 4; ++c) {
            T g[3] = {};
            for (int b = 0; b < m; ++b)
                for (int e = 0; e < 3; ++e) g[e] += w[4 * b + c] * dq[3 * b + e];
            T M[3][9];
            reference_tangent_columns(v, g, M);
            for (int a = 0; a < m; ++a)
                for (int k = 0; k < 3; ++k)
                    for (int i = 0; i < 9; ++i)
                        parts[(a * 4 + c) * 9 + i] += dq[3 * a + k] * M[k][i];
        }
        for (int a = 0; a < m; ++a) {
            T k[9];
            reference_tangent_diagonal(v, dq + 3 * a, k);
            for (int i = 0; i < 9; ++i) diag[9 * a + i] += k[i];
        }
    }
}

/// Reference shape gradients dN_a/dxi of order P at every point of `rule`, as
/// table[(q * m + a) * 3 + d]: what the cooperative value kernel maps by each element's inverse
/// Jacobian (host side, uploaded once per order).
template <int P>
inline std::vector<double> reference_gradient_table(const QuadratureTet<double>& rule) {
    constexpr int m = lagrange_tet_num_nodes(P);
    std::vector<double> table(static_cast<std::size_t>(rule.num_points) * m * 3);
    for (int q = 0; q < rule.num_points; ++q) {
        double dN[m][3];
        LagrangeTet<P, double>::grad(rule.bary[q], dN);
        for (int a = 0; a < m; ++a)
            for (int d = 0; d < 3; ++d)
                table[(static_cast<std::size_t>(q) * m + a) * 3 + d] = dN[a][d];
    }
    return table;
}

} // namespace edn

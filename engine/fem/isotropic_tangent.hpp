#pragma once
/// The tangent dP/dF of an isotropic energy psi(sigma) assembled from its eigensystem in the
/// frame of the rotation-variant SVD F = U diag(sigma) V^T (Smith et al. 2019): the 3x3 block
/// H = d^2 psi / d sigma^2 on the directions vec(u_a v_a^T), and for each pair i < j the
/// eigenvalue alpha_ij on the symmetric direction vec(U (E_ij + E_ji) V^T)/sqrt 2 and beta_ij on
/// the skew one vec(U (E_ij - E_ji) V^T)/sqrt 2, where alpha = (psi_i - psi_j)/(sigma_i - sigma_j)
/// and beta = (psi_i + psi_j)/(sigma_i + sigma_j). Projecting to PSD is clamping alpha, beta at 0
/// and projecting H (the 9 directions are orthonormal).

#include "fem/polar_decomposition.hpp"
#include "fem/psd_projection.hpp"

namespace edn {

/// An isotropic tangent dP/dF in the frame of the rotation-variant SVD, for element kernels that
/// assemble U (...) U^T blocks directly instead of forming the 9x9 matrix: dP/dF = sum_ab H_ab
/// e_a e_b^T + sum_pairs (alpha s s^T + beta k k^T) with the directions of the file comment,
/// alpha and beta of each pair combined as (alpha + beta)/2 and (alpha - beta)/2.
template <class T> struct TangentFrame {
    Svd3<T> svd;  ///< F = U diag(sigma) V^T (rotation variant)
    T H[3][3];    ///< d2psi/dsigma^2 on the directions u_k v_k^T (projected on request)
    T coupled[3]; ///< pairs (0,1), (0,2), (1,2): (alpha + beta) / 2
    T crossed[3]; ///< pairs (0,1), (0,2), (1,2): (alpha - beta) / 2
};

/// Fills frame.coupled and frame.crossed from the pair eigenvalues alpha, beta (pairs (0,1),
/// (0,2), (1,2)), clamping them at 0 first when `project`.
template <class T>
EDN_HOST_DEVICE inline void set_frame_pairs(const T alpha_in[3], const T beta_in[3], bool project,
                                            TangentFrame<T>& frame) {
    for (int pair = 0; pair < 3; ++pair) {
        T alpha = alpha_in[pair], beta = beta_in[pair];
        if (project) {
            if (alpha < T(0)) alpha = T(0);
            if (beta < T(0)) beta = T(0);
        }
        frame.coupled[pair] = T(0.5) * (alpha + beta);
        frame.crossed[pair] = T(0.5) * (alpha - beta);
    }
}

/// e = vec(U (a E_ij + b E_ji) V^T): e[3r+c] = a U_ri V_cj + b U_rj V_ci (for i == j: U_ri V_ci).
template <class T>
EDN_HOST_DEVICE inline void svd_frame_direction(const Svd3<T>& svd, int i, int j, T a, T b,
                                                T e[9]) {
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c)
            e[3 * r + c] =
                (i == j) ? svd.U.m[r][i] * svd.V.m[c][i]
                         : a * svd.U.m[r][i] * svd.V.m[c][j] + b * svd.U.m[r][j] * svd.V.m[c][i];
}

/// D += scale * a b^T for 9-vectors.
template <class T>
EDN_HOST_DEVICE inline void add_rank_one9(T scale, const T a[9], const T b[9], T D[9][9]) {
    if (scale == T(0)) return;
    for (int x = 0; x < 9; ++x)
        for (int y = 0; y < 9; ++y) D[x][y] += scale * a[x] * b[y];
}

/// dPdF = the tangent of the eigensystem (overwritten). Pairs are ordered (0,1), (0,2), (1,2).
/// With `project`, H is projected to PSD and alpha, beta are clamped at 0.
template <class T>
EDN_HOST_DEVICE inline void assemble_isotropic_tangent(const Svd3<T>& svd, T H[3][3],
                                                       const T alpha_in[3], const T beta_in[3],
                                                       bool project, T dPdF[9][9]) {
    for (int x = 0; x < 9; ++x)
        for (int y = 0; y < 9; ++y) dPdF[x][y] = T(0);
    if (project) project_psd<3>(H);
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) {
            T ea[9], eb[9];
            svd_frame_direction(svd, a, a, T(1), T(0), ea);
            svd_frame_direction(svd, b, b, T(1), T(0), eb);
            add_rank_one9(H[a][b], ea, eb, dPdF);
        }
    const T inv_sqrt2 = T(0.70710678118654752440);
    int pair = 0;
    for (int i = 0; i < 2; ++i)
        for (int j = i + 1; j < 3; ++j, ++pair) {
            T alpha = alpha_in[pair], beta = beta_in[pair];
            if (project) {
                if (alpha < T(0)) alpha = T(0);
                if (beta < T(0)) beta = T(0);
            }
            T e[9];
            svd_frame_direction(svd, i, j, inv_sqrt2, inv_sqrt2, e);
            add_rank_one9(alpha, e, e, dPdF);
            svd_frame_direction(svd, i, j, inv_sqrt2, -inv_sqrt2, e);
            add_rank_one9(beta, e, e, dPdF);
        }
}

} // namespace edn

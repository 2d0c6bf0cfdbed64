#pragma once
/// Co-rotational material per quadrature point: energy density, first Piola-Kirchhoff stress and
/// its exact derivative dP/dF (including dR/dF), an analytic PSD projection of that derivative,
/// and the cheaper "fixed-R" tangent, for host and device.
///
///   psi(F) = mu ||F - R||^2 + lambda/2 tr(R^T F - I)^2,    F = R S (polar decomposition),
/// with R from the rotation-variant SVD F = U diag(sigma) V^T, R = U V^T (polar_decomposition.hpp),
/// which stays a proper rotation for inverted F (sigma_2 < 0). In singular values,
///   psi = mu sum_k (sigma_k - 1)^2 + lambda/2 s^2,   s = sigma_0 + sigma_1 + sigma_2 - 3,
///   P   = U diag(psi_k) V^T = 2 mu (F - R) + lambda s R,   psi_k = 2 mu (sigma_k - 1) + lambda s.
///
/// Exact tangent (isotropic energies; Irving/Teran 2004, Smith et al. 2019). In the rotated frame
/// dF^ = U^T dF V, dP^ = U^T dP V:
///   diagonal:    dP^_aa = sum_b H_ab dF^_bb,   H = d^2 psi / d sigma^2 = 2 mu I + lambda 1 1^T;
///   pair i < j:  on the symmetric part (dF^_ij + dF^_ji)/sqrt 2 the eigenvalue
///                alpha = (psi_i - psi_j)/(sigma_i - sigma_j) = 2 mu (no division needed), on the
///                skew part (dF^_ij - dF^_ji)/sqrt 2 the eigenvalue
///                beta = (psi_i + psi_j)/(sigma_i + sigma_j) = 2 mu + (2 lambda s - 4 mu)/(sigma_i
///                + sigma_j).
/// (From dF^ = Omega_U Sigma + dSigma - Sigma Omega_V with Omega_U, Omega_V skew.) The 9x9 tangent
/// is then the sum of rank-one terms e e^T over these 9 eigenvectors mapped back by
/// vec(U M V^T). R is not differentiable where sigma_i + sigma_j = 0 (an inverted element with
/// |sigma_2| = sigma_1, or rank <= 1), and beta blows up there: the denominator is clamped to
/// sqrt(eps) so the tangent stays finite (exact everywhere else).
///
/// PSD projection is analytic in this frame: clamp beta (and alpha) at 0 and project the 3x3 H
/// (PSD anyway for nu > -1). It equals the Jacobi projection of the 9x9 tangent, at a fraction of
/// the cost, because the 9 vectors above are an orthonormal eigenbasis of the tangent.
///
/// The fixed-R tangent 2 mu I + lambda vec(R) vec(R)^T (differentiating P with R held fixed) is
/// not the derivative of P; it is PSD and cheap, offered as CorotationalTangent::fixed_rotation
/// for simulation, never for export.
///
/// Order p > 1: the rotation is taken per quadrature point, from that point's F. This keeps the
/// element energy a sum of point energies, so gradient and Hessian are the exact derivatives of
/// one energy (a per-element R from the linear part would make every point's energy depend on all
/// vertex positions through R, and the exact Hessian would need dR/dx of that other F), makes the
/// element exactly invariant under rigid rotations, and for p = 1 (F constant) is the same thing.

#include "core/types.hpp"
#include "fem/isotropic_tangent.hpp"
#include "fem/linear_elasticity.hpp"
#include "fem/polar_decomposition.hpp"
#include "fem/psd_projection.hpp"
#include "fem/small_matrix.hpp"

#include <cmath>
#include <limits>

namespace edn {

/// Which tangent the co-rotational material returns.
enum class CorotationalTangent {
    exact,         ///< dP/dF including dR/dF (the Hessian of psi; use for export)
    fixed_rotation ///< 2 mu I + lambda vec(R) vec(R)^T: R held fixed; PSD, not exact
};

/// The co-rotational stress and tangent in the SVD frame, for element kernels that assemble
/// U (...) U^T blocks directly instead of forming the 9x9 dP/dF (same eigensystem as evaluate).
template <class T> struct CorotationalFrame : TangentFrame<T> {
    T dpsi[3]; ///< dpsi/dsigma_k, so P = U diag(dpsi) V^T
};

/// Co-rotational material (see the file comment).
template <class T> struct Corotational {
    LameParameters<T> lame;                                   ///< Lame parameters (lambda, mu)
    CorotationalTangent tangent = CorotationalTangent::exact; ///< tangent variant

    /// Energy density mu sum (sigma_k - 1)^2 + lambda/2 (sum sigma_k - 3)^2.
    EDN_HOST_DEVICE inline T energy_density(const Mat3<T>& F) const {
        const Svd3<T> svd = svd3_rotation_variant(F);
        return energy_from_singular_values(svd.sigma);
    }

    /// First Piola-Kirchhoff stress P = 2 mu (F - R) + lambda tr(R^T F - I) R.
    EDN_HOST_DEVICE inline Mat3<T> first_piola(const Mat3<T>& F) const {
        T psi;
        Mat3<T> P;
        evaluate(F, psi, P, nullptr, false);
        return P;
    }

    /// Tangent dPdF[3i+j][3k+l] = dP_ij / dF_kl of the selected variant, not projected.
    EDN_HOST_DEVICE inline void first_piola_derivative(const Mat3<T>& F, T dPdF[9][9]) const {
        T psi;
        Mat3<T> P;
        evaluate(F, psi, P, dPdF, false);
    }

    /// Energy density, stress and (when dPdF is not null) tangent from one SVD; the tangent is
    /// projected onto the PSD cone (analytically, see the file comment) when project_psd_tangent.
    EDN_HOST_DEVICE inline void evaluate(const Mat3<T>& F, T& psi, Mat3<T>& P, T (*dPdF)[9],
                                         bool project_psd_tangent) const {
        const Svd3<T> svd = svd3_rotation_variant(F);
        const Vec3T<T>& sigma = svd.sigma;
        const T s = sigma[0] + sigma[1] + sigma[2] - T(3);
        psi = energy_from_singular_values(sigma);
        T dpsi[3];
        for (int k = 0; k < 3; ++k) dpsi[k] = T(2) * lame.mu * (sigma[k] - T(1)) + lame.lambda * s;
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) {
                T v = T(0);
                for (int k = 0; k < 3; ++k) v += svd.U.m[i][k] * dpsi[k] * svd.V.m[j][k];
                P.m[i][j] = v;
            }
        if (dPdF == nullptr) return;
        for (int x = 0; x < 9; ++x)
            for (int y = 0; y < 9; ++y) dPdF[x][y] = T(0);
        if (tangent == CorotationalTangent::fixed_rotation) {
            const Mat3<T> R = svd.U * transpose(svd.V);
            for (int x = 0; x < 9; ++x) {
                for (int y = 0; y < 9; ++y)
                    dPdF[x][y] = lame.lambda * R.m[x / 3][x % 3] * R.m[y / 3][y % 3];
                dPdF[x][x] += T(2) * lame.mu;
            }
            if (project_psd_tangent) project_psd<9>(dPdF);
            return;
        }
        // Diagonal block H = 2 mu I + lambda 1 1^T on the directions vec(u_a v_a^T).
        T H[3][3];
        for (int a = 0; a < 3; ++a)
            for (int b = 0; b < 3; ++b) H[a][b] = lame.lambda + (a == b ? T(2) * lame.mu : T(0));
        if (project_psd_tangent && !h_is_psd()) project_psd<3>(H); // see evaluate_frame
        for (int a = 0; a < 3; ++a)
            for (int b = 0; b < 3; ++b) {
                T ea[9];
                T eb[9];
                frame_direction(svd, a, a, T(1), T(0), ea);
                frame_direction(svd, b, b, T(1), T(0), eb);
                add_rank_one(H[a][b], ea, eb, dPdF);
            }
        // Pairs: symmetric direction (eigenvalue alpha), skew direction (eigenvalue beta).
        constexpr T eps = std::numeric_limits<T>::epsilon();
        const T min_sum = sqrt_eps(eps);
        const T inv_sqrt2 = T(0.70710678118654752440);
        for (int i = 0; i < 2; ++i)
            for (int j = i + 1; j < 3; ++j) {
                T sum = sigma[i] + sigma[j];
                if (!(sum > min_sum)) sum = min_sum;
                T alpha = T(2) * lame.mu;
                T beta = T(2) * lame.mu + (T(2) * lame.lambda * s - T(4) * lame.mu) / sum;
                if (project_psd_tangent) {
                    if (alpha < T(0)) alpha = T(0);
                    if (beta < T(0)) beta = T(0);
                }
                T e[9];
                frame_direction(svd, i, j, inv_sqrt2, inv_sqrt2, e);
                add_rank_one(alpha, e, e, dPdF);
                frame_direction(svd, i, j, inv_sqrt2, -inv_sqrt2, e);
                add_rank_one(beta, e, e, dPdF);
            }
    }

    /// Energy density and (when with_tangent) the exact tangent's eigensystem in the SVD frame:
    /// the dP/dF of evaluate is sum_ab H_ab e_a e_b^T + sum_pairs (alpha s s^T + beta k k^T) with
    /// the directions of the file comment; coupled/crossed combine alpha and beta per pair.
    EDN_HOST_DEVICE inline T evaluate_frame(const Mat3<T>& F, bool with_tangent,
                                            bool project_psd_tangent,
                                            CorotationalFrame<T>& out) const {
        out.svd = svd3_rotation_variant(F);
        const Vec3T<T>& sigma = out.svd.sigma;
        const T s = sigma[0] + sigma[1] + sigma[2] - T(3);
        for (int k = 0; k < 3; ++k)
            out.dpsi[k] = T(2) * lame.mu * (sigma[k] - T(1)) + lame.lambda * s;
        if (with_tangent) {
            for (int a = 0; a < 3; ++a)
                for (int b = 0; b < 3; ++b)
                    out.H[a][b] = lame.lambda + (a == b ? T(2) * lame.mu : T(0));
            // H = 2 mu I + lambda 1 1^T has eigenvalues 2 mu (twice) and 2 mu + 3 lambda: the
            // projection is the identity unless one is negative (never for valid E, nu).
            if (project_psd_tangent && !h_is_psd()) project_psd<3>(out.H);
            constexpr T eps = std::numeric_limits<T>::epsilon();
            const T min_sum = sqrt_eps(eps);
            T alpha[3], beta[3];
            int pair = 0;
            for (int i = 0; i < 2; ++i)
                for (int j = i + 1; j < 3; ++j, ++pair) {
                    T sum = sigma[i] + sigma[j];
                    if (!(sum > min_sum)) sum = min_sum;
                    alpha[pair] = T(2) * lame.mu;
                    beta[pair] = T(2) * lame.mu + (T(2) * lame.lambda * s - T(4) * lame.mu) / sum;
                }
            set_frame_pairs(alpha, beta, project_psd_tangent, out);
        }
        return energy_from_singular_values(sigma);
    }

    /// The tangent of evaluate (either variant) in an SVD frame (TangentFrame), projected when
    /// `project`. The fixed-R tangent 2 mu I + lambda vec(R) vec(R)^T is one too: in the frame
    /// U = R, V = I, vec(R) = sum_k vec(u_k v_k^T), so H = 2 mu I + lambda 1 1^T and every pair
    /// has alpha = beta = 2 mu.
    EDN_HOST_DEVICE inline void tangent_frame(const Mat3<T>& F, bool project,
                                              TangentFrame<T>& frame) const {
        if (tangent == CorotationalTangent::exact) {
            CorotationalFrame<T> full;
            evaluate_frame(F, true, project, full);
            frame = full;
            return;
        }
        const Svd3<T> svd = svd3_rotation_variant(F);
        frame.svd.U = svd.U * transpose(svd.V);
        frame.svd.V = mat3_identity<T>();
        frame.svd.sigma = svd.sigma;
        for (int a = 0; a < 3; ++a)
            for (int b = 0; b < 3; ++b)
                frame.H[a][b] = lame.lambda + (a == b ? T(2) * lame.mu : T(0));
        if (project && !h_is_psd()) project_psd<3>(frame.H);
        const T two_mu[3] = {T(2) * lame.mu, T(2) * lame.mu, T(2) * lame.mu};
        set_frame_pairs(two_mu, two_mu, project, frame);
    }

    /// mu sum (sigma_k - 1)^2 + lambda/2 (sum sigma_k - 3)^2.
    EDN_HOST_DEVICE inline T energy_from_singular_values(const Vec3T<T>& sigma) const {
        const T s = sigma[0] + sigma[1] + sigma[2] - T(3);
        T dev = T(0);
        for (int k = 0; k < 3; ++k) dev += (sigma[k] - T(1)) * (sigma[k] - T(1));
        return lame.mu * dev + T(0.5) * lame.lambda * s * s;
    }

private:
    /// Whether 2 mu I + lambda 1 1^T is PSD (its eigenvalues 2 mu and 2 mu + 3 lambda >= 0).
    EDN_HOST_DEVICE inline bool h_is_psd() const {
        return lame.mu >= T(0) && T(2) * lame.mu + T(3) * lame.lambda >= T(0);
    }

    /// sqrt(eps) without a runtime sqrt of a constant: eps is 2^-23 or 2^-52.
    EDN_HOST_DEVICE static constexpr T sqrt_eps(T eps) {
        return eps < T(1e-10) ? T(1.4901161193847656e-8) : T(3.4526698300124393e-4);
    }

    /// e = vec(U (a_coef E_ij + b_coef E_ji) V^T), i.e. e[3r+c] = a_coef U_ri V_cj + b_coef U_rj
    /// V_ci (E_ij the unit matrix of entry (i, j)).
    EDN_HOST_DEVICE static inline void frame_direction(const Svd3<T>& svd, int i, int j, T a_coef,
                                                       T b_coef, T e[9]) {
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c)
                e[3 * r + c] = (i == j) ? svd.U.m[r][i] * svd.V.m[c][i]
                                        : a_coef * svd.U.m[r][i] * svd.V.m[c][j] +
                                              b_coef * svd.U.m[r][j] * svd.V.m[c][i];
    }

    /// D += scale * a b^T for 9-vectors a, b.
    EDN_HOST_DEVICE static inline void add_rank_one(T scale, const T a[9], const T b[9],
                                                    T D[9][9]) {
        if (scale == T(0)) return;
        for (int x = 0; x < 9; ++x)
            for (int y = 0; y < 9; ++y) D[x][y] += scale * a[x] * b[y];
    }
};

} // namespace edn

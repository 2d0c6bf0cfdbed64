#pragma once
/// Compressible neo-Hookean material (Bonet and Wood; Cecka et al. 2011, section 16.4.1) with a
/// documented extension through inversion, per quadrature point: energy density, first
/// Piola-Kirchhoff stress and its derivative dP/dF, for host and device.
///
///   psi(F) = mu/2 (tr F^T F - 3) - mu l(J) + lambda/2 l(J)^2,    J = det F,
///   l(J)   = ln J                                              for J >= J0,
///   l(J)   = ln J0 + (J - J0)/J0 - (J - J0)^2 / (2 J0^2)        for J <  J0,
/// with J0 = extension_jacobian (default 1e-3). For J >= J0 this is exactly Cecka's W. Below
/// J0, ln J is replaced by its second-order Taylor polynomial at J0, so l, l' and l'' are
/// continuous at J0: energy, stress and tangent are continuous (psi is C2) and finite for every
/// F, including det F = 0 and inverted F. The extension keeps resisting inversion: l' > 0 and
/// lambda l - mu < 0 for J < J0 (l < ln J0 < 0 there, lambda >= 0), so dpsi/dJ < 0 pushes J
/// back up, and psi grows like lambda (J - J0)^4 / (8 J0^4) as J -> -infinity. J0 = 1e-3 is a
/// compromise: every element compressed to less than 0.1% of its volume is outside the exact
/// law (so exports of any reasonable displacement see exactly W), while the extension's
/// stiffness, about lambda (1 - ln J0) / J0^2 ~ 8e6 lambda at J0, stays finite in float. Caveat:
/// deep in the extension the curvature grows like lambda J^2 / J0^4 (finite, but stiff: Newton
/// on deeply inverted elements is badly conditioned even after PSD projection); in float, psi
/// overflows only for |J| beyond about 1e4 (lambda up to 1e6). Raise J0 for a softer extension.
///
/// Derivatives are written with the cofactor matrix C = cof F = dJ/dF (no F^{-1}, hence finite
/// for singular F):
///   P       = mu F + (lambda l - mu) l' C
///   dP/dF   = mu I (x) I + ((lambda l - mu) l'' + lambda l'^2) C (x) C + (lambda l - mu) l' dC/dF
///   dC_ij/dF_kl = e_ikn e_jlq F_nq   (e the Levi-Civita symbol).
/// With l = ln J this is Cecka's Eq. (7). Index convention of the 9x9 tangent (all files):
/// dPdF[3 i + j][3 k + l] = d P_ij / d F_kl = d^2 psi / d F_ij d F_kl (symmetric).

#include "core/types.hpp"
#include "fem/isotropic_tangent.hpp"
#include "fem/linear_elasticity.hpp"
#include "fem/psd_projection.hpp"
#include "fem/small_matrix.hpp"

#include <cmath>

namespace edn {

/// Levi-Civita symbol e_ijk for indices 0..2: +1 for even, -1 for odd permutations, else 0.
EDN_HOST_DEVICE constexpr int levi_civita(int i, int j, int k) {
    return (i - j) * (j - k) * (k - i) / 2;
}

/// Cofactor matrix cof F = det(F) F^{-T} = adjugate(F)^T, defined for every F.
template <class T> EDN_HOST_DEVICE constexpr Mat3<T> cofactor(const Mat3<T>& F) {
    return transpose(adjugate(F));
}

/// Adds scale * dC/dF (C = cof F) to the 9x9 matrix D: D[3i+j][3k+l] += scale e_ikn e_jlq F_nq.
template <class T>
EDN_HOST_DEVICE constexpr void add_cofactor_derivative(const Mat3<T>& F, T scale, T D[9][9]) {
    for (int i = 0; i < 3; ++i)
        for (int k = 0; k < 3; ++k) {
            if (i == k) continue;
            const int n = 3 - i - k;
            for (int j = 0; j < 3; ++j)
                for (int l = 0; l < 3; ++l) {
                    if (j == l) continue;
                    const int q = 3 - j - l;
                    const int sign = levi_civita(i, k, n) * levi_civita(j, l, q);
                    D[3 * i + j][3 * k + l] += scale * T(sign) * F.m[n][q];
                }
        }
}

/// Value, first and second derivative of the extended logarithm l(J) (see the file comment).
template <class T> struct ExtendedLog {
    T value;  ///< l(J)
    T first;  ///< l'(J)
    T second; ///< l''(J)
};

/// ln J for J >= J0, its second-order Taylor polynomial at J0 below (C2 at J0).
template <class T> EDN_HOST_DEVICE inline ExtendedLog<T> extended_log(T J, T J0) {
    using std::log;
    if (J >= J0) return ExtendedLog<T>{log(J), T(1) / J, -T(1) / (J * J)};
    const T d = J - J0;
    const T inv = T(1) / J0;
    return ExtendedLog<T>{log(J0) + d * inv - T(0.5) * d * d * inv * inv, inv - d * inv * inv,
                          -inv * inv};
}

/// Compressible neo-Hookean material with the inversion extension of the file comment.
template <class T> struct NeoHookean {
    LameParameters<T> lame;           ///< Lame parameters (lambda, mu)
    T extension_jacobian = T(1.0e-3); ///< J0: below it ln J is replaced by its Taylor polynomial

    /// Energy density psi(F).
    EDN_HOST_DEVICE inline T energy_density(const Mat3<T>& F) const {
        const ExtendedLog<T> l = extended_log(det(F), extension_jacobian);
        return T(0.5) * lame.mu * (ddot(F, F) - T(3)) - lame.mu * l.value +
               T(0.5) * lame.lambda * l.value * l.value;
    }

    /// First Piola-Kirchhoff stress P = dpsi/dF.
    EDN_HOST_DEVICE inline Mat3<T> first_piola(const Mat3<T>& F) const {
        const ExtendedLog<T> l = extended_log(det(F), extension_jacobian);
        return lame.mu * F + ((lame.lambda * l.value - lame.mu) * l.first) * cofactor(F);
    }

    /// Tangent dPdF[3i+j][3k+l] = dP_ij / dF_kl (exact, not projected).
    EDN_HOST_DEVICE inline void first_piola_derivative(const Mat3<T>& F, T dPdF[9][9]) const {
        const ExtendedLog<T> l = extended_log(det(F), extension_jacobian);
        const Mat3<T> C = cofactor(F);
        const T a = lame.lambda * l.value - lame.mu;
        const T cc = a * l.second + lame.lambda * l.first * l.first;
        for (int x = 0; x < 9; ++x)
            for (int y = 0; y < 9; ++y)
                dPdF[x][y] = cc * C.m[x / 3][x % 3] * C.m[y / 3][y % 3] + (x == y ? lame.mu : T(0));
        add_cofactor_derivative(F, a * l.first, dPdF);
    }

    /// Energy density, stress and (when dPdF is not null) tangent in one pass; the tangent is
    /// projected onto the PSD cone when project_psd is set (analytic eigensystem,
    /// projected_tangent; equal to the Jacobi projection of the exact tangent).
    EDN_HOST_DEVICE inline void evaluate(const Mat3<T>& F, T& psi, Mat3<T>& P, T (*dPdF)[9],
                                         bool project_psd_tangent) const {
        const ExtendedLog<T> l = extended_log(det(F), extension_jacobian);
        const Mat3<T> C = cofactor(F);
        const T a = lame.lambda * l.value - lame.mu;
        psi = T(0.5) * lame.mu * (ddot(F, F) - T(3)) - lame.mu * l.value +
              T(0.5) * lame.lambda * l.value * l.value;
        P = lame.mu * F + (a * l.first) * C;
        if (dPdF == nullptr) return;
        if (project_psd_tangent) {
            projected_tangent(F, dPdF);
            return;
        }
        const T cc = a * l.second + lame.lambda * l.first * l.first;
        for (int x = 0; x < 9; ++x)
            for (int y = 0; y < 9; ++y)
                dPdF[x][y] = cc * C.m[x / 3][x % 3] * C.m[y / 3][y % 3] + (x == y ? lame.mu : T(0));
        add_cofactor_derivative(F, a * l.first, dPdF);
    }

    /// The PSD projection (or, with project = false, the exact value) of dP/dF from its analytic
    /// eigensystem (isotropic_tangent.hpp) instead
    /// of a 9x9 Jacobi eigen-solve: in singular values psi = mu/2 (sum s_k^2 - 3) - mu l(J) +
    /// lambda/2 l(J)^2, J = s0 s1 s2, pi_k = dJ/ds_k = J / s_k (product of the other two),
    /// c1 = (lambda l - mu) l', c2 = (lambda l - mu) l'' + lambda l'^2:
    ///   psi_k = mu s_k + c1 pi_k,
    ///   H_ab  = mu delta_ab + c2 pi_a pi_b + c1 s_c  (a != b, c the third index),
    ///   alpha_ij = (psi_i - psi_j)/(s_i - s_j) = mu - c1 s_k,
    ///   beta_ij  = (psi_i + psi_j)/(s_i + s_j) = mu + c1 s_k     (k the third index):
    /// no divisions, so exact also for repeated or vanishing singular values.
    EDN_HOST_DEVICE inline void projected_tangent(const Mat3<T>& F, T dPdF[9][9],
                                                  bool project = true) const {
        T H[3][3], alpha[3], beta[3];
        const Svd3<T> svd = tangent_eigensystem(F, H, alpha, beta);
        assemble_isotropic_tangent(svd, H, alpha, beta, project, dPdF);
    }

    /// The same tangent in the SVD frame (TangentFrame), H projected and alpha, beta clamped at 0
    /// when `project`: what element kernels assemble without the 9x9 matrix.
    EDN_HOST_DEVICE inline void tangent_frame(const Mat3<T>& F, bool project,
                                              TangentFrame<T>& frame) const {
        tangent_frame_of(svd3_rotation_variant(F), project, frame);
    }

    /// tangent_frame from svd = svd3_rotation_variant(F), computed by the caller (the CPU
    /// batches the SVDs of several elements: svd3_rotation_variant_batch).
    EDN_HOST_DEVICE inline void tangent_frame_of(const Svd3<T>& svd, bool project,
                                                 TangentFrame<T>& frame) const {
        T alpha[3], beta[3];
        frame.svd = svd;
        tangent_eigensystem(svd, frame.H, alpha, beta);
        if (project) project_psd<3>(frame.H);
        set_frame_pairs(alpha, beta, project, frame);
    }

private:
    /// The SVD of F and the tangent's eigensystem there (projected_tangent's formulas), H not
    /// projected.
    EDN_HOST_DEVICE inline Svd3<T> tangent_eigensystem(const Mat3<T>& F, T H[3][3], T alpha[3],
                                                       T beta[3]) const {
        const Svd3<T> svd = svd3_rotation_variant(F);
        tangent_eigensystem(svd, H, alpha, beta);
        return svd;
    }

    /// The tangent's eigensystem at the SVD `svd` of F, H not projected.
    EDN_HOST_DEVICE inline void tangent_eigensystem(const Svd3<T>& svd, T H[3][3], T alpha[3],
                                                    T beta[3]) const {
        const Vec3T<T>& s = svd.sigma;
        const ExtendedLog<T> l = extended_log(s[0] * s[1] * s[2], extension_jacobian);
        const T a = lame.lambda * l.value - lame.mu;
        const T c1 = a * l.first;
        const T c2 = a * l.second + lame.lambda * l.first * l.first;
        const T pi[3] = {s[1] * s[2], s[0] * s[2], s[0] * s[1]};
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j)
                H[i][j] = c2 * pi[i] * pi[j] + (i == j ? lame.mu : c1 * s[3 - i - j]);
        // Pairs (0,1), (0,2), (1,2): the third index is 2, 1, 0.
        for (int pair = 0; pair < 3; ++pair) {
            alpha[pair] = lame.mu - c1 * s[2 - pair];
            beta[pair] = lame.mu + c1 * s[2 - pair];
        }
    }
};

} // namespace edn

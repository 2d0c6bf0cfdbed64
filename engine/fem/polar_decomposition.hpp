#pragma once
/// Rotation-variant SVD and polar decomposition of 3x3 deformation gradients, robust for
/// inverted, singular and rank-deficient F, for element kernels on host and device.
///
/// Rotation-variant SVD: F = U diag(sigma) V^T with det U = det V = +1, sigma_0 >= sigma_1 >=
/// |sigma_2| and sigma_2 < 0 exactly when det F < 0 (the reflection of an inverted element is
/// put on the smallest singular value, as in Irving, Teran and Fedkiw 2004). Then R = U V^T is a
/// proper rotation for every F and S = V diag(sigma) V^T = R^T F is symmetric: the polar
/// decomposition F = R S, continued through inversion.
///
/// Method: V from a Jacobi eigen-decomposition of F^T F (sorted by decreasing eigenvalue,
/// det V made +1 by flipping its last column); then B = F V, whose columns b_k = sigma_k u_k are
/// mutually orthogonal, is orthonormalised by Gram-Schmidt: u_0 = b_0 / |b_0|, u_1 = the part of
/// b_1 orthogonal to u_0, normalised, u_2 = u_0 x u_1 (so det U = +1), sigma_k = u_k . b_k. The
/// sign of sigma_2 then follows from det F. Singular values come from B, not from square roots of
/// the eigenvalues of F^T F, so small ones keep absolute accuracy eps ||F||. Degenerate cases:
/// F = 0 or b_0 tiny gives u_0 = e_x; b_1 at rounding level relative to b_0 (rank <= 1) gives an
/// arbitrary unit u_1 orthogonal to u_0; repeated singular values give an arbitrary orthonormal
/// basis of their eigenspace, for which R and S are unchanged.

#include "core/types.hpp"
#include "fem/psd_projection.hpp"
#include "fem/small_matrix.hpp"

#include <cmath>
#include <limits>

namespace edn {

/// A rotation-variant singular value decomposition F = U diag(sigma) V^T.
template <class T> struct Svd3 {
    Mat3<T> U;      ///< left rotation, det +1
    Vec3T<T> sigma; ///< singular values, sigma[0] >= sigma[1] >= |sigma[2]|; sigma[2] signed
    Mat3<T> V;      ///< right rotation, det +1
};

/// The polar decomposition F = R S.
template <class T> struct PolarDecomposition {
    Mat3<T> R; ///< proper rotation (det +1), also for inverted F
    Mat3<T> S; ///< symmetric stretch R^T F (indefinite when det F < 0)
};

/// A unit vector orthogonal to the unit vector u (crossed with the axis least aligned with u).
template <class T> EDN_HOST_DEVICE inline Vec3T<T> any_orthogonal_unit(const Vec3T<T>& u) {
    const T ax = u[0] < T(0) ? -u[0] : u[0];
    const T ay = u[1] < T(0) ? -u[1] : u[1];
    const T az = u[2] < T(0) ? -u[2] : u[2];
    Vec3T<T> axis = vec3_zero<T>();
    if (ax <= ay && ax <= az)
        axis[0] = T(1);
    else if (ay <= az)
        axis[1] = T(1);
    else
        axis[2] = T(1);
    const Vec3T<T> w = cross(u, axis);
    return (T(1) / norm(w)) * w;
}

namespace detail {

/// Swaps eigenpairs a and b (eigenvalues and columns of V).
template <class T> EDN_HOST_DEVICE inline void swap_eigenpairs(T lam[3], T V[3][3], int a, int b) {
    const T l = lam[a];
    lam[a] = lam[b];
    lam[b] = l;
    for (int r = 0; r < 3; ++r) {
        const T v = V[r][a];
        V[r][a] = V[r][b];
        V[r][b] = v;
    }
}

} // namespace detail

/// Rotation-variant SVD of F (see the file comment). Never fails; all outputs are finite for
/// finite F.
template <class T> EDN_HOST_DEVICE inline Svd3<T> svd3_rotation_variant(const Mat3<T>& F) {
    constexpr T eps = std::numeric_limits<T>::epsilon();
    constexpr T tiny = std::numeric_limits<T>::min();
    const Mat3<T> FtF = transpose(F) * F;
    T A[3][3];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) A[i][j] = FtF.m[i][j];
    T lam[3];
    T V[3][3];
    symmetric_eigen_jacobi<3>(A, lam, V);
    // Sort eigenpairs by decreasing eigenvalue (three compare-and-swaps of columns).
    if (lam[0] < lam[1]) detail::swap_eigenpairs(lam, V, 0, 1);
    if (lam[1] < lam[2]) detail::swap_eigenpairs(lam, V, 1, 2);
    if (lam[0] < lam[1]) detail::swap_eigenpairs(lam, V, 0, 1);
    Svd3<T> out{};
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) out.V.m[i][j] = V[i][j];
    if (det(out.V) < T(0))
        for (int r = 0; r < 3; ++r) out.V.m[r][2] = -out.V.m[r][2];

    const Mat3<T> B = F * out.V;
    const Vec3T<T> b0 = column(B, 0);
    const Vec3T<T> b1 = column(B, 1);
    const Vec3T<T> b2 = column(B, 2);
    const T n0 = norm(b0);
    Vec3T<T> u0 = make_vec3(T(1), T(0), T(0));
    if (n0 > tiny) u0 = (T(1) / n0) * b0;
    // Two Gram-Schmidt passes keep u1 orthogonal to u0 even when b1 is much shorter than b0.
    Vec3T<T> w = b1 - dot(u0, b1) * u0;
    w = w - dot(u0, w) * u0;
    const T n1 = norm(w);
    Vec3T<T> u1;
    if (n1 > eps * n0 && n1 > tiny)
        u1 = (T(1) / n1) * w;
    else
        u1 = any_orthogonal_unit(u0);
    const Vec3T<T> u2 = cross(u0, u1);
    out.U = mat3_from_columns(u0, u1, u2);
    out.sigma = make_vec3(dot(u0, b0), dot(u1, b1), dot(u2, b2));
    return out;
}

/// Polar decomposition F = R S through the rotation-variant SVD: R = U V^T, S = V diag(sigma) V^T.
template <class T>
EDN_HOST_DEVICE inline PolarDecomposition<T> polar_decomposition(const Mat3<T>& F) {
    const Svd3<T> svd = svd3_rotation_variant(F);
    PolarDecomposition<T> out{};
    out.R = svd.U * transpose(svd.V);
    Mat3<T> S = mat3_zero<T>();
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            for (int k = 0; k < 3; ++k) S.m[i][j] += svd.V.m[i][k] * svd.sigma[k] * svd.V.m[j][k];
    out.S = S;
    return out;
}

} // namespace edn

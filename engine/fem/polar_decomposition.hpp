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
/// Method: one-sided (Hestenes) Jacobi: plane rotations V applied to the columns of B = F V until
/// they are mutually orthogonal to working precision (implicitly Jacobi on F^T F, but without
/// squaring the condition number, so small singular values keep absolute accuracy eps ||F||);
/// columns sorted by decreasing norm, det V made +1 by flipping its last column. Then the
/// orthogonal columns b_k = sigma_k u_k of B are orthonormalised by Gram-Schmidt: u_0 = b_0 /
/// |b_0|, u_1 = the part of b_1 orthogonal to u_0, normalised, u_2 = u_0 x u_1 (so det U = +1),
/// sigma_k = u_k . b_k. The sign of sigma_2 then follows from det F. Degenerate cases: F = 0 or b_0
/// tiny gives u_0 = e_x; b_1 at rounding level relative to b_0 (rank <= 1) gives an arbitrary unit
/// u_1 orthogonal to u_0; repeated singular values give an arbitrary orthonormal basis of their
/// eigenspace, for which R and S are unchanged.

#include "core/types.hpp"
#include "fem/small_matrix.hpp"

#include <cmath>
#include <limits>
#include <type_traits>

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

/// Swaps columns a and b of B and V and the entries a and b of len.
template <class T>
EDN_HOST_DEVICE inline void swap_columns(T len[3], T B[3][3], T V[3][3], int a, int b) {
    const T l = len[a];
    len[a] = len[b];
    len[b] = l;
    for (int r = 0; r < 3; ++r) {
        const T x = B[r][a];
        B[r][a] = B[r][b];
        B[r][b] = x;
        const T v = V[r][a];
        V[r][a] = V[r][b];
        V[r][b] = v;
    }
}

} // namespace detail

namespace detail {

/// x / y, sqrt(x) and 1 / sqrt(x) of the Jacobi rotations: in float on the GPU the hardware
/// approximations (__fdividef, rsqrtf: 2 ulp; the IEEE sequences cost about ten instructions and
/// a slow-path branch each, three divisions and two roots a rotation), else the exact ones. The
/// rotation's c and s then make c^2 + s^2 = 1 to a few ulp, which the orthogonality test of a
/// later sweep (jacobi_slack) tolerates.
template <class T> EDN_HOST_DEVICE inline T jacobi_quotient(T x, T y) {
#if defined(__CUDA_ARCH__)
    if constexpr (std::is_same_v<T, float>) return __fdividef(x, y);
#endif
    return x / y;
}
template <class T> EDN_HOST_DEVICE inline T jacobi_root(T x) { // x > 0
#if defined(__CUDA_ARCH__)
    if constexpr (std::is_same_v<T, float>) return x * rsqrtf(x);
#endif
    using std::sqrt;
    return sqrt(x);
}
template <class T> EDN_HOST_DEVICE inline T jacobi_inverse_root(T x) {
#if defined(__CUDA_ARCH__)
    if constexpr (std::is_same_v<T, float>) return rsqrtf(x);
#endif
    using std::sqrt;
    return T(1) / sqrt(x);
}

/// Columns count as orthogonal when |gamma| <= jacobi_slack() eps sqrt(alpha beta): 1 where the
/// rotations are exact, 4 where they use the approximations (GPU float).
template <class T> EDN_HOST_DEVICE constexpr T jacobi_slack() {
#if defined(__CUDA_ARCH__)
    if constexpr (std::is_same_v<T, float>) return T(4);
#endif
    return T(1);
}

/// The Jacobi rotation (c, s) that makes columns p and q of B orthogonal; false (no rotation)
/// when they already are to working precision.
template <class T>
EDN_HOST_DEVICE inline bool jacobi_rotation(const T B[3][3], int p, int q, T& c, T& s) {
    constexpr T eps = std::numeric_limits<T>::epsilon();
    constexpr T tiny = std::numeric_limits<T>::min();
    constexpr T tolerance = jacobi_slack<T>() * eps;
    T alpha = T(0), beta = T(0), gamma = T(0);
    for (int r = 0; r < 3; ++r) {
        alpha += B[r][p] * B[r][p];
        beta += B[r][q] * B[r][q];
        gamma += B[r][p] * B[r][q];
    }
    // Columns orthogonal to working precision (also true when one of them is 0):
    // |gamma| <= tolerance sqrt(alpha beta), compared in squares (no sqrt on the path).
    const T abs_gamma = gamma < T(0) ? -gamma : gamma;
    if (!(gamma * gamma > (tolerance * tolerance) * (alpha * beta)) || !(abs_gamma > tiny))
        return false;
    const T zeta = jacobi_quotient(beta - alpha, T(2) * gamma);
    const T abs_zeta = zeta < T(0) ? -zeta : zeta;
    T t;
    if (abs_zeta > T(1) / eps) {
        t = jacobi_quotient(T(1), T(2) * zeta);
    } else {
        t = jacobi_quotient(T(1), abs_zeta + jacobi_root(T(1) + zeta * zeta));
        if (zeta < T(0)) t = -t;
    }
    // 1 + t^2 rounds to 1 below eps/2: c = 1 exactly, as the formula would give.
    const T t2 = t * t;
    c = t2 < T(0.5) * eps ? T(1) : jacobi_inverse_root(T(1) + t2);
    s = c * t;
    return true;
}

/// Applies the rotation (c, s) to columns p and q of B and V.
template <class T>
EDN_HOST_DEVICE inline void rotate_columns(T B[3][3], T V[3][3], int p, int q, T c, T s) {
    for (int r = 0; r < 3; ++r) {
        const T bp = B[r][p];
        const T bq = B[r][q];
        B[r][p] = c * bp - s * bq;
        B[r][q] = s * bp + c * bq;
        const T vp = V[r][p];
        const T vq = V[r][q];
        V[r][p] = c * vp - s * vq;
        V[r][q] = s * vp + c * vq;
    }
}

/// B = F and V = I, the start of the one-sided Jacobi iteration.
template <class T>
EDN_HOST_DEVICE inline void jacobi_start(const Mat3<T>& F, T B[3][3], T V[3][3]) {
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            B[i][j] = F.m[i][j];
            V[i][j] = (i == j) ? T(1) : T(0);
        }
}

/// The sweep limit of the one-sided Jacobi iteration.
inline constexpr int kJacobiSweeps = 12;

/// The SVD from the converged iteration (B = F V with mutually orthogonal columns): columns
/// sorted, det V = +1, U by Gram-Schmidt (see the file comment). B and V are overwritten.
template <class T> EDN_HOST_DEVICE inline Svd3<T> svd_from_jacobi(T B[3][3], T V[3][3]) {
    constexpr T eps = std::numeric_limits<T>::epsilon();
    constexpr T tiny = std::numeric_limits<T>::min();
    // Sort by decreasing column norm (= singular value), swapping columns of B and V together.
    T len[3];
    for (int k = 0; k < 3; ++k) len[k] = B[0][k] * B[0][k] + B[1][k] * B[1][k] + B[2][k] * B[2][k];
    if (len[0] < len[1]) detail::swap_columns(len, B, V, 0, 1);
    if (len[1] < len[2]) detail::swap_columns(len, B, V, 1, 2);
    if (len[0] < len[1]) detail::swap_columns(len, B, V, 0, 1);
    // det V = +1: flip the last column of V and, to keep B = F V, of B.
    Svd3<T> out{};
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) out.V.m[i][j] = V[i][j];
    Vec3T<T> b0 = make_vec3(B[0][0], B[1][0], B[2][0]);
    Vec3T<T> b1 = make_vec3(B[0][1], B[1][1], B[2][1]);
    Vec3T<T> b2 = make_vec3(B[0][2], B[1][2], B[2][2]);
    if (det(out.V) < T(0)) {
        for (int r = 0; r < 3; ++r) out.V.m[r][2] = -out.V.m[r][2];
        b2 = T(-1) * b2;
    }
    // Gram-Schmidt on the (orthogonal) columns of B; the sign of det F lands on sigma_2.
    const T n0 = norm(b0);
    Vec3T<T> u0 = make_vec3(T(1), T(0), T(0));
    if (n0 > tiny) u0 = (T(1) / n0) * b0;
    // Two passes keep u1 orthogonal to u0 even when b1 is much shorter than b0.
    Vec3T<T> w = b1 - dot(u0, b1) * u0;
    w = w - dot(u0, w) * u0;
    const T n1 = norm(w);
    Vec3T<T> u1;
    T sigma1;
    if (n1 > eps * n0 && n1 > tiny) {
        u1 = (T(1) / n1) * w;
        sigma1 = n1;
    } else {
        // Rank <= 1: any unit vector orthogonal to u0, oriented so that sigma_1 >= 0.
        u1 = any_orthogonal_unit(u0);
        sigma1 = dot(u1, b1);
        if (sigma1 < T(0)) {
            u1 = T(-1) * u1;
            sigma1 = -sigma1;
        }
    }
    const Vec3T<T> u2 = cross(u0, u1);
    out.U = mat3_from_columns(u0, u1, u2);
    out.sigma = make_vec3(n0, sigma1, dot(u2, b2));
    return out;
}

} // namespace detail

/// Rotation-variant SVD of F (see the file comment). Never fails; all outputs are finite for
/// finite F.
template <class T> EDN_HOST_DEVICE inline Svd3<T> svd3_rotation_variant(const Mat3<T>& F) {
    // One-sided Jacobi: rotate column pairs of B = F V until they are mutually orthogonal.
    T B[3][3];
    T V[3][3];
    detail::jacobi_start(F, B, V);
    for (int sweep = 0; sweep < detail::kJacobiSweeps; ++sweep) {
        bool rotated = false;
        for (int p = 0; p < 2; ++p)
            for (int q = p + 1; q < 3; ++q) {
                T c, s;
                if (!detail::jacobi_rotation(B, p, q, c, s)) continue;
                rotated = true;
                detail::rotate_columns(B, V, p, q, c, s);
            }
        if (!rotated) break;
    }
    return detail::svd_from_jacobi(B, V);
}

/// svd3_rotation_variant of N matrices at once, equal to it bit for bit: the N iterations run
/// side by side, so their divisions and square roots (a serial chain within one SVD) overlap.
/// A matrix whose sweep rotated nothing stops there, as it does alone.
template <int N, class T>
EDN_HOST_DEVICE inline void svd3_rotation_variant_batch(const Mat3<T>* F, Svd3<T>* out) {
    T B[N][3][3];
    T V[N][3][3];
    bool active[N];
    for (int l = 0; l < N; ++l) {
        detail::jacobi_start(F[l], B[l], V[l]);
        active[l] = true;
    }
    for (int sweep = 0; sweep < detail::kJacobiSweeps; ++sweep) {
        bool rotated[N] = {};
        for (int p = 0; p < 2; ++p)
            for (int q = p + 1; q < 3; ++q) {
                T c[N] = {}, s[N] = {};
                bool rotate[N];
                for (int l = 0; l < N; ++l)
                    rotate[l] = active[l] && detail::jacobi_rotation(B[l], p, q, c[l], s[l]);
                for (int l = 0; l < N; ++l)
                    if (rotate[l]) {
                        rotated[l] = true;
                        detail::rotate_columns(B[l], V[l], p, q, c[l], s[l]);
                    }
            }
        bool any = false;
        for (int l = 0; l < N; ++l) {
            active[l] = active[l] && rotated[l];
            any = any || active[l];
        }
        if (!any) break;
    }
    for (int l = 0; l < N; ++l) out[l] = detail::svd_from_jacobi(B[l], V[l]);
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

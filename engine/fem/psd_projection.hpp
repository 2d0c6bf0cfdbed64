#pragma once
/// Symmetric eigen-decomposition by cyclic Jacobi rotations and projection of small symmetric
/// matrices onto the positive semi-definite cone, for element kernels on host and device.
///
/// Jacobi is chosen over QR-type solvers because it is short, branch-light, needs no library
/// calls, never throws and is accurate to working precision also for tiny eigenvalues (which the
/// SVD of nearly singular deformation gradients needs). The sweep count is bounded (default 16;
/// cyclic Jacobi converges quadratically, 3x3 needs about 4 sweeps in double, 9x9 about 8), and a
/// sweep loop stops as soon as the off-diagonal part is negligible.
///
/// PSD projection: A = sum_k l_k v_k v_k^T, A+ = sum_k max(l_k, 0) v_k v_k^T. It is computed as
/// A - sum_{l_k < 0} l_k v_k v_k^T, so a matrix that is already PSD is returned bit-identical.
/// Used per quadrature point on the 9x9 tangent dP/dF: the element Hessian
/// sum_q w_q G_q^T (dP/dF)_q G_q is then PSD because the weights w_q are positive (see
/// hyperelastic_element.hpp for the choice of rules).

#include "core/types.hpp"

#include <cmath>
#include <limits>

namespace edn {

/// Eigen-decomposition of the symmetric N x N matrix A = V diag(eigenvalues) V^T by cyclic Jacobi
/// rotations. A is overwritten (it ends nearly diagonal); column k of V is the unit eigenvector of
/// eigenvalues[k]. Eigenvalues are not sorted. Only the symmetric part of A is meaningful: the
/// caller passes a symmetric matrix.
template <int N, class T>
EDN_HOST_DEVICE inline void symmetric_eigen_jacobi(T A[N][N], T eigenvalues[N], T V[N][N],
                                                   int max_sweeps = 16) {
    using std::sqrt;
    constexpr T eps = std::numeric_limits<T>::epsilon();
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j) V[i][j] = (i == j) ? T(1) : T(0);
    T total = T(0);
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j) total += A[i][j] * A[i][j];
    // Stop once the off-diagonal entries are at the rounding level of ||A||_F.
    const T threshold = eps * eps * total;
    for (int sweep = 0; sweep < max_sweeps; ++sweep) {
        T off = T(0);
        for (int p = 0; p < N; ++p)
            for (int q = p + 1; q < N; ++q) off += A[p][q] * A[p][q];
        // !(off > threshold) also ends the loop on NaN input instead of sweeping uselessly.
        if (!(off > threshold)) break;
        for (int p = 0; p < N - 1; ++p)
            for (int q = p + 1; q < N; ++q) {
                const T apq = A[p][q];
                if (apq == T(0)) continue;
                const T theta = (A[q][q] - A[p][p]) / (T(2) * apq);
                const T abs_theta = theta < T(0) ? -theta : theta;
                // t = tan of the rotation angle, the smaller root of t^2 + 2 theta t - 1 = 0;
                // for huge theta, theta^2 would overflow, and t -> 1 / (2 theta).
                T t;
                if (abs_theta > T(1) / eps) {
                    t = T(1) / (T(2) * theta);
                } else {
                    t = T(1) / (abs_theta + sqrt(theta * theta + T(1)));
                    if (theta < T(0)) t = -t;
                }
                const T c = T(1) / sqrt(t * t + T(1));
                const T s = t * c;
                A[p][p] -= t * apq;
                A[q][q] += t * apq;
                A[p][q] = T(0);
                A[q][p] = T(0);
                for (int r = 0; r < N; ++r) {
                    if (r != p && r != q) {
                        const T arp = A[r][p];
                        const T arq = A[r][q];
                        A[r][p] = c * arp - s * arq;
                        A[p][r] = A[r][p];
                        A[r][q] = s * arp + c * arq;
                        A[q][r] = A[r][q];
                    }
                    const T vrp = V[r][p];
                    const T vrq = V[r][q];
                    V[r][p] = c * vrp - s * vrq;
                    V[r][q] = s * vrp + c * vrq;
                }
            }
    }
    for (int i = 0; i < N; ++i) eigenvalues[i] = A[i][i];
}

/// True when the symmetric N x N matrix S is positive definite with margin: every pivot of its
/// Cholesky factorisation exceeds 64 N eps times the largest diagonal entry (a bound well above
/// the factorisation's rounding error). False for NaN entries. S is not modified.
template <int N, class T>
EDN_HOST_DEVICE inline bool is_clearly_positive_definite(const T S[N][N]) {
    using std::sqrt;
    T scale = T(0);
    for (int i = 0; i < N; ++i) scale = S[i][i] > scale ? S[i][i] : scale;
    const T margin = T(64 * N) * std::numeric_limits<T>::epsilon() * scale;
    if (!(margin > T(0))) return false;
    T L[N][N];
    for (int j = 0; j < N; ++j) {
        T d = S[j][j];
        for (int k = 0; k < j; ++k) d -= L[j][k] * L[j][k];
        if (!(d > margin)) return false;
        const T root = sqrt(d);
        L[j][j] = root;
        const T inv = T(1) / root;
        for (int i = j + 1; i < N; ++i) {
            T v = S[i][j];
            for (int k = 0; k < j; ++k) v -= L[i][k] * L[j][k];
            L[i][j] = v * inv;
        }
    }
    return true;
}

/// Projects the symmetric N x N matrix A in place onto the PSD cone (negative eigenvalues set to
/// zero). Returns the number of eigenvalues that were clamped; A is left untouched (bit-identical)
/// when that number is 0. The symmetric part (A + A^T)/2 is what gets projected.
template <int N, class T> EDN_HOST_DEVICE inline int project_psd(T A[N][N]) {
    T work[N][N];
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j) work[i][j] = T(0.5) * (A[i][j] + A[j][i]);
    // Most tangents of a running simulation are already positive definite: a Cholesky
    // factorisation (N^3/6 flops against some 30 N^3 for the Jacobi sweeps) proves it and skips
    // the eigen-solve. A pivot must clear a margin above the rounding of the factorisation, so a
    // matrix that passes is positive definite; the eigen-solve could differ only by clamping an
    // eigenvalue at its own rounding level (a change of order eps ||A||).
    if (is_clearly_positive_definite<N>(work)) return 0;
    T eigenvalues[N];
    T V[N][N];
    symmetric_eigen_jacobi<N>(work, eigenvalues, V);
    int clamped = 0;
    for (int k = 0; k < N; ++k) {
        if (!(eigenvalues[k] < T(0))) continue;
        ++clamped;
        for (int i = 0; i < N; ++i)
            for (int j = 0; j < N; ++j) A[i][j] -= eigenvalues[k] * V[i][k] * V[j][k];
    }
    if (clamped > 0) {
        // Restore exact symmetry, which the rank-one updates keep only up to rounding.
        for (int i = 0; i < N; ++i)
            for (int j = i + 1; j < N; ++j) {
                const T s = T(0.5) * (A[i][j] + A[j][i]);
                A[i][j] = s;
                A[j][i] = s;
            }
    }
    return clamped;
}

} // namespace edn

#pragma once
/// Linear isotropic elasticity on order-p Lagrange tetrahedra: stress, energy, element force,
/// element stiffness (quadrature and closed-form p = 1) and consistent mass.
///
/// Notation. An element has m = lagrange_tet_num_nodes(p) nodes with displacements u_a (a = 0..m-1,
/// components r = 0..2) and physical shape gradients g_a = grad_x N_a. The displacement gradient
/// is H = sum_a u_a g_a^T (H[r][i] = d u_r / d x_i), the small strain eps = (H + H^T)/2, and
///   psi(H)   = mu eps:eps + lambda/2 tr(eps)^2            (energy density)
///   sigma(H) = 2 mu eps + lambda tr(eps) I               (Cauchy stress = d psi / d H)
///   W(u)     = integral psi = sum_q w_q |det J| psi(H(xi_q))
///   f_a[r]   = dW / d u_a[r] = integral sum_i sigma[r][i] g_a[i]   ->  f_a = integral sigma g_a
/// Differentiating f_a[r] once more with respect to u_b[c], using
///   d sigma[r][i] / d u_b[c] = mu (delta_rc g_b[i] + delta_ic g_b[r]) + lambda delta_ri g_b[c],
/// gives the element stiffness blocks
///   K[a][b][r][c] = d^2 W / d u_a[r] d u_b[c]
///                 = integral ( mu (g_a . g_b) delta_rc + mu g_b[r] g_a[c] + lambda g_a[r] g_b[c] )
///   K_ab          = integral ( mu (g_a . g_b) I + mu g_b g_a^T + lambda g_a g_b^T ),
/// so K_ba = K_ab^T and the assembled matrix is symmetric. Storage: K[a][b][r][c], m x m blocks of
/// 3x3, full (both triangles), row-major blocks; the dof order is 3a + r.
///
/// Quadrature degree: the integrand of K is of degree 2(p-1) (stiffness_quadrature_degree), of
/// the mass matrix 2p (mass_quadrature_degree). Lame parameters are checked by callers
/// (E > 0, -1 < nu < 1/2); kernels cannot throw.

#include "core/types.hpp"
#include "fem/element_geometry.hpp"
#include "fem/lagrange_tet.hpp"
#include "fem/quadrature_tet.hpp"
#include "fem/small_matrix.hpp"

namespace edn {

/// Lame parameters of an isotropic linear material.
template <class T> struct LameParameters {
    T lambda; ///< first Lame parameter
    T mu;     ///< shear modulus
};

/// Lame parameters from Young's modulus E and Poisson's ratio nu (requires nu != 1/2, nu != -1):
/// mu = E / (2 (1 + nu)), lambda = E nu / ((1 + nu)(1 - 2 nu)).
template <class T>
EDN_HOST_DEVICE constexpr LameParameters<T> lame_from_young_poisson(T young, T poisson) {
    return LameParameters<T>{young * poisson / ((T(1) + poisson) * (T(1) - T(2) * poisson)),
                             young / (T(2) * (T(1) + poisson))};
}

/// Polynomial degree of the stiffness integrand of an order-p element: 2(p-1).
EDN_HOST_DEVICE constexpr int stiffness_quadrature_degree(int order) {
    return 2 * (order - 1);
}

/// Polynomial degree of the consistent-mass integrand of an order-p element: 2p.
EDN_HOST_DEVICE constexpr int mass_quadrature_degree(int order) {
    return 2 * order;
}

/// Displacement gradient H[r][i] = sum_a u[a][r] grad[a][i] of an element with NumNodes nodes.
template <int NumNodes, class T>
EDN_HOST_DEVICE constexpr Mat3<T> displacement_gradient(const T grad[NumNodes][3],
                                                        const T u[NumNodes][3]) {
    Mat3<T> H = mat3_zero<T>();
    for (int a = 0; a < NumNodes; ++a)
        for (int r = 0; r < 3; ++r)
            for (int i = 0; i < 3; ++i) H.m[r][i] += u[a][r] * grad[a][i];
    return H;
}

/// Linear-elastic stress sigma = 2 mu eps + lambda tr(eps) I for displacement gradient H.
template <class T>
EDN_HOST_DEVICE constexpr Mat3<T> linear_elastic_stress(const Mat3<T>& H,
                                                        const LameParameters<T>& lame) {
    const Mat3<T> eps = sym(H);
    return (T(2) * lame.mu) * eps + (lame.lambda * trace(eps)) * mat3_identity<T>();
}

/// Linear-elastic energy density psi = mu eps:eps + lambda/2 tr(eps)^2 for displacement gradient H.
template <class T>
EDN_HOST_DEVICE constexpr T linear_elastic_energy_density(const Mat3<T>& H,
                                                          const LameParameters<T>& lame) {
    const Mat3<T> eps = sym(H);
    const T tr = trace(eps);
    return lame.mu * ddot(eps, eps) + T(0.5) * lame.lambda * tr * tr;
}

/// Adds scale * (mu (ga . gb) I + mu gb ga^T + lambda ga gb^T) to the 3x3 block Kab
/// (Kab[r][c] = d^2 psi-integral / d u_a[r] d u_b[c]; see the file comment).
template <class T>
EDN_HOST_DEVICE constexpr void add_linear_elastic_block(const T ga[3], const T gb[3],
                                                        const LameParameters<T>& lame, T scale,
                                                        T Kab[3][3]) {
    const T mu_dot = lame.mu * (ga[0] * gb[0] + ga[1] * gb[1] + ga[2] * gb[2]);
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) {
            const T v =
                lame.mu * gb[r] * ga[c] + lame.lambda * ga[r] * gb[c] + (r == c ? mu_dot : T(0));
            Kab[r][c] += scale * v;
        }
}

/// |x| without <cmath> overload questions between host and device.
template <class T> EDN_HOST_DEVICE constexpr T fem_abs(T x) {
    return x < T(0) ? -x : x;
}

/// Element stiffness of an order-P straight-sided tet by quadrature.
/// @param[in]  X     4 by 3 vertex positions (rest configuration)
/// @param[in]  lame  Lame parameters
/// @param[in]  rule  quadrature rule, exact to degree >= stiffness_quadrature_degree(P)
/// @param[out] K     m by m blocks of 3x3, K[a][b][r][c] = d^2 W / d u_a[r] d u_b[c]
template <int P, class T>
EDN_HOST_DEVICE constexpr void
linear_elastic_stiffness(const T X[4][3], const LameParameters<T>& lame,
                         const QuadratureTet<T>& rule,
                         T K[lagrange_tet_num_nodes(P)][lagrange_tet_num_nodes(P)][3][3]) {
    constexpr int m = lagrange_tet_num_nodes(P);
    for (int a = 0; a < m; ++a)
        for (int b = 0; b < m; ++b)
            for (int r = 0; r < 3; ++r)
                for (int c = 0; c < 3; ++c) K[a][b][r][c] = T(0);
    const TetGeometry<T> geometry = tet_geometry(X);
    const T abs_det = fem_abs(geometry.det_jacobian);
    for (int q = 0; q < rule.num_points; ++q) {
        T g[m][3] = {};
        shape_gradients<P>(geometry, rule.bary[q], g);
        const T scale = rule.weight[q] * abs_det;
        for (int a = 0; a < m; ++a)
            for (int b = 0; b < m; ++b) add_linear_elastic_block(g[a], g[b], lame, scale, K[a][b]);
    }
}

/// Closed-form stiffness of a linear (p = 1) tet: gradients are constant, so
/// K_ab = V (mu (g_a . g_b) I + mu g_b g_a^T + lambda g_a g_b^T) with V = |det J| / 6.
template <class T>
EDN_HOST_DEVICE constexpr void
linear_elastic_stiffness_tet4(const T X[4][3], const LameParameters<T>& lame, T K[4][4][3][3]) {
    const TetGeometry<T> geometry = tet_geometry(X);
    const Mat3<T>& Ji = geometry.inverse_jacobian;
    // grad N1..N3 = rows of J^{-1} (J^{-T} e_k), grad N0 = -(sum of the others).
    T g[4][3] = {};
    for (int i = 0; i < 3; ++i) {
        g[1][i] = Ji.m[0][i];
        g[2][i] = Ji.m[1][i];
        g[3][i] = Ji.m[2][i];
        g[0][i] = -(g[1][i] + g[2][i] + g[3][i]);
    }
    const T volume = fem_abs(geometry.det_jacobian) / T(6);
    for (int a = 0; a < 4; ++a)
        for (int b = 0; b < 4; ++b) {
            for (int r = 0; r < 3; ++r)
                for (int c = 0; c < 3; ++c) K[a][b][r][c] = T(0);
            add_linear_elastic_block(g[a], g[b], lame, volume, K[a][b]);
        }
}

/// Element strain energy W(u) = integral psi(H) of an order-P tet with nodal displacements
/// u[m][3], by quadrature (equals 1/2 u^T K u when the rule is exact to degree 2(P-1)).
template <int P, class T>
EDN_HOST_DEVICE constexpr T linear_elastic_energy(const T X[4][3], const LameParameters<T>& lame,
                                                  const QuadratureTet<T>& rule,
                                                  const T u[lagrange_tet_num_nodes(P)][3]) {
    constexpr int m = lagrange_tet_num_nodes(P);
    const TetGeometry<T> geometry = tet_geometry(X);
    const T abs_det = fem_abs(geometry.det_jacobian);
    T energy = T(0);
    for (int q = 0; q < rule.num_points; ++q) {
        T g[m][3] = {};
        shape_gradients<P>(geometry, rule.bary[q], g);
        const Mat3<T> H = displacement_gradient<m>(g, u);
        energy += rule.weight[q] * abs_det * linear_elastic_energy_density(H, lame);
    }
    return energy;
}

/// Element force (energy gradient) f[a][r] = dW / d u_a[r] = integral (sigma g_a)[r] of an
/// order-P tet with nodal displacements u[m][3] (equals K u for an exact rule).
template <int P, class T>
EDN_HOST_DEVICE constexpr void linear_elastic_energy_gradient(
    const T X[4][3], const LameParameters<T>& lame, const QuadratureTet<T>& rule,
    const T u[lagrange_tet_num_nodes(P)][3], T f[lagrange_tet_num_nodes(P)][3]) {
    constexpr int m = lagrange_tet_num_nodes(P);
    for (int a = 0; a < m; ++a)
        for (int r = 0; r < 3; ++r) f[a][r] = T(0);
    const TetGeometry<T> geometry = tet_geometry(X);
    const T abs_det = fem_abs(geometry.det_jacobian);
    for (int q = 0; q < rule.num_points; ++q) {
        T g[m][3] = {};
        shape_gradients<P>(geometry, rule.bary[q], g);
        const Mat3<T> sigma = linear_elastic_stress(displacement_gradient<m>(g, u), lame);
        const T scale = rule.weight[q] * abs_det;
        for (int a = 0; a < m; ++a)
            for (int r = 0; r < 3; ++r)
                f[a][r] += scale * (sigma.m[r][0] * g[a][0] + sigma.m[r][1] * g[a][1] +
                                    sigma.m[r][2] * g[a][2]);
    }
}

/// Block matrix-vector product f_a = sum_b K_ab u_b of an element matrix with NumNodes nodes.
template <int NumNodes, class T>
EDN_HOST_DEVICE constexpr void element_block_matvec(const T K[NumNodes][NumNodes][3][3],
                                                    const T u[NumNodes][3], T f[NumNodes][3]) {
    for (int a = 0; a < NumNodes; ++a)
        for (int r = 0; r < 3; ++r) {
            T s = T(0);
            for (int b = 0; b < NumNodes; ++b)
                for (int c = 0; c < 3; ++c) s += K[a][b][r][c] * u[b][c];
            f[a][r] = s;
        }
}

/// Consistent mass of an order-P tet: M[a][b] = rho integral N_a N_b (scalar; the 3x3 block of
/// nodes a, b is M[a][b] times the identity). rule must be exact to mass_quadrature_degree(P).
template <int P, class T>
EDN_HOST_DEVICE constexpr void
consistent_mass(const T X[4][3], T rho, const QuadratureTet<T>& rule,
                T M[lagrange_tet_num_nodes(P)][lagrange_tet_num_nodes(P)]) {
    constexpr int m = lagrange_tet_num_nodes(P);
    for (int a = 0; a < m; ++a)
        for (int b = 0; b < m; ++b) M[a][b] = T(0);
    const T abs_det = fem_abs(det(tet_jacobian(X)));
    for (int q = 0; q < rule.num_points; ++q) {
        T N[m] = {};
        LagrangeTet<P, T>::eval(rule.bary[q], N);
        const T scale = rho * rule.weight[q] * abs_det;
        for (int a = 0; a < m; ++a)
            for (int b = 0; b < m; ++b) M[a][b] += scale * N[a] * N[b];
    }
}

/// Closed-form consistent mass of a linear tet: M[a][b] = rho V (1 + delta_ab) / 20.
template <class T>
EDN_HOST_DEVICE constexpr void consistent_mass_tet4(const T X[4][3], T rho, T M[4][4]) {
    const T volume = fem_abs(det(tet_jacobian(X))) / T(6);
    for (int a = 0; a < 4; ++a)
        for (int b = 0; b < 4; ++b) M[a][b] = rho * volume * (a == b ? T(2) : T(1)) / T(20);
}

} // namespace edn

#pragma once
/// Hyperelastic order-p tetrahedra: element energy, energy gradient dW/dx and Hessian blocks for
/// any material with the per-quadrature-point interface of NeoHookean / Corotational /
/// LinearElastic, on host and device.
///
/// Notation. An element has m = lagrange_tet_num_nodes(p) nodes at current positions x_a and rest
/// physical shape gradients g_a = grad_X N_a (from the rest TetGeometry). At a quadrature point
///   F = sum_a x_a g_a^T                       (F[r][i] = sum_a x_a[r] g_a[i]; F = I at rest),
///   W(x)          = sum_q w_q |det J| psi(F_q),
///   f_a[r]        = dW/dx_a[r]           = sum_q w_q |det J| sum_i P_q[r][i] g_a[i],
///   K[a][b][r][c] = d^2 W/dx_a[r] dx_b[c]
///                 = sum_q w_q |det J| sum_ij dPdF_q[3r+i][3c+j] g_a[i] g_b[j],
/// the same block layout and dof order 3a + r as linear_elasticity.hpp.
///
/// PSD projection (flag project_psd): per quadrature point, on the 9x9 dP/dF. The element Hessian
/// sum_q w_q |det J| G_q^T (dP/dF)_q G_q is then PSD because every rule used here has positive
/// weights. Per point is much cheaper than projecting the 3m x 3m element matrix (a 9x9 instead
/// of up to a 60x60 eigenproblem, and analytic for the co-rotational material); it may remove
/// somewhat more curvature than a per-element projection would (G^T D+ G differs from
/// (G^T D G)+), which only makes Newton steps a little more conservative.
///
/// Quadrature (hyperelastic_quadrature_degree, hyperelastic_quadrature): F is a polynomial of
/// degree p - 1, but psi(F) is not a polynomial, so no rule is exact; we use the rule that is
/// exact for the linear-elastic stiffness (degree 2(p-1)) with positive weights only:
///   p = 1: 1 point (F constant: exact);
///   p = 2: degree 2, the 4-point rule (exact for the small-strain limit; 4 points x 6 strain
///          components = 24 = 30 dofs - 6 rigid modes, so no spurious zero-energy modes);
///   p = 3: degree 4 needs a positive rule; the 14-point degree-5 rule below (the Grundmann-
///          Moeller rules of quadrature_tet.hpp have negative weights, which would break the PSD
///          argument above).
/// The small-strain limit therefore reproduces linear_elastic_stiffness exactly (tested).
///
/// Material interface (per quadrature point, see neo_hookean.hpp for the tangent's indexing):
///   T energy_density(const Mat3<T>& F) const;
///   void evaluate(const Mat3<T>& F, T& psi, Mat3<T>& P, T (*dPdF)[9], bool project_psd) const;
///   (dPdF may be null: stress only).

#include "core/types.hpp"
#include "fem/element_geometry.hpp"
#include "fem/lagrange_tet.hpp"
#include "fem/linear_elasticity.hpp"
#include "fem/psd_projection.hpp"
#include "fem/quadrature_tet.hpp"
#include "fem/small_matrix.hpp"

namespace edn {

/// Linear elasticity in the material interface (the reference model): psi = mu eps:eps +
/// lambda/2 tr(eps)^2 with eps = sym(F - I), P = sigma(F - I), dP/dF constant. Not rotation
/// invariant; the tangent is PSD for -1 < nu < 1/2, so projection leaves it unchanged.
template <class T> struct LinearElastic {
    LameParameters<T> lame; ///< Lame parameters (lambda, mu)

    /// Energy density of the small strain of F - I.
    EDN_HOST_DEVICE inline T energy_density(const Mat3<T>& F) const {
        return linear_elastic_energy_density(F - mat3_identity<T>(), lame);
    }

    /// Stress sigma(F - I) (first Piola stress of the linear model).
    EDN_HOST_DEVICE inline Mat3<T> first_piola(const Mat3<T>& F) const {
        return linear_elastic_stress(F - mat3_identity<T>(), lame);
    }

    /// Tangent mu (d_ik d_jl + d_il d_jk) + lambda d_ij d_kl (independent of F).
    EDN_HOST_DEVICE inline void first_piola_derivative(const Mat3<T>&, T dPdF[9][9]) const {
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j)
                for (int k = 0; k < 3; ++k)
                    for (int l = 0; l < 3; ++l)
                        dPdF[3 * i + j][3 * k + l] =
                            lame.mu * (T(i == k && j == l) + T(i == l && j == k)) +
                            lame.lambda * T(i == j && k == l);
    }

    /// Energy density, stress and (when dPdF is not null) tangent; the tangent is projected onto
    /// the PSD cone when asked (a no-op for valid Lame parameters).
    EDN_HOST_DEVICE inline void evaluate(const Mat3<T>& F, T& psi, Mat3<T>& P, T (*dPdF)[9],
                                         bool project_psd_tangent) const {
        const Mat3<T> H = F - mat3_identity<T>();
        psi = linear_elastic_energy_density(H, lame);
        P = linear_elastic_stress(H, lame);
        if (dPdF == nullptr) return;
        first_piola_derivative(F, dPdF);
        if (project_psd_tangent) project_psd<9>(dPdF);
    }
};

/// Polynomial degree of the quadrature rule for hyperelastic elements of order p: 1, 2, 5 (see
/// the file comment; the single place where this choice is made).
EDN_HOST_DEVICE constexpr int hyperelastic_quadrature_degree(int order) {
    return order <= 1 ? 1 : (order == 2 ? 2 : 5);
}

/// The quadrature rule for hyperelastic elements of order p (positive weights; file comment).
template <class T> EDN_HOST_DEVICE constexpr QuadratureTet<T> hyperelastic_quadrature(int order) {
    const int degree = hyperelastic_quadrature_degree(order);
    if (degree <= 2) return quadrature_for_degree<T>(degree);
    return tet_quadrature_degree5_positive<T>();
}

/// Energy, gradient and Hessian of an order-P hyperelastic element in one pass; outputs that are
/// null are skipped (the tangent is evaluated only when hessian is not null).
/// @param[in]  material     per-point material (NeoHookean, Corotational, LinearElastic, ...)
/// @param[in]  rest         rest geometry of the element's vertices (tet_geometry(X))
/// @param[in]  rule         quadrature rule, normally hyperelastic_quadrature<T>(P)
/// @param[in]  x            m by 3 current node positions, canonical local order
/// @param[in]  project_psd  project dP/dF onto the PSD cone at every quadrature point
/// @param[out] energy       W (may be null)
/// @param[out] gradient     m by 3, dW/dx (may be null)
/// @param[out] hessian      m by m blocks of 3x3, d^2 W / dx_a[r] dx_b[c] (may be null)
template <int P, class T, class Material>
EDN_HOST_DEVICE inline void
hyperelastic_element(const Material& material, const TetGeometry<T>& rest,
                     const QuadratureTet<T>& rule, const T x[lagrange_tet_num_nodes(P)][3],
                     bool project_psd, T* energy, T (*gradient)[3],
                     T (*hessian)[lagrange_tet_num_nodes(P)][3][3]) {
    constexpr int m = lagrange_tet_num_nodes(P);
    if (energy != nullptr) *energy = T(0);
    if (gradient != nullptr)
        for (int a = 0; a < m; ++a)
            for (int r = 0; r < 3; ++r) gradient[a][r] = T(0);
    if (hessian != nullptr)
        for (int a = 0; a < m; ++a)
            for (int b = 0; b < m; ++b)
                for (int r = 0; r < 3; ++r)
                    for (int c = 0; c < 3; ++c) hessian[a][b][r][c] = T(0);
    const T abs_det = fem_abs(rest.det_jacobian);
    for (int q = 0; q < rule.num_points; ++q) {
        T g[m][3] = {};
        shape_gradients<P>(rest, rule.bary[q], g);
        // F[r][i] = sum_a x_a[r] g_a[i]: the same contraction as the displacement gradient.
        const Mat3<T> F = displacement_gradient<m>(g, x);
        const T scale = rule.weight[q] * abs_det;
        if (gradient == nullptr && hessian == nullptr) {
            if (energy != nullptr) *energy += scale * material.energy_density(F);
            continue;
        }
        T psi = T(0);
        Mat3<T> Pk = mat3_zero<T>();
        T dPdF[9][9];
        material.evaluate(F, psi, Pk, hessian != nullptr ? dPdF : nullptr, project_psd);
        if (energy != nullptr) *energy += scale * psi;
        if (gradient != nullptr)
            for (int a = 0; a < m; ++a)
                for (int r = 0; r < 3; ++r)
                    gradient[a][r] += scale * (Pk.m[r][0] * g[a][0] + Pk.m[r][1] * g[a][1] +
                                               Pk.m[r][2] * g[a][2]);
        if (hessian != nullptr)
            for (int b = 0; b < m; ++b)
                for (int c = 0; c < 3; ++c) {
                    // t[r][i] = sum_j dPdF[3r+i][3c+j] g_b[j]: the column (b, c) of dP/dF G.
                    T t[3][3];
                    for (int r = 0; r < 3; ++r)
                        for (int i = 0; i < 3; ++i)
                            t[r][i] = dPdF[3 * r + i][3 * c + 0] * g[b][0] +
                                      dPdF[3 * r + i][3 * c + 1] * g[b][1] +
                                      dPdF[3 * r + i][3 * c + 2] * g[b][2];
                    for (int a = 0; a < m; ++a)
                        for (int r = 0; r < 3; ++r)
                            hessian[a][b][r][c] +=
                                scale * (t[r][0] * g[a][0] + t[r][1] * g[a][1] + t[r][2] * g[a][2]);
                }
    }
}

/// Element energy W(x) = sum_q w_q |det J| psi(F_q) of an order-P element.
template <int P, class T, class Material>
EDN_HOST_DEVICE inline T hyperelastic_energy(const Material& material, const TetGeometry<T>& rest,
                                             const QuadratureTet<T>& rule,
                                             const T x[lagrange_tet_num_nodes(P)][3]) {
    T energy = T(0);
    hyperelastic_element<P>(material, rest, rule, x, false, &energy, static_cast<T(*)[3]>(nullptr),
                            static_cast<T(*)[lagrange_tet_num_nodes(P)][3][3]>(nullptr));
    return energy;
}

/// Element energy gradient f[a][r] = dW / dx_a[r] of an order-P element.
template <int P, class T, class Material>
EDN_HOST_DEVICE inline void
hyperelastic_energy_gradient(const Material& material, const TetGeometry<T>& rest,
                             const QuadratureTet<T>& rule, const T x[lagrange_tet_num_nodes(P)][3],
                             T f[lagrange_tet_num_nodes(P)][3]) {
    hyperelastic_element<P>(material, rest, rule, x, false, static_cast<T*>(nullptr), f,
                            static_cast<T(*)[lagrange_tet_num_nodes(P)][3][3]>(nullptr));
}

/// Element Hessian blocks K[a][b][r][c] = d^2 W / dx_a[r] dx_b[c] of an order-P element,
/// projected per quadrature point onto the PSD cone when project_psd.
template <int P, class T, class Material>
EDN_HOST_DEVICE inline void
hyperelastic_energy_hessian(const Material& material, const TetGeometry<T>& rest,
                            const QuadratureTet<T>& rule, const T x[lagrange_tet_num_nodes(P)][3],
                            bool project_psd,
                            T K[lagrange_tet_num_nodes(P)][lagrange_tet_num_nodes(P)][3][3]) {
    hyperelastic_element<P>(material, rest, rule, x, project_psd, static_cast<T*>(nullptr),
                            static_cast<T(*)[3]>(nullptr), K);
}

} // namespace edn

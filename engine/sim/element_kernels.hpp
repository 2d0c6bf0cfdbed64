#pragma once
/// Per-element energy, gradient and Hessian of hyperelastic materials on order-P straight-sided
/// tets, written once for both backends (EDN_HOST_DEVICE). The rest geometry enters through the
/// inverse Jacobian and |det J|; reference shape gradients are evaluated at the rule's points.
///
///   F_q = sum_a x_a g_a(q)^T,  g_a = J^{-T} dN_a/dxi   (rest physical gradients)
///   W   = sum_q w_q |det J| psi(F_q)
///   f_a = dW/dx_a = sum_q w_q |det J| P(F_q) g_a
///   K_ab[r][c] = sum_q w_q |det J| sum_{j,l} dP_rj/dF_cl g_a[j] g_b[l]

#include "fem/corotational.hpp"
#include "fem/lagrange_tet.hpp"
#include "fem/linear_elasticity.hpp"
#include "fem/neo_hookean.hpp"
#include "fem/quadrature_tet.hpp"
#include "fem/small_matrix.hpp"

namespace edn {

/// Linear elasticity in the material interface (psi of the small strain of H = F - I).
template <class T> struct LinearMaterial {
    LameParameters<T> lame;

    EDN_HOST_DEVICE inline void evaluate(const Mat3<T>& F, T& psi, Mat3<T>& P, T (*dPdF)[9],
                                         bool /*project: already PSD*/) const {
        T eps[3][3];
        T tr = T(0);
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j)
                eps[i][j] = T(0.5) * (F.m[i][j] + F.m[j][i]) - (i == j ? T(1) : T(0));
        for (int i = 0; i < 3; ++i) tr += eps[i][i];
        T e2 = T(0);
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) {
                e2 += eps[i][j] * eps[i][j];
                P.m[i][j] = T(2) * lame.mu * eps[i][j] + (i == j ? lame.lambda * tr : T(0));
            }
        psi = lame.mu * e2 + T(0.5) * lame.lambda * tr * tr;
        if (dPdF == nullptr) return;
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j)
                for (int k = 0; k < 3; ++k)
                    for (int l = 0; l < 3; ++l)
                        dPdF[3 * i + j][3 * k + l] = lame.mu * ((i == k && j == l ? T(1) : T(0)) +
                                                                (i == l && j == k ? T(1) : T(0))) +
                                                     (i == j && k == l ? lame.lambda : T(0));
    }
};

/// Quadrature degree of the nonlinear element integrals: exact for the linear material's
/// stiffness (2(p-1)); at least 1 so p = 1 uses the centroid.
EDN_HOST_DEVICE constexpr int element_quadrature_degree(int order) {
    return order == 1 ? 1 : 2 * (order - 1);
}

/// Rest data of one element: inverse Jacobian and |det J| (6 V).
template <class T> struct RestElement {
    T inverse_jacobian[3][3];
    T abs_det;
};

/// What to compute.
enum ElementOutput : int { kEnergy = 1, kGradient = 2, kHessian = 4 };

/// Evaluates one element. x: m x 3 current node positions (local order), or displacements when
/// displacement_form; outputs are written (not accumulated): energy, gradient[m][3],
/// hessian[m][m][9] (row-major 3x3 blocks).
template <int P, class T, class Material>
EDN_HOST_DEVICE inline void evaluate_element(const Material& material, const RestElement<T>& rest,
                                             const QuadratureTet<T>& rule, const T (*x)[3],
                                             int outputs, bool project, T& energy, T (*gradient)[3],
                                             T* hessian, bool displacement_form = false) {
    constexpr int m = lagrange_tet_num_nodes(P);
    energy = T(0);
    if (outputs & kGradient)
        for (int a = 0; a < m; ++a) gradient[a][0] = gradient[a][1] = gradient[a][2] = T(0);
    if (outputs & kHessian)
        for (int i = 0; i < m * m * 9; ++i) hessian[i] = T(0);
    for (int q = 0; q < rule.num_points; ++q) {
        T dN[m][3];
        LagrangeTet<P, T>::grad(rule.bary[q], dN);
        T g[m][3];
        for (int a = 0; a < m; ++a)
            for (int j = 0; j < 3; ++j)
                g[a][j] = rest.inverse_jacobian[0][j] * dN[a][0] +
                          rest.inverse_jacobian[1][j] * dN[a][1] +
                          rest.inverse_jacobian[2][j] * dN[a][2];
        Mat3<T> F;
        for (int r = 0; r < 3; ++r)
            for (int j = 0; j < 3; ++j) {
                T s = T(0);
                for (int a = 0; a < m; ++a) s += x[a][r] * g[a][j];
                // Displacement form: x holds u = x - X and F = I + grad u (sum_a X_a g_a^T = I
                // on straight-sided elements), which keeps float precision for small strains.
                F.m[r][j] = s + (displacement_form && r == j ? T(1) : T(0));
            }
        const T w = rule.weight[q] * rest.abs_det;
        T psi;
        Mat3<T> Pk;
        T D[9][9];
        material.evaluate(F, psi, Pk, (outputs & kHessian) ? D : nullptr, project);
        energy += w * psi;
        if (outputs & kGradient)
            for (int a = 0; a < m; ++a)
                for (int r = 0; r < 3; ++r)
                    gradient[a][r] +=
                        w * (Pk.m[r][0] * g[a][0] + Pk.m[r][1] * g[a][1] + Pk.m[r][2] * g[a][2]);
        if (outputs & kHessian)
            for (int a = 0; a < m; ++a) {
                // A[r][c][l] = sum_j D[3r+j][3c+l] g_a[j]
                T A[3][9];
                for (int r = 0; r < 3; ++r)
                    for (int cl = 0; cl < 9; ++cl)
                        A[r][cl] = w * (D[3 * r][cl] * g[a][0] + D[3 * r + 1][cl] * g[a][1] +
                                        D[3 * r + 2][cl] * g[a][2]);
                for (int b = 0; b < m; ++b) {
                    T* block = hessian + (a * m + b) * 9;
                    for (int r = 0; r < 3; ++r)
                        for (int c = 0; c < 3; ++c)
                            block[3 * r + c] += A[r][3 * c] * g[b][0] + A[r][3 * c + 1] * g[b][1] +
                                                A[r][3 * c + 2] * g[b][2];
                }
            }
    }
}

/// von Mises stress of the Cauchy stress sigma = P F^T / J (J clamped away from 0).
template <class T> EDN_HOST_DEVICE inline T von_mises(const Mat3<T>& P, const Mat3<T>& F) {
    T J = det(F);
    if (J < T(1e-6) && J > -T(1e-6)) J = J < 0 ? -T(1e-6) : T(1e-6);
    T s[3][3];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            s[i][j] = (P.m[i][0] * F.m[j][0] + P.m[i][1] * F.m[j][1] + P.m[i][2] * F.m[j][2]) / J;
    const T a = s[0][0] - s[1][1], b = s[1][1] - s[2][2], c = s[2][2] - s[0][0];
    const T v = T(0.5) * (a * a + b * b + c * c) +
                T(3) * (s[0][1] * s[0][1] + s[1][2] * s[1][2] + s[2][0] * s[2][0]);
    return v > T(0) ? sqrt(v) : T(0);
}

} // namespace edn

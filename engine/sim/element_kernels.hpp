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
#include "sim/element_output.hpp"

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

    /// The constant tangent in an SVD frame (TangentFrame): any rotation works, U = V = I. On
    /// the diagonal directions H = 2 mu I + lambda 1 1^T; a pair's symmetric direction has
    /// alpha = 2 mu, its skew one beta = 0. Projected when `project` (a no-op for valid Lame
    /// parameters).
    EDN_HOST_DEVICE inline void tangent_frame(const Mat3<T>&, bool project,
                                              TangentFrame<T>& frame) const {
        frame.svd.U = mat3_identity<T>();
        frame.svd.V = mat3_identity<T>();
        frame.svd.sigma = Vec3T<T>{T(1), T(1), T(1)};
        for (int a = 0; a < 3; ++a)
            for (int b = 0; b < 3; ++b)
                frame.H[a][b] = lame.lambda + (a == b ? T(2) * lame.mu : T(0));
        if (project) project_psd<3>(frame.H);
        const T alpha[3] = {T(2) * lame.mu, T(2) * lame.mu, T(2) * lame.mu};
        const T beta[3] = {T(0), T(0), T(0)};
        set_frame_pairs(alpha, beta, project, frame);
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

/// Rest physical shape gradients g_a = J^{-T} dN_a/dxi at barycentric point `bary`.
template <int P, class T>
EDN_HOST_DEVICE inline void element_shape_gradients(const RestElement<T>& rest, const T* bary,
                                                    T (*g)[3]) {
    constexpr int m = lagrange_tet_num_nodes(P);
    T dN[m][3];
    LagrangeTet<P, T>::grad(bary, dN);
    for (int a = 0; a < m; ++a)
        for (int j = 0; j < 3; ++j)
            g[a][j] = rest.inverse_jacobian[0][j] * dN[a][0] +
                      rest.inverse_jacobian[1][j] * dN[a][1] +
                      rest.inverse_jacobian[2][j] * dN[a][2];
}

/// F = sum_a x_a g_a^T (+ I in displacement form, where x holds u = x - X: sum_a X_a g_a^T = I
/// on straight-sided elements, and leaving it out keeps float precision for small strains).
template <int M, class T>
EDN_HOST_DEVICE inline Mat3<T> element_deformation_gradient(const T (*x)[3], const T (*g)[3],
                                                            bool displacement_form) {
    Mat3<T> F;
    for (int r = 0; r < 3; ++r)
        for (int j = 0; j < 3; ++j) {
            T s = T(0);
            for (int a = 0; a < M; ++a) s += x[a][r] * g[a][j];
            F.m[r][j] = s + (displacement_form && r == j ? T(1) : T(0));
        }
    return F;
}

/// One quadrature point of an element: the rest gradients, F and the weight w_q |det J|.
template <int M, class T> struct ElementPoint {
    T g[M][3]; ///< rest physical shape gradients g_a
    Mat3<T> F; ///< deformation gradient
    T w;       ///< w_q |det J|
};

/// Point q of an order-P element at positions (or displacements, displacement_form) x.
template <int P, class T>
EDN_HOST_DEVICE inline ElementPoint<lagrange_tet_num_nodes(P), T>
element_point(const RestElement<T>& rest, const QuadratureTet<T>& rule, int q, const T (*x)[3],
              bool displacement_form) {
    constexpr int m = lagrange_tet_num_nodes(P);
    ElementPoint<m, T> pt;
    element_shape_gradients<P>(rest, rule.bary[q], pt.g);
    pt.F = element_deformation_gradient<m>(x, pt.g, displacement_form);
    pt.w = rule.weight[q] * rest.abs_det;
    return pt;
}

/// Writes `value` into `out` at the first quadrature point and adds it at the others: no zeroing
/// pass, and no read-modify-write of the first point's contribution (the Hessian is 144 floats
/// per element at p = 1, in global memory on the GPU, where the zero + add doubled its traffic).
template <class T> EDN_HOST_DEVICE inline void put(bool first, T& out, T value) {
    if (first)
        out = value;
    else
        out += value;
}

/// Zeroes the requested outputs of an element evaluation (the arrays only for an empty rule:
/// otherwise the first quadrature point overwrites them, see put()).
template <int M, class T>
EDN_HOST_DEVICE inline void clear_element_outputs(int outputs, T& energy, T (*gradient)[3],
                                                  T* hessian, bool arrays = true) {
    energy = T(0);
    if (!arrays) return;
    if (outputs & kGradient)
        for (int a = 0; a < M; ++a) gradient[a][0] = gradient[a][1] = gradient[a][2] = T(0);
    if (outputs & kHessian)
        for (int i = 0; i < M * M * 9; ++i) hessian[i] = T(0);
}

/// evaluate_element through the material's 9x9 dP/dF (any material).
template <int P, class T, class Material>
EDN_HOST_DEVICE inline void
evaluate_element_generic(const Material& material, const RestElement<T>& rest,
                         const QuadratureTet<T>& rule, const T (*x)[3], int outputs, bool project,
                         T& energy, T (*gradient)[3], T* hessian, bool displacement_form) {
    constexpr int m = lagrange_tet_num_nodes(P);
    clear_element_outputs<m>(outputs, energy, gradient, hessian, rule.num_points == 0);
    for (int q = 0; q < rule.num_points; ++q) {
        const bool first = q == 0;
        const auto [g, F, w] = element_point<P>(rest, rule, q, x, displacement_form);
        T psi;
        Mat3<T> Pk;
        T D[9][9];
        material.evaluate(F, psi, Pk, (outputs & kHessian) ? D : nullptr, project);
        energy += w * psi;
        if (outputs & kGradient)
            for (int a = 0; a < m; ++a)
                for (int r = 0; r < 3; ++r)
                    put(first, gradient[a][r],
                        w * (Pk.m[r][0] * g[a][0] + Pk.m[r][1] * g[a][1] + Pk.m[r][2] * g[a][2]));
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
                            put(first, block[3 * r + c],
                                A[r][3 * c] * g[b][0] + A[r][3 * c + 1] * g[b][1] +
                                    A[r][3 * c + 2] * g[b][2]);
                }
            }
    }
}

/// Evaluates one element. x: m x 3 current node positions (local order), or displacements when
/// displacement_form; outputs are written (not accumulated): energy, gradient[m][3],
/// hessian[m][m][9] (row-major 3x3 blocks).
template <int P, class T, class Material>
EDN_HOST_DEVICE inline void evaluate_element(const Material& material, const RestElement<T>& rest,
                                             const QuadratureTet<T>& rule, const T (*x)[3],
                                             int outputs, bool project, T& energy, T (*gradient)[3],
                                             T* hessian, bool displacement_form = false) {
    evaluate_element_generic<P>(material, rest, rule, x, outputs, project, energy, gradient,
                                hessian, displacement_form);
}

/// Rotated rest gradients h_a = V^T g_a of the SVD frame (V of frame.svd).
template <int M, class T>
EDN_HOST_DEVICE inline void frame_gradients(const TangentFrame<T>& frame, const T (*g)[3],
                                            T (*h)[3]) {
    const Mat3<T>& V = frame.svd.V;
    for (int a = 0; a < M; ++a)
        for (int k = 0; k < 3; ++k)
            h[a][k] = V.m[0][k] * g[a][0] + V.m[1][k] * g[a][1] + V.m[2][k] * g[a][2];
}

/// The element Hessian block of nodes (a, b) of one quadrature point from the tangent's SVD frame
/// (TangentFrame), without the 9x9 dP/dF: with h = V^T g (frame_gradients),
///   K_ab = w U Kf U^T,  Kf_ii = H_ii h_a[i] h_b[i] + sum_{j != i} c_ij h_a[j] h_b[j],
///   Kf_ij = H_ij h_a[i] h_b[j] + d_ij h_a[j] h_b[i]  (i != j),
/// c_ij = coupled, d_ij = crossed of the pair (isotropic_tangent.hpp): the same eigen-sum as the
/// generic path in about a quarter of the arithmetic. K_ba = K_ab^T. K is row-major 3x3.
template <class T>
EDN_HOST_DEVICE inline void frame_block(const TangentFrame<T>& fr, const T* ha, const T* hb, T w,
                                        T K[9]) {
    // Pair index of (i, j), i != j: (0,1) -> 0, (0,2) -> 1, (1,2) -> 2.
    T Kf[3][3];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            if (i == j) {
                const int j1 = i == 0 ? 1 : 0, j2 = i == 2 ? 1 : 2;
                Kf[i][i] = fr.H[i][i] * ha[i] * hb[i] + fr.coupled[i + j1 - 1] * ha[j1] * hb[j1] +
                           fr.coupled[i + j2 - 1] * ha[j2] * hb[j2];
            } else {
                Kf[i][j] = fr.H[i][j] * ha[i] * hb[j] + fr.crossed[i + j - 1] * ha[j] * hb[i];
            }
        }
    // W = w U Kf, then K = W U^T
    const Mat3<T>& U = fr.svd.U;
    T W[3][3];
    for (int r = 0; r < 3; ++r)
        for (int j = 0; j < 3; ++j)
            W[r][j] = w * (U.m[r][0] * Kf[0][j] + U.m[r][1] * Kf[1][j] + U.m[r][2] * Kf[2][j]);
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c)
            K[3 * r + c] = W[r][0] * U.m[c][0] + W[r][1] * U.m[c][1] + W[r][2] * U.m[c][2];
}

/// Row operator l of node a for one quadrature point (frame_row_operators), from wa = w h_a:
/// K_ab gets h_b[l] C. B_l, the coefficient of h_b[l] in Kf_ab of frame_block, has column l =
/// H[:, l] * h_a, the rest of row l crossed * h_a, the other diagonal entries coupled * h_a[l],
/// zeros elsewhere; C = U (w B_l) U^T. W = U (w B_l) is formed from B_l's 7 nonzeros only (12 +
/// 2 * 6 multiply-adds instead of 27 and 9 scalings: the compiler may not drop the zeros), then
/// C = W U^T.
template <class T>
EDN_HOST_DEVICE inline void frame_row_operator(const TangentFrame<T>& fr, const T wa[3], int l,
                                               T C[9]) {
    const Mat3<T>& U = fr.svd.U;
    T W[3][3];
    for (int j = 0; j < 3; ++j) {
        if (j == l) {
            const T b0 = fr.H[0][l] * wa[0], b1 = fr.H[1][l] * wa[1], b2 = fr.H[2][l] * wa[2];
            for (int r = 0; r < 3; ++r) W[r][j] = U.m[r][0] * b0 + U.m[r][1] * b1 + U.m[r][2] * b2;
        } else {
            // B_lj = crossed of pair (l, j) * h_a[j]; B_jj = coupled of pair (j, l) * h_a[l]
            const T blj = fr.crossed[l + j - 1] * wa[j], bjj = fr.coupled[l + j - 1] * wa[l];
            for (int r = 0; r < 3; ++r) W[r][j] = U.m[r][l] * blj + U.m[r][j] * bjj;
        }
    }
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c)
            C[3 * r + c] = W[r][0] * U.m[c][0] + W[r][1] * U.m[c][1] + W[r][2] * U.m[c][2];
}

/// The row operators of node a for one quadrature point: K_ab = sum_l h_b[l] C[l] for every
/// node b (C[l] row-major 3x3), from the tangent's SVD frame (frame_row_operator). Costs about
/// 3 of frame_block's U (...) U^T once per (a, point), then 27 multiply-adds per block.
template <class T>
EDN_HOST_DEVICE inline void frame_row_operators(const TangentFrame<T>& fr, const T* ha, T w,
                                                T C[3][9]) {
    const T wa[3] = {w * ha[0], w * ha[1], w * ha[2]};
    for (int l = 0; l < 3; ++l) frame_row_operator(fr, wa, l, C[l]);
}

/// Writes (first point) or adds one quadrature point's element Hessian, all m x m blocks, from the
/// tangent's SVD frame (frame_block; the lower blocks mirror the upper ones).
template <int M, class T>
EDN_HOST_DEVICE inline void put_frame_hessian(const TangentFrame<T>& fr, const T (*h)[3], T w,
                                              bool first, T* hessian) {
    for (int a = 0; a < M; ++a)
        for (int b = a; b < M; ++b) {
            T K[9];
            frame_block(fr, h[a], h[b], w, K);
            T* block = hessian + (a * M + b) * 9;
            T* mirror = hessian + (b * M + a) * 9;
            for (int r = 0; r < 3; ++r)
                for (int c = 0; c < 3; ++c) {
                    put(first, block[3 * r + c], K[3 * r + c]);
                    if (b != a) put(first, mirror[3 * c + r], K[3 * r + c]);
                }
        }
}

/// The element Hessian of all its points from their SVD frames, summed pair by pair (host code
/// at p >= 2, where it has the points on the stack): per node a the row operators C(a, q) of
/// every point (frame_row_operators), then K_ab = sum_q sum_l h_b[l](q) C_l(a, q) for b >= a in
/// registers, written once with its mirror K_ba = K_ab^T: about 12K multiply-adds per p = 2
/// element instead of put_frame_hessian's 21K (frame_block per pair and point, each block read
/// and written at every point), 121K instead of 279K at p = 3. CPU element stage (2 cores,
/// bench/README.md session 29): p = 2 neo-Hookean 366 -> 283 ms a frame, p = 3 2110 -> 1195.
template <int M, int Q, class T> struct FrameHessianSum {
    TangentFrame<T> frames[Q];
    T h[Q][M][3];
    T w[Q];
    int points = 0;

    void add(const TangentFrame<T>& frame, const T (*hq)[3], T wq) {
        frames[points] = frame;
        for (int a = 0; a < M; ++a)
            for (int k = 0; k < 3; ++k) h[points][a][k] = hq[a][k];
        w[points] = wq;
        ++points;
    }
    /// Writes the M x M blocks (row-major 3 x 3 each) at hessian[(a M + b) 9].
    void write(T* hessian) const {
        for (int a = 0; a < M; ++a) {
            T C[Q][3][9];
            for (int q = 0; q < points; ++q) frame_row_operators(frames[q], h[q][a], w[q], C[q]);
            for (int b = a; b < M; ++b) {
                T K[9] = {};
                for (int q = 0; q < points; ++q)
                    for (int k = 0; k < 9; ++k)
                        K[k] += h[q][b][0] * C[q][0][k] + h[q][b][1] * C[q][1][k] +
                                h[q][b][2] * C[q][2][k];
                T* block = hessian + (a * M + b) * 9;
                T* mirror = hessian + (b * M + a) * 9;
                for (int r = 0; r < 3; ++r)
                    for (int c = 0; c < 3; ++c) {
                        block[3 * r + c] = K[3 * r + c];
                        mirror[3 * c + r] = K[3 * r + c];
                    }
            }
        }
    }
};

/// Points a FrameHessianSum of order P holds (the element rules: 4 at p = 2, 14 at p = 3); rules
/// with more, and p = 1, keep put_frame_hessian.
template <int P> constexpr int kFrameSumPoints = P == 1 ? 1 : 16;

/// Where an element's points put their Hessian from their SVD frames: pair by pair after the
/// last point on the host at p >= 2 (FrameHessianSum), else each point as it comes
/// (put_frame_hessian; the device kernels).
#ifdef __CUDA_ARCH__
template <int P, class T> struct FramePointHessians {
    EDN_HOST_DEVICE explicit FramePointHessians(const QuadratureTet<T>&) {}
    static EDN_HOST_DEVICE void put(const TangentFrame<T>& frame, const T (*h)[3], T w,
                                    bool first, T* hessian) {
        put_frame_hessian<lagrange_tet_num_nodes(P)>(frame, h, w, first, hessian);
    }
    static EDN_HOST_DEVICE void finish(T*) {}
};
#else
template <int P, class T> class FramePointHessians {
public:
    static constexpr int m = lagrange_tet_num_nodes(P);
    explicit FramePointHessians(const QuadratureTet<T>& rule)
        : by_pairs_(P >= 2 && rule.num_points <= kFrameSumPoints<P>) {}
    void put(const TangentFrame<T>& frame, const T (*h)[3], T w, bool first, T* hessian) {
        if (by_pairs_)
            sum_.add(frame, h, w);
        else
            put_frame_hessian<m>(frame, h, w, first, hessian);
    }
    /// After the last point (nothing when no point put its Hessian).
    void finish(T* hessian) {
        if (by_pairs_ && sum_.points > 0) sum_.write(hessian);
    }

private:
    bool by_pairs_;
    FrameHessianSum<m, kFrameSumPoints<P>, T> sum_;
};
#endif

/// evaluate_element for the co-rotational material with the exact (optionally projected)
/// tangent, without the 9x9 dP/dF: the energy and the stress from the SVD frame
/// (evaluate_frame), the Hessian by put_frame_hessian.
template <int P, class T>
EDN_HOST_DEVICE inline void
evaluate_element(const Corotational<T>& material, const RestElement<T>& rest,
                 const QuadratureTet<T>& rule, const T (*x)[3], int outputs, bool project,
                 T& energy, T (*gradient)[3], T* hessian, bool displacement_form = false) {
    if (material.tangent != CorotationalTangent::exact) {
        evaluate_element_generic<P>(material, rest, rule, x, outputs, project, energy, gradient,
                                    hessian, displacement_form);
        return;
    }
    constexpr int m = lagrange_tet_num_nodes(P);
    clear_element_outputs<m>(outputs, energy, gradient, hessian, rule.num_points == 0);
    FramePointHessians<P, T> hessians(rule);
    for (int q = 0; q < rule.num_points; ++q) {
        const bool first = q == 0;
        const auto [g, F, w] = element_point<P>(rest, rule, q, x, displacement_form);
        CorotationalFrame<T> fr;
        energy += w * material.evaluate_frame(F, (outputs & kHessian) != 0, project, fr);
        if ((outputs & (kGradient | kHessian)) == 0) continue;
        const Mat3<T>& U = fr.svd.U;
        T h[m][3];
        frame_gradients<m>(fr, g, h);
        if (outputs & kGradient)
            for (int a = 0; a < m; ++a) {
                // f_a = w P g_a = w U diag(dpsi) h_a
                const T t0 = w * fr.dpsi[0] * h[a][0], t1 = w * fr.dpsi[1] * h[a][1],
                        t2 = w * fr.dpsi[2] * h[a][2];
                for (int r = 0; r < 3; ++r)
                    put(first, gradient[a][r], U.m[r][0] * t0 + U.m[r][1] * t1 + U.m[r][2] * t2);
            }
        if (outputs & kHessian) hessians.put(fr, h, w, first, hessian);
    }
    hessians.finish(hessian);
}

/// evaluate_element for the neo-Hookean material: energy and stress as the generic path (from
/// det F and cof F, no SVD), the Hessian, when asked for, from the tangent's SVD frame
/// (NeoHookean::tangent_frame, put_frame_hessian) instead of the 9x9 dP/dF. point_svds: the
/// SVD of F at each quadrature point when the caller has them (svd3_rotation_variant, batched
/// over elements on the CPU), else computed here.
template <int P, class T>
EDN_HOST_DEVICE inline void
evaluate_element(const NeoHookean<T>& material, const RestElement<T>& rest,
                 const QuadratureTet<T>& rule, const T (*x)[3], int outputs, bool project,
                 T& energy, T (*gradient)[3], T* hessian, bool displacement_form = false,
                 const Svd3<T>* point_svds = nullptr) {
    if ((outputs & kHessian) == 0) {
        evaluate_element_generic<P>(material, rest, rule, x, outputs, project, energy, gradient,
                                    hessian, displacement_form);
        return;
    }
    constexpr int m = lagrange_tet_num_nodes(P);
    clear_element_outputs<m>(outputs, energy, gradient, hessian, rule.num_points == 0);
    FramePointHessians<P, T> hessians(rule);
    for (int q = 0; q < rule.num_points; ++q) {
        const bool first = q == 0;
        const auto [g, F, w] = element_point<P>(rest, rule, q, x, displacement_form);
        T psi;
        Mat3<T> Pk;
        material.evaluate(F, psi, Pk, nullptr, project);
        energy += w * psi;
        if (outputs & kGradient)
            for (int a = 0; a < m; ++a)
                for (int r = 0; r < 3; ++r)
                    put(first, gradient[a][r],
                        w * (Pk.m[r][0] * g[a][0] + Pk.m[r][1] * g[a][1] + Pk.m[r][2] * g[a][2]));
        TangentFrame<T> fr;
        if (point_svds)
            material.tangent_frame_of(point_svds[q], project, fr);
        else
            material.tangent_frame(F, project, fr);
        T h[m][3];
        frame_gradients<m>(fr, g, h);
        hessians.put(fr, h, w, first, hessian);
    }
    hessians.finish(hessian);
}

/// Adds one element's Rayleigh stiffness-damping potential coefficient * Psi_lin(delta) (the
/// LINEAR elastic energy of the displacement delta over the step, with the material's Lame
/// parameters, on the element's rule), its gradient coefficient K0 delta and its Hessian
/// coefficient K0 (constant, PSD) to energy, gradient[m][3] and hessian[m][m][9] (accumulated,
/// not overwritten; the parts not in `outputs` are left alone). coefficient = beta / h. Only
/// sym(grad delta) enters, so an (infinitesimal) rigid motion over the step is not damped.
///   K0_ab[r][c] = sum_q w_q (mu (g_a . g_b) delta_rc + mu g_a[c] g_b[r] + lambda g_a[r] g_b[c])
template <int P, class T>
EDN_HOST_DEVICE inline void
add_stiffness_damping(const LameParameters<T>& lame, T coefficient, const RestElement<T>& rest,
                      const QuadratureTet<T>& rule, const T (*delta)[3], int outputs, T& energy,
                      T (*gradient)[3], T* hessian) {
    constexpr int m = lagrange_tet_num_nodes(P);
    for (int q = 0; q < rule.num_points; ++q) {
        T g[m][3];
        element_shape_gradients<P>(rest, rule.bary[q], g);
        const Mat3<T> G = element_deformation_gradient<m>(delta, g, false); // grad delta
        const T w = coefficient * rule.weight[q] * rest.abs_det;
        T eps[3][3];
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) eps[i][j] = T(0.5) * (G.m[i][j] + G.m[j][i]);
        const T tr = eps[0][0] + eps[1][1] + eps[2][2];
        T e2 = T(0);
        T stress[3][3];
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) {
                e2 += eps[i][j] * eps[i][j];
                stress[i][j] = T(2) * lame.mu * eps[i][j] + (i == j ? lame.lambda * tr : T(0));
            }
        energy += w * (lame.mu * e2 + T(0.5) * lame.lambda * tr * tr);
        if (outputs & kGradient)
            for (int a = 0; a < m; ++a)
                for (int r = 0; r < 3; ++r)
                    gradient[a][r] += w * (stress[r][0] * g[a][0] + stress[r][1] * g[a][1] +
                                           stress[r][2] * g[a][2]);
        if (outputs & kHessian)
            for (int a = 0; a < m; ++a)
                for (int b = 0; b < m; ++b) {
                    T* block = hessian + (a * m + b) * 9;
                    const T mu_dot =
                        lame.mu * (g[a][0] * g[b][0] + g[a][1] * g[b][1] + g[a][2] * g[b][2]);
                    for (int r = 0; r < 3; ++r)
                        for (int c = 0; c < 3; ++c)
                            block[3 * r + c] +=
                                w * (lame.mu * g[a][c] * g[b][r] + lame.lambda * g[a][r] * g[b][c] +
                                     (r == c ? mu_dot : T(0)));
                }
    }
}

/// Row a of an element's Hessian, K_ab for every node b (row[b]: row-major 3x3), computed on its
/// own for inline summation: the tangent in its SVD frame at every quadrature point
/// (Material::tangent_frame, projected when `project`) through node a's row operators
/// (frame_row_operators), plus `damping` times row a of the linear stiffness K0 (Rayleigh
/// stiffness damping; none when damping <= 0). Equals row a of evaluate_element_damped's Hessian.
template <int P, class T, class Material>
EDN_HOST_DEVICE inline void
element_hessian_row(const Material& material, const RestElement<T>& rest,
                    const QuadratureTet<T>& rule, const T (*x)[3], int a, bool project,
                    bool displacement_form, const LameParameters<T>& damping_lame, T damping,
                    T (*row)[9]) {
    constexpr int m = lagrange_tet_num_nodes(P);
    for (int b = 0; b < m; ++b)
        for (int k = 0; k < 9; ++k) row[b][k] = T(0);
    for (int q = 0; q < rule.num_points; ++q) {
        const auto [g, F, w] = element_point<P>(rest, rule, q, x, displacement_form);
        TangentFrame<T> fr;
        material.tangent_frame(F, project, fr);
        T h[m][3];
        frame_gradients<m>(fr, g, h);
        T C[3][9];
        frame_row_operators(fr, h[a], w, C);
        for (int b = 0; b < m; ++b)
            for (int k = 0; k < 9; ++k)
                row[b][k] += h[b][0] * C[0][k] + h[b][1] * C[1][k] + h[b][2] * C[2][k];
        if (damping > T(0)) {
            const T wd = damping * w;
            for (int b = 0; b < m; ++b) {
                const T mu_dot =
                    damping_lame.mu * (g[a][0] * g[b][0] + g[a][1] * g[b][1] + g[a][2] * g[b][2]);
                for (int r = 0; r < 3; ++r)
                    for (int c = 0; c < 3; ++c)
                        row[b][3 * r + c] += wd * (damping_lame.mu * g[a][c] * g[b][r] +
                                                   damping_lame.lambda * g[a][r] * g[b][c] +
                                                   (r == c ? mu_dot : T(0)));
            }
        }
    }
}

/// evaluate_element plus the Rayleigh stiffness damping of the element (add_stiffness_damping
/// with coefficient = beta / h, none when coefficient <= 0): `energy` gets the elastic energy
/// alone, `damping_energy` the damping potential; gradient and Hessian get both.
/// @param[in] delta  m x 3 displacement of the nodes over the step, y - x_start (local order)
template <int P, class T, class Material>
EDN_HOST_DEVICE inline void
evaluate_element_damped(const Material& material, const RestElement<T>& rest,
                        const QuadratureTet<T>& rule, const T (*x)[3], const T (*delta)[3],
                        const LameParameters<T>& damping_lame, T coefficient, int outputs,
                        bool project, T& energy, T& damping_energy, T (*gradient)[3], T* hessian,
                        bool displacement_form = false) {
    evaluate_element<P>(material, rest, rule, x, outputs, project, energy, gradient, hessian,
                        displacement_form);
    damping_energy = T(0);
    if (coefficient > T(0))
        add_stiffness_damping<P>(damping_lame, coefficient, rest, rule, delta, outputs,
                                 damping_energy, gradient, hessian);
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

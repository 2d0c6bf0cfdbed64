#pragma once
/// Symmetric quadrature rules on the reference tetrahedron (volume 1/6; weights sum to 1/6).
///
/// A rule is a small POD (points as barycentric coordinates, weights) that can be built once on
/// the host and passed to a CUDA kernel by value, or built inside a kernel: generation uses no
/// library calls and is constexpr.
///
/// Rules (points: barycentric coordinates L0..L3; x = L1, y = L2, z = L3 on the reference tet):
///   degree 1:  1 point, the centroid, weight 1/6 (Grundmann-Moeller s = 0).
///   degree 2:  4 points, the orbit of (a, a, a, b) with a = (5 - sqrt 5)/20, b = 1 - 3a,
///              weights 1/24. Source: A. H. Stroud, "Approximate Calculation of Multiple
///              Integrals", Prentice-Hall 1971, formula T3:2-1; also P. Keast, "Moderate-degree
///              tetrahedral quadrature formulas", CMAME 55 (1986) 339-348, rule 2. Derivation:
///              with sum L = 1 fixed by symmetry, exactness for L1^2 (integral 1/60) gives
///              (1/24) (3 a^2 + b^2) = 1/60, i.e. 20 a^2 - 10 a + 1 = 0.
///   degree 2s+1 for s = 1..4 (3, 5, 7, 9): Grundmann-Moeller rules with 5, 15, 35, 70 points
///              (some weights negative, which is fine for stiffness and mass assembly). Source:
///              A. Grundmann, H. M. Moeller, "Invariant integration formulas for the n-simplex by
///              combinatorial methods", SIAM J. Numer. Anal. 15 (1978) 282-290, Theorem 4: on the
///              n-simplex of volume 1/n!, with d = 2s + 1,
///                Q_s f = sum_{i=0..s} (-1)^i 2^(-2s) (d+n-2i)^d / (i! (d+n-i)!)
///                        * sum_{|beta| = s-i, beta in N^(n+1)} f((2 beta_0 + 1)/(d+n-2i), ...,
///                                                             (2 beta_n + 1)/(d+n-2i))
///              where the arguments are barycentric coordinates. The points are generated below
///              from this formula; tests check exactness on every monomial up to the degree.
/// quadrature_for_degree(d) returns the rule with the fewest points that is exact to degree d.
/// Which degree to ask for: stiffness of order p needs 2(p-1), consistent mass 2p.

#include "core/types.hpp"

namespace edn {

/// Capacity of QuadratureTet: the largest rule (Grundmann-Moeller s = 4, degree 9) has 70 points.
inline constexpr int kMaxTetQuadraturePoints = 70;
/// Highest polynomial degree quadrature_for_degree can integrate exactly.
inline constexpr int kMaxTetQuadratureDegree = 9;

/// A quadrature rule on the reference tetrahedron: sum_q weight[q] f(bary[q]) ~ integral of f.
template <class T> struct QuadratureTet {
    int num_points = 0;                      ///< points in use (0: no rule, e.g. degree too high)
    int degree = -1;                         ///< polynomials up to this degree are exact
    T bary[kMaxTetQuadraturePoints][4] = {}; ///< barycentric coordinates L0..L3 of each point
    T weight[kMaxTetQuadraturePoints] = {};  ///< weights; they sum to 1/6
};

namespace detail {

/// base^exponent for a small non-negative integer exponent (constexpr, device-safe).
EDN_HOST_DEVICE constexpr double quadrature_ipow(double base, int exponent) {
    double r = 1.0;
    for (int i = 0; i < exponent; ++i) r *= base;
    return r;
}

/// n! as a double (exact for the n <= 13 used here).
EDN_HOST_DEVICE constexpr double quadrature_factorial(int n) {
    double r = 1.0;
    for (int i = 2; i <= n; ++i) r *= i;
    return r;
}

} // namespace detail

/// The degree-1 rule: one point at the centroid, weight 1/6.
template <class T> EDN_HOST_DEVICE constexpr QuadratureTet<T> tet_quadrature_centroid() {
    QuadratureTet<T> rule{};
    rule.num_points = 1;
    rule.degree = 1;
    for (int i = 0; i < 4; ++i) rule.bary[0][i] = T(0.25);
    rule.weight[0] = T(1.0 / 6.0);
    return rule;
}

/// The 4-point degree-2 rule (Stroud T3:2-1, Keast rule 2): orbit of (a, a, a, b), weights 1/24.
template <class T> EDN_HOST_DEVICE constexpr QuadratureTet<T> tet_quadrature_degree2() {
    // a = (5 - sqrt 5) / 20, the smaller root of 20 a^2 - 10 a + 1 = 0 (see file comment);
    // written as a literal because std::sqrt is not constexpr.
    constexpr double a = 0.138196601125010515179541316563436188;
    constexpr double b = 1.0 - 3.0 * a;
    QuadratureTet<T> rule{};
    rule.num_points = 4;
    rule.degree = 2;
    for (int q = 0; q < 4; ++q) {
        for (int i = 0; i < 4; ++i) rule.bary[q][i] = T(i == q ? b : a);
        rule.weight[q] = T(1.0 / 24.0);
    }
    return rule;
}

/// A 14-point degree-5 rule with positive weights: orbits of (a, a, a, 1-3a) for two values of a
/// (4 points each) and of (b, b, 1/2-b, 1/2-b) (6 points). Six unknowns, fixed by exactness on
/// the six symmetric polynomials of degree <= 5 (degrees 0, 2, 3, 4, 4, 5 in the barycentric
/// coordinates); solved by Gauss-Newton on all 56 monomials of degree <= 5, residual 3e-17. Same
/// rule as P. Keast (CMAME 55, 1986) / Walkington's 14-point rule; tests check exactness on every
/// monomial up to degree 5 and positivity. quadrature_for_degree uses it for degrees 3..5 instead
/// of Grundmann-Moeller, whose negative weights make a sum of per-point PSD-projected tangents
/// indefinite.
template <class T> EDN_HOST_DEVICE constexpr QuadratureTet<T> tet_quadrature_degree5_positive() {
    constexpr double a1 = 0.09273525031089125;
    constexpr double a2 = 0.3108859192633013;
    constexpr double b = 0.4544962958743506;
    constexpr double w1 = 0.012248840519393678;
    constexpr double w2 = 0.018781320953002795;
    constexpr double w3 = 0.007091003462846788;
    QuadratureTet<T> rule{};
    rule.num_points = 14;
    rule.degree = 5;
    int q = 0;
    for (int orbit = 0; orbit < 2; ++orbit) {
        const double a = orbit == 0 ? a1 : a2;
        for (int p = 0; p < 4; ++p) {
            for (int i = 0; i < 4; ++i) rule.bary[q][i] = T(i == p ? 1.0 - 3.0 * a : a);
            rule.weight[q] = T(orbit == 0 ? w1 : w2);
            ++q;
        }
    }
    for (int e = 0; e < 6; ++e) {
        constexpr int kEdges[6][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};
        const int i = kEdges[e][0];
        const int j = kEdges[e][1];
        for (int k = 0; k < 4; ++k) rule.bary[q][k] = T(k == i || k == j ? b : 0.5 - b);
        rule.weight[q] = T(w3);
        ++q;
    }
    return rule;
}

/// The Grundmann-Moeller rule of index s (degree 2s+1) on the reference tetrahedron, for
/// 0 <= s <= 4 (1, 5, 15, 35, 70 points). Returns an empty rule (num_points = 0) otherwise.
template <class T>
EDN_HOST_DEVICE constexpr QuadratureTet<T> tet_quadrature_grundmann_moller(int s) {
    QuadratureTet<T> rule{};
    if (s < 0 || s > 4) return rule;
    constexpr int n = 3; // dimension
    const int d = 2 * s + 1;
    int q = 0;
    for (int i = 0; i <= s; ++i) {
        const double denom = double(d + n - 2 * i);
        const double sign = (i % 2 == 0) ? 1.0 : -1.0;
        const double w = sign * detail::quadrature_ipow(denom, d) /
                         (detail::quadrature_ipow(2.0, 2 * s) * detail::quadrature_factorial(i) *
                          detail::quadrature_factorial(d + n - i));
        const int k = s - i; // |beta|
        // All compositions beta of k into n+1 = 4 non-negative parts.
        for (int b0 = 0; b0 <= k; ++b0)
            for (int b1 = 0; b1 <= k - b0; ++b1)
                for (int b2 = 0; b2 <= k - b0 - b1; ++b2) {
                    const int b3 = k - b0 - b1 - b2;
                    rule.bary[q][0] = T((2 * b0 + 1) / denom);
                    rule.bary[q][1] = T((2 * b1 + 1) / denom);
                    rule.bary[q][2] = T((2 * b2 + 1) / denom);
                    rule.bary[q][3] = T((2 * b3 + 1) / denom);
                    rule.weight[q] = T(w);
                    ++q;
                }
    }
    rule.num_points = q;
    rule.degree = d;
    return rule;
}

/// A cheap rule of this file exact for all polynomials of degree <= d (d <= 9), with positive
/// weights up to degree 5 (the element rules: p = 3 uses degree 4); an empty
/// rule (num_points = 0) when d > kMaxTetQuadratureDegree, since kernels cannot throw.
template <class T> EDN_HOST_DEVICE constexpr QuadratureTet<T> quadrature_for_degree(int d) {
    if (d <= 1) return tet_quadrature_centroid<T>();
    if (d == 2) return tet_quadrature_degree2<T>();
    if (d > kMaxTetQuadratureDegree) return QuadratureTet<T>{};
    if (d <= 5) return tet_quadrature_degree5_positive<T>();
    return tet_quadrature_grundmann_moller<T>(d / 2); // smallest s with 2s+1 >= d
}

} // namespace edn

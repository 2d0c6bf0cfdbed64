#include "fem/small_matrix.hpp"
#include "support/random.hpp"

#include <cmath>
#include <gtest/gtest.h>
#include <random>

namespace edn {
namespace {

using test::random_matrix;

// Determinant by the Leibniz formula: an independent reference for the cofactor expansion.
double leibniz_det(const Mat3<double>& a) {
    const int perms[6][3] = {{0, 1, 2}, {1, 2, 0}, {2, 0, 1}, {0, 2, 1}, {2, 1, 0}, {1, 0, 2}};
    double s = 0;
    for (int p = 0; p < 6; ++p)
        s += (p < 3 ? 1.0 : -1.0) * a.m[0][perms[p][0]] * a.m[1][perms[p][1]] * a.m[2][perms[p][2]];
    return s;
}

TEST(FemSmallMatrix, DeterminantMatchesLeibniz) {
    std::mt19937 rng(1);
    for (int t = 0; t < 50; ++t) {
        const Mat3<double> a = random_matrix(rng);
        EXPECT_NEAR(det(a), leibniz_det(a), 1e-14);
        EXPECT_NEAR(det(transpose(a)), det(a), 1e-14);
    }
    EXPECT_DOUBLE_EQ(det(mat3_identity<double>()), 1.0);
}

TEST(FemSmallMatrix, InverseTimesMatrixIsIdentity) {
    std::mt19937 rng(2);
    for (int t = 0; t < 50; ++t) {
        const Mat3<double> a = random_matrix(rng);
        if (std::abs(det(a)) < 1e-3) continue;
        const Mat3<double> left = inverse(a) * a;
        const Mat3<double> right = a * inverse(a);
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) {
                EXPECT_NEAR(left(i, j), i == j ? 1.0 : 0.0, 1e-11);
                EXPECT_NEAR(right(i, j), i == j ? 1.0 : 0.0, 1e-11);
            }
    }
}

TEST(FemSmallMatrix, AdjugateOfSingularMatrix) {
    // Rank-2 matrix: adj(a) a = det(a) I = 0 must still hold.
    const Mat3<double> a{{{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}};
    EXPECT_NEAR(det(a), 0.0, 1e-12);
    const Mat3<double> p = adjugate(a) * a;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) EXPECT_NEAR(p(i, j), 0.0, 1e-12);
}

TEST(FemSmallMatrix, ProductsAndContractions) {
    std::mt19937 rng(3);
    const Mat3<double> a = random_matrix(rng);
    const Mat3<double> b = random_matrix(rng);
    const Vec3T<double> x = make_vec3(0.3, -1.2, 2.0);
    const Vec3T<double> y = make_vec3(-0.7, 0.1, 0.4);
    // (a b) x = a (b x), a^T x by transpose_mul, det(ab) = det a det b.
    const Vec3T<double> abx = (a * b) * x;
    const Vec3T<double> a_bx = a * (b * x);
    const Vec3T<double> atx = transpose(a) * x;
    const Vec3T<double> atx2 = transpose_mul(a, x);
    for (int i = 0; i < 3; ++i) {
        EXPECT_NEAR(abx[i], a_bx[i], 1e-14);
        EXPECT_NEAR(atx[i], atx2[i], 1e-14);
    }
    EXPECT_NEAR(det(a * b), det(a) * det(b), 1e-14);
    // a : b = tr(a^T b); x^T (a y) = a : (x y^T).
    EXPECT_NEAR(ddot(a, b), trace(transpose(a) * b), 1e-14);
    EXPECT_NEAR(dot(x, a * y), ddot(a, outer(x, y)), 1e-14);
    // Cross product is orthogonal to its factors and |x cross y|^2 = |x|^2|y|^2 - (x.y)^2.
    const Vec3T<double> c = cross(x, y);
    EXPECT_NEAR(dot(c, x), 0.0, 1e-14);
    EXPECT_NEAR(dot(c, y), 0.0, 1e-14);
    EXPECT_NEAR(dot(c, c), dot(x, x) * dot(y, y) - dot(x, y) * dot(x, y), 1e-13);
    EXPECT_NEAR(norm(make_vec3(3.0, 4.0, 12.0)), 13.0, 1e-14);
    // Columns round-trip; sym is symmetric and keeps the trace.
    const Mat3<double> cols = mat3_from_columns(column(a, 0), column(a, 1), column(a, 2));
    const Mat3<double> s = sym(a);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            EXPECT_EQ(cols(i, j), a(i, j));
            EXPECT_DOUBLE_EQ(s(i, j), s(j, i));
        }
    EXPECT_NEAR(trace(s), trace(a), 1e-15);
}

} // namespace
} // namespace edn

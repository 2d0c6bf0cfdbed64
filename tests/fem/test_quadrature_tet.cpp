#include "fem/quadrature_tet.hpp"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>

namespace edn {
namespace {

double factorial(int n) {
    double r = 1;
    for (int i = 2; i <= n; ++i) r *= i;
    return r;
}

// Exact integral of x^a y^b z^c over the reference tet: a! b! c! / (a+b+c+3)!.
double exact_monomial_integral(int a, int b, int c) {
    return factorial(a) * factorial(b) * factorial(c) / factorial(a + b + c + 3);
}

double integrate_monomial(const QuadratureTet<double>& rule, int a, int b, int c) {
    double s = 0;
    for (int q = 0; q < rule.num_points; ++q)
        s += rule.weight[q] * std::pow(rule.bary[q][1], a) * std::pow(rule.bary[q][2], b) *
             std::pow(rule.bary[q][3], c);
    return s;
}

// Largest relative error over all monomials of total degree <= degree.
double max_monomial_error(const QuadratureTet<double>& rule, int degree) {
    double worst = 0;
    for (int a = 0; a <= degree; ++a)
        for (int b = 0; a + b <= degree; ++b)
            for (int c = 0; a + b + c <= degree; ++c) {
                const double exact = exact_monomial_integral(a, b, c);
                worst =
                    std::max(worst, std::abs(integrate_monomial(rule, a, b, c) - exact) / exact);
            }
    return worst;
}

void check_rule(const QuadratureTet<double>& rule, int expected_degree, int expected_points) {
    SCOPED_TRACE(testing::Message() << "rule of degree " << expected_degree);
    ASSERT_EQ(rule.degree, expected_degree);
    ASSERT_EQ(rule.num_points, expected_points);
    double wsum = 0;
    for (int q = 0; q < rule.num_points; ++q) {
        wsum += rule.weight[q];
        double bsum = 0;
        for (int i = 0; i < 4; ++i) {
            EXPECT_GT(rule.bary[q][i], 0.0) << "point " << q << " outside the tet";
            bsum += rule.bary[q][i];
        }
        EXPECT_NEAR(bsum, 1.0, 1e-15);
    }
    EXPECT_NEAR(wsum, 1.0 / 6.0, 1e-15);
    EXPECT_LT(max_monomial_error(rule, expected_degree), 1e-13);
    // The rule is invariant under the tet's symmetries: the integral of L0^2 L1 equals that of
    // L1^2 L0, L2^2 L3 ... (all equal to 2!1!/(3+3)! = 1/360 in barycentric monomials).
    if (expected_degree >= 3) {
        for (int i = 0; i < 4; ++i)
            for (int j = 0; j < 4; ++j) {
                if (i == j) continue;
                double s = 0;
                for (int q = 0; q < rule.num_points; ++q)
                    s += rule.weight[q] * rule.bary[q][i] * rule.bary[q][i] * rule.bary[q][j];
                EXPECT_NEAR(s, 2.0 / 720.0, 1e-15);
            }
    }
}

TEST(FemQuadratureTet, CentroidAndDegree2Rules) {
    check_rule(tet_quadrature_centroid<double>(), 1, 1);
    check_rule(tet_quadrature_degree2<double>(), 2, 4);
    // Degree 2 is not degree 3: the check can fail.
    EXPECT_GT(max_monomial_error(tet_quadrature_degree2<double>(), 3), 1e-6);
    EXPECT_GT(max_monomial_error(tet_quadrature_centroid<double>(), 2), 1e-6);
}

TEST(FemQuadratureTet, GrundmannMollerRulesExactToTheirDegree) {
    const int points[5] = {1, 5, 15, 35, 70};
    for (int s = 0; s <= 4; ++s) {
        const QuadratureTet<double> rule = tet_quadrature_grundmann_moller<double>(s);
        check_rule(rule, 2 * s + 1, points[s]);
        EXPECT_GT(max_monomial_error(rule, 2 * s + 2), 1e-8) << "s = " << s;
    }
    EXPECT_EQ(tet_quadrature_grundmann_moller<double>(5).num_points, 0);
    EXPECT_EQ(tet_quadrature_grundmann_moller<double>(-1).num_points, 0);
}

TEST(FemQuadratureTet, PositiveDegree5Rule) {
    const QuadratureTet<double> rule = tet_quadrature_degree5_positive<double>();
    check_rule(rule, 5, 14);
    EXPECT_GT(max_monomial_error(rule, 6), 1e-8); // degree 5, not 6: the check can fail
    for (int q = 0; q < rule.num_points; ++q) EXPECT_GT(rule.weight[q], 0.0) << "point " << q;
    // Grundmann-Moeller s = 1, 2 have a negative weight: why the element rules avoid them.
    for (int s = 1; s <= 2; ++s) {
        const QuadratureTet<double> gm = tet_quadrature_grundmann_moller<double>(s);
        double lowest = 1;
        for (int q = 0; q < gm.num_points; ++q) lowest = std::min(lowest, gm.weight[q]);
        EXPECT_LT(lowest, 0.0) << "s = " << s;
    }
}

TEST(FemQuadratureTet, QuadratureForDegree) {
    const int expected_points[10] = {1, 1, 4, 14, 14, 14, 35, 35, 70, 70};
    for (int d = 0; d <= kMaxTetQuadratureDegree; ++d) {
        const QuadratureTet<double> rule = quadrature_for_degree<double>(d);
        EXPECT_GE(rule.degree, d);
        EXPECT_EQ(rule.num_points, expected_points[d]) << "degree " << d;
        EXPECT_LT(max_monomial_error(rule, d), 1e-13) << "degree " << d;
        if (d <= 5) {
            for (int q = 0; q < rule.num_points; ++q) EXPECT_GT(rule.weight[q], 0.0);
        }
    }
    EXPECT_EQ(quadrature_for_degree<double>(kMaxTetQuadratureDegree + 1).num_points, 0);
}

TEST(FemQuadratureTet, ConstexprAndFloat) {
    // Generation is constexpr: a rule can be a compile-time constant on the host.
    static constexpr QuadratureTet<double> rule = quadrature_for_degree<double>(5);
    static_assert(rule.num_points == 14);
    const QuadratureTet<float> rf = quadrature_for_degree<float>(6);
    float wsum = 0;
    for (int q = 0; q < rf.num_points; ++q) wsum += rf.weight[q];
    EXPECT_NEAR(wsum, 1.0f / 6.0f, 1e-6f);
}

} // namespace
} // namespace edn

#include "fem/lagrange_tet.hpp"

#include <cmath>
#include <gtest/gtest.h>
#include <random>

namespace edn {
namespace {

// Random barycentric point, including points slightly outside the tet: the bases are polynomials,
// and identities such as the partition of unity hold everywhere.
void random_barycentric(std::mt19937& rng, double L[4]) {
    std::uniform_real_distribution<double> dist(-0.2, 1.0);
    L[1] = dist(rng);
    L[2] = dist(rng);
    L[3] = dist(rng);
    L[0] = 1.0 - L[1] - L[2] - L[3];
}

// Independent reference: the Lagrange basis of node alpha (|alpha| = p) on a simplex is
// prod_i prod_{k < alpha_i} (p L_i - k) / (k + 1).
double generic_basis(int order, const int alpha[4], const double L[4]) {
    double v = 1.0;
    for (int i = 0; i < 4; ++i)
        for (int k = 0; k < alpha[i]; ++k) v *= (order * L[i] - k) / (k + 1);
    return v;
}

template <int P> void check_partition_of_unity() {
    SCOPED_TRACE(testing::Message() << "order " << P);
    using Basis = LagrangeTet<P, double>;
    std::mt19937 rng(10 + P);
    for (int t = 0; t < 100; ++t) {
        double L[4];
        random_barycentric(rng, L);
        double N[Basis::num_nodes];
        double dN[Basis::num_nodes][3];
        Basis::eval(L, N);
        Basis::grad(L, dN);
        double sum = 0, gsum[3] = {0, 0, 0};
        for (int a = 0; a < Basis::num_nodes; ++a) {
            sum += N[a];
            for (int k = 0; k < 3; ++k) gsum[k] += dN[a][k];
        }
        EXPECT_NEAR(sum, 1.0, 1e-13);
        for (int k = 0; k < 3; ++k) EXPECT_NEAR(gsum[k], 0.0, 1e-12);
    }
}

TEST(FemLagrangeTet, PartitionOfUnity) {
    check_partition_of_unity<1>();
    check_partition_of_unity<2>();
    check_partition_of_unity<3>();
}

template <int P> void check_kronecker() {
    SCOPED_TRACE(testing::Message() << "order " << P);
    using Basis = LagrangeTet<P, double>;
    for (int j = 0; j < Basis::num_nodes; ++j) {
        double L[4];
        ASSERT_TRUE(local_node_barycentric(P, j, L));
        EXPECT_NEAR(L[0] + L[1] + L[2] + L[3], 1.0, 1e-15);
        double N[Basis::num_nodes];
        Basis::eval(L, N);
        for (int i = 0; i < Basis::num_nodes; ++i)
            EXPECT_NEAR(N[i], i == j ? 1.0 : 0.0, 1e-13) << "N_" << i << " at node " << j;
    }
}

TEST(FemLagrangeTet, KroneckerAtNodes) {
    check_kronecker<1>();
    check_kronecker<2>();
    check_kronecker<3>();
}

TEST(FemLagrangeTet, CanonicalNodeOrder) {
    // Written out by hand from the project's convention (engine/mesh/node_layout.hpp).
    EXPECT_EQ(lagrange_tet_num_nodes(1), 4);
    EXPECT_EQ(lagrange_tet_num_nodes(2), 10);
    EXPECT_EQ(lagrange_tet_num_nodes(3), 20);
    const int edges[6][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};
    for (int e = 0; e < 6; ++e) {
        EXPECT_EQ(tet_edge_vertex(e, 0), edges[e][0]);
        EXPECT_EQ(tet_edge_vertex(e, 1), edges[e][1]);
    }
    double L[4];
    // p = 2, node 4 + 3 = edge (1,2) midpoint.
    ASSERT_TRUE(local_node_barycentric(2, 7, L));
    EXPECT_DOUBLE_EQ(L[0], 0.0);
    EXPECT_DOUBLE_EQ(L[1], 0.5);
    EXPECT_DOUBLE_EQ(L[2], 0.5);
    EXPECT_DOUBLE_EQ(L[3], 0.0);
    // p = 3, edge (1,3) = edge 4: nodes 12 (1/3 from vertex 1) and 13 (2/3 from vertex 1).
    ASSERT_TRUE(local_node_barycentric(3, 12, L));
    EXPECT_NEAR(L[1], 2.0 / 3.0, 1e-15);
    EXPECT_NEAR(L[3], 1.0 / 3.0, 1e-15);
    ASSERT_TRUE(local_node_barycentric(3, 13, L));
    EXPECT_NEAR(L[1], 1.0 / 3.0, 1e-15);
    EXPECT_NEAR(L[3], 2.0 / 3.0, 1e-15);
    // p = 3, node 16 + 2 = face opposite vertex 2.
    ASSERT_TRUE(local_node_barycentric(3, 18, L));
    EXPECT_NEAR(L[0], 1.0 / 3.0, 1e-15);
    EXPECT_NEAR(L[1], 1.0 / 3.0, 1e-15);
    EXPECT_DOUBLE_EQ(L[2], 0.0);
    EXPECT_NEAR(L[3], 1.0 / 3.0, 1e-15);
    // Out of range is reported, not UB.
    EXPECT_FALSE(local_node_barycentric(2, 10, L));
    EXPECT_FALSE(local_node_barycentric(4, 0, L));
    EXPECT_FALSE(local_node_barycentric(1, -1, L));
    // All nodes of one order are distinct.
    for (int p = 1; p <= 3; ++p)
        for (int i = 0; i < lagrange_tet_num_nodes(p); ++i)
            for (int j = 0; j < i; ++j) {
                int ai[4], aj[4];
                ASSERT_TRUE(local_node_multi_index(p, i, ai));
                ASSERT_TRUE(local_node_multi_index(p, j, aj));
                EXPECT_FALSE(ai[0] == aj[0] && ai[1] == aj[1] && ai[2] == aj[2] && ai[3] == aj[3]);
            }
}

template <int P> void check_against_generic_formula() {
    SCOPED_TRACE(testing::Message() << "order " << P);
    using Basis = LagrangeTet<P, double>;
    std::mt19937 rng(20 + P);
    for (int t = 0; t < 50; ++t) {
        double L[4];
        random_barycentric(rng, L);
        double N[Basis::num_nodes];
        Basis::eval(L, N);
        for (int a = 0; a < Basis::num_nodes; ++a) {
            int alpha[4];
            ASSERT_TRUE(local_node_multi_index(P, a, alpha));
            EXPECT_NEAR(N[a], generic_basis(P, alpha, L), 1e-13) << "node " << a;
        }
    }
}

TEST(FemLagrangeTet, MatchesGenericSimplexFormula) {
    check_against_generic_formula<1>();
    check_against_generic_formula<2>();
    check_against_generic_formula<3>();
}

template <int P> void check_gradients_fd() {
    SCOPED_TRACE(testing::Message() << "order " << P);
    using Basis = LagrangeTet<P, double>;
    constexpr int m = Basis::num_nodes;
    std::mt19937 rng(30 + P);
    const double h = 1e-6;
    for (int t = 0; t < 30; ++t) {
        double L[4];
        random_barycentric(rng, L);
        const double xi[3] = {L[1], L[2], L[3]};
        double dN[m][3];
        Basis::grad(L, dN);
        for (int k = 0; k < 3; ++k) {
            double xp[3] = {xi[0], xi[1], xi[2]}, xm[3] = {xi[0], xi[1], xi[2]};
            xp[k] += h;
            xm[k] -= h;
            double Lp[4], Lm[4], Np[m], Nm[m];
            reference_to_barycentric(xp, Lp);
            reference_to_barycentric(xm, Lm);
            Basis::eval(Lp, Np);
            Basis::eval(Lm, Nm);
            for (int a = 0; a < m; ++a)
                EXPECT_NEAR(dN[a][k], (Np[a] - Nm[a]) / (2 * h), 1e-7)
                    << "node " << a << " dir " << k;
        }
        // The barycentric partials, too (L treated as independent variables).
        double dNdL[m][4];
        Basis::grad_barycentric(L, dNdL);
        for (int i = 0; i < 4; ++i) {
            double Lp[4] = {L[0], L[1], L[2], L[3]}, Lm[4] = {L[0], L[1], L[2], L[3]};
            Lp[i] += h;
            Lm[i] -= h;
            double Np[m], Nm[m];
            Basis::eval(Lp, Np);
            Basis::eval(Lm, Nm);
            for (int a = 0; a < m; ++a)
                EXPECT_NEAR(dNdL[a][i], (Np[a] - Nm[a]) / (2 * h), 1e-7)
                    << "node " << a << " L" << i;
        }
    }
}

TEST(FemLagrangeTet, GradientsMatchFiniteDifferences) {
    check_gradients_fd<1>();
    check_gradients_fd<2>();
    check_gradients_fd<3>();
}

template <int P> void check_reproduces_polynomials() {
    // The order-p space contains every polynomial of degree <= p: interpolating x^i y^j z^k
    // (i+j+k <= p) at the nodes reproduces it exactly.
    SCOPED_TRACE(testing::Message() << "order " << P);
    using Basis = LagrangeTet<P, double>;
    std::mt19937 rng(40 + P);
    for (int i = 0; i <= P; ++i)
        for (int j = 0; i + j <= P; ++j)
            for (int k = 0; i + j + k <= P; ++k) {
                auto f = [&](const double L[4]) {
                    return std::pow(L[1], i) * std::pow(L[2], j) * std::pow(L[3], k);
                };
                double nodal[Basis::num_nodes];
                for (int a = 0; a < Basis::num_nodes; ++a) {
                    double La[4];
                    local_node_barycentric(P, a, La);
                    nodal[a] = f(La);
                }
                for (int t = 0; t < 10; ++t) {
                    double L[4], N[Basis::num_nodes];
                    random_barycentric(rng, L);
                    Basis::eval(L, N);
                    double v = 0;
                    for (int a = 0; a < Basis::num_nodes; ++a) v += N[a] * nodal[a];
                    EXPECT_NEAR(v, f(L), 1e-13);
                }
            }
}

TEST(FemLagrangeTet, ReproducesPolynomialsUpToOrder) {
    check_reproduces_polynomials<1>();
    check_reproduces_polynomials<2>();
    check_reproduces_polynomials<3>();
}

TEST(FemLagrangeTet, FloatInstantiation) {
    // The GPU uses T = float; the same code must give the same values to float precision.
    const float Lf[4] = {0.1f, 0.2f, 0.3f, 0.4f};
    const double Ld[4] = {0.1, 0.2, 0.3, 0.4};
    float Nf[20];
    double Nd[20];
    LagrangeTet<3, float>::eval(Lf, Nf);
    LagrangeTet<3, double>::eval(Ld, Nd);
    for (int a = 0; a < 20; ++a) EXPECT_NEAR(Nf[a], Nd[a], 1e-6);
}

} // namespace
} // namespace edn
